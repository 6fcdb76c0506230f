"""Sonnet 2 code, run unchanged with dm-sonnet 2.0.2 and with sonnet_like.

The outside probe: each probe in `tests/outside/` is code a Sonnet 2 user
writes (or Sonnet's own docstrings run), a function of the library. It runs
once with `snt` = dm-sonnet 2.0.2 and once with `snt` = sonnet_like, and
what the user would see (outputs, names, attributes, reprs, the errors
raised) must be the same. Where Sonnet raises, ours must raise the same type
(or a subclass), with Sonnet's key phrase where the probe names one.

Probes of valid code run in `test_like_dm_sonnet`, probes of mistakes in
`test_mistake_like_dm_sonnet`, so `python -m tests.parity` counts them apart.
Differences kept on purpose are named in `ON_PURPOSE` (valid code: why ours
differs), `SONNET_FAILS` (valid code dm-sonnet 2.0.2 cannot run),
`OURS_ONLY` (mistakes where ours raises and dm-sonnet computes something)
and `OTHER_ERROR` (mistakes where ours raises another type). What dm-sonnet
does is measured when the test runs, never written down: another CPU gives
other kernels (oneDNN runs channels-first convolutions that the plain CPU
kernels refuse, for one). So a table entry is a claim checked on the spot:
the probe is reported as an expected failure only once the difference it
names has been seen, and fails when it is gone. A probe that dm-sonnet
cannot run on this CPU (a kernel missing for a channels-first or dilated
convolution) is skipped: not measured.
"""

import pytest
import tensorflow as tf

from tests.outside import checkpoints
from tests.outside import distribute_functional
from tests.outside import docstrings
from tests.outside import framework
from tests.outside import functions
from tests.outside import mistakes
from tests.outside import naming
from tests.outside import nets
from tests.outside import optimizers
from tests.outside import recurrent
from tests.outside import rows
from tests.outside import subclassing
from tests.outside import surface

sonnet = pytest.importorskip("sonnet")

_SOURCES = (naming, subclassing, functions, optimizers, recurrent, nets,
            checkpoints, distribute_functional, mistakes, surface, docstrings,
            rows)

# Valid code where ours differs on purpose: probe -> why.
ON_PURPOSE: dict[str, str] = {
    **{f"{row}.unknown_batch": (
        "with an unknown batch size ours keeps the spatial output sizes "
        "static; dm-sonnet's transposed convolutions make them None.")
       for row in ("Conv1DTranspose", "Conv2DTranspose",
                   "Conv2DTranspose_valid_rate2", "Conv3DTranspose")},
    **{f"Cifar10ConvNet_NCHW_eval_local_stats.{aspect}": (
        "with NCHW ours averages over the spatial axes (BUILD_NOTES); "
        "dm-sonnet averages axes 1 and 2, so its logits layer sees the "
        "width. Seen where dm-sonnet runs NCHW convolutions on CPU "
        "(oneDNN); skipped elsewhere.")
       for aspect in ("unknown_batch", "same_seed", "variables",
                      "bfloat16", "float16")},
    "regularizer_attributes_and_repr": (
        "dm-sonnet's OffDiagonalOrthogonal calls itself 'Orthogonal' in its "
        "repr; ours names its own class."),
    "mlp_reverse_with_options": (
        "the reversed MLP's repr shows its output sizes; dm-sonnet passes a "
        "generator, so its repr shows '<generator object ...>'."),
    "doc.functional.transform_with_state": (
        "snt.functional keeps a variable's dtype (the EMA counter is int64); "
        "dm-sonnet's variable creator drops it (int32)."),
}

# Valid code dm-sonnet 2.0.2 cannot run (it raises); ours runs: probe -> why.
_FUSED_BATCH_NORM = (
    "dm-sonnet's fused NHWC batch norm casts its scale to float32: "
    "float16, float64 and bfloat16 inputs fail there; ours runs unfused.")
SONNET_FAILS: dict[str, str] = {
    **{f"{row}.{dtype}": _FUSED_BATCH_NORM
       for row in ("BatchNorm_nhwc_fused", "BatchNorm_train_then_eval",
                   "BatchNorm_nhwc_twice_then_eval",
                   "BatchNorm_test_local_stats", "Cifar10ConvNet", "ResNet",
                   "ResNet_v2_train_then_eval")
       for dtype in ("float16", "float64", "bfloat16")},
    **{f"Cifar10ConvNet_tensor_is_training.{aspect}": (
        "a boolean tensor `is_training` goes through tf.cond here; "
        "dm-sonnet's fused batch norm needs a Python bool.")
       for aspect in ("attributes", "same_seed", "variables",
                      "unknown_batch", "float16", "float64", "bfloat16")},
    **{f"Conv2DLSTM_NCHW_static_unroll.{aspect}": (
        "dm-sonnet's initial_state for NCHW is shaped as for NHWC, so its "
        "first step fails (where this CPU runs NCHW convolutions at all; "
        "skipped elsewhere).")
       for aspect in ("attributes", "same_seed", "variables")},
}


# Mistakes where ours raises and dm-sonnet computes something: probe -> why.
OURS_ONLY: dict[str, str] = {
    **{f"optimizer_float16_and_float64[{name}]": (
        f"float16 parameters with {name}'s default epsilon ({eps}), which "
        f"float16 rounds to 0: dm-sonnet's update is {broken} (the probe's "
        "gradients are not); ours names the epsilon and the parameter.")
       for name, eps, broken in (
           ("Adam", "1e-8", "NaN where a gradient is 0 and infinite where the "
            "second moment underflows (a gradient of 1e-3)"),
           ("RMSProp", "1e-10", "NaN where a gradient is 0"))},
    "dropout_is_training_none": (
        "is_training=None: dm-sonnet takes its truth (no dropout); ours asks "
        "for a bool (None is refused like the truthy string 'False')."),
    "batch_norm_is_training_none": (
        "is_training=None: dm-sonnet normalizes with the untrained moving "
        "statistics (inputs / sqrt(eps)); ours asks for a bool."),
}

# Mistakes where ours raises another type on purpose: probe -> why.
OTHER_ERROR: dict[str, str] = {
    "ExponentialMovingAverage_debiased.unknown_batch": (
        "a first update traced with an unknown batch size: ours raises a "
        "ValueError naming the module and the fix; dm-sonnet fails inside "
        "TensorFlow (UnliftableError, not a ValueError)."),
}


def _probes(mistake: bool) -> list:
  found = []
  for source in _SOURCES:
    for p in source.probes():
      if p.mistake != mistake:
        continue
      found.append(pytest.param(p, id=p.name))
  return found


def _cpu_cannot_run(theirs) -> bool:
  """dm-sonnet hit a kernel this CPU lacks (ours transposes around it)."""
  return (isinstance(theirs, framework.Raised) and
          isinstance(theirs.error, tf.errors.OpError) and
          any(text in str(theirs.error) for text in (
              "NHWC", "dilation rates larger than 1",
              "equal length strides")))


def _deliberate(p: framework.Probe, ours, theirs) -> None:
  """Checks a table's claim about `p` against what both libraries just did.

  Reports the probe as an expected failure once the named difference is
  seen; fails (the table is no longer true) when it is not.
  """
  raised = (isinstance(ours, framework.Raised),
            isinstance(theirs, framework.Raised))
  if p.name in SONNET_FAILS:
    assert raised == (False, True), (
        f"SONNET_FAILS: expected dm-sonnet to raise and ours to run; ours "
        f"{ours!r}, dm-sonnet {theirs!r}")
    pytest.xfail(SONNET_FAILS[p.name])
  if p.name in ON_PURPOSE:
    assert raised == (False, False), (
        f"ON_PURPOSE: expected both to run; ours {ours!r}, dm-sonnet "
        f"{theirs!r}")
    assert framework.differences(ours, theirs), (
        "ON_PURPOSE: ours now agrees with dm-sonnet")
    pytest.xfail(ON_PURPOSE[p.name])
  if p.name in OURS_ONLY:
    assert raised == (True, False), (
        f"OURS_ONLY: expected ours to raise and dm-sonnet to run; ours "
        f"{ours!r}, dm-sonnet {theirs!r}")
    pytest.xfail(OURS_ONLY[p.name])
  if p.name in OTHER_ERROR:
    assert raised == (True, True) and not framework.catches_like(
        ours.error, type(theirs.error)), (
            f"OTHER_ERROR: expected both to raise, ours another type; ours "
            f"{ours!r}, dm-sonnet {theirs!r}")
    pytest.xfail(OTHER_ERROR[p.name])


def _compare(p: framework.Probe) -> None:
  import sonnet_like  # pylint: disable=g-import-not-at-top
  theirs = framework.observe(sonnet, p)
  ours = framework.observe(sonnet_like, p)
  if _cpu_cannot_run(theirs) and not isinstance(ours, framework.Raised):
    pytest.skip("dm-sonnet 2.0.2 cannot run this on CPU")
  _deliberate(p, ours, theirs)
  # Valid code runs in dm-sonnet; code on which it raises is a mistake probe
  # (or, where dm-sonnet is at fault, a SONNET_FAILS entry).
  assert p.mistake or not isinstance(theirs, framework.Raised), (
      f"dm-sonnet raises on this valid-use probe: {theirs!r}")
  found = framework.differences(ours, theirs)
  assert not found, "\n".join(found[:12])
  if p.phrase is not None:
    assert isinstance(theirs, framework.Raised), "Sonnet does not raise"
    assert p.phrase in str(theirs.error), f"not Sonnet's phrase: {theirs}"
    assert p.phrase in str(ours.error), ours


@pytest.mark.parametrize("p", _probes(mistake=False))
def test_like_dm_sonnet(p):
  _compare(p)


@pytest.mark.parametrize("p", _probes(mistake=True))
def test_mistake_like_dm_sonnet(p):
  _compare(p)


def test_probe_tables_name_probes():
  names = [p.name for source in _SOURCES for p in source.probes()]
  assert len(names) == len(set(names)), "probe names must be unique"
  tables = [ON_PURPOSE, SONNET_FAILS, OURS_ONLY, OTHER_ERROR]
  listed = [name for table in tables for name in table]
  assert len(listed) == len(set(listed)) and set(listed) <= set(names)
