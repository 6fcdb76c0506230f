"""Each public module of both libraries on the same inputs and weights.

Every row of `tests/descriptors.py` is built twice: as written (sonnet_like)
and with the same code run against dm-sonnet 2.0.2 (the row's `snt` swapped
for `sonnet`). Both are called on the same input; dm-sonnet's variables then
get our values (matched by name), and the outputs, variable names, shapes and
dtypes must agree.

`test_signatures.DIFFERENCES` lists deliberate differences; `KNOWN_GAPS`
lists rows that still differ and why (each a candidate for a fix).
"""

import re
import types

import numpy as np
import pytest
import tensorflow as tf

from tests import descriptors
from tests import error_cases
from tests import test_signatures

sonnet = pytest.importorskip("sonnet")

# Row name -> what differs. Rows here must still differ (an xfail that
# passes fails the run), so the list stays true.
KNOWN_GAPS: dict[str, str] = {
    "CrossReplicaBatchNorm_nhwc_train_then_eval": (
        "after one training step the evaluation output differs by ~3% from "
        "dm-sonnet's (moving statistics differ; ours follow BUILD_NOTES' "
        "exact all-reduced variance). Not yet traced to the exact term."),
}


def _as_sonnet(fn):
  """`fn` (a descriptor lambda) with its global `snt` bound to dm-sonnet."""
  if not isinstance(fn, types.FunctionType):
    return fn
  scope = dict(fn.__globals__)
  scope["snt"] = sonnet
  return types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__,
                            fn.__closure__)


def _example(d):
  x = np.random.default_rng(0).normal(size=d.shape)
  return tf.constant(x, dtype=d.dtype)


def _variables(module):
  try:
    return list(module.variables)
  except ValueError:  # Sonnet raises for modules with no variables.
    return []


def _unnumbered(name: str) -> str:
  # Our module names are unique (`linear`, `linear_1`); dm-sonnet may give
  # two modules one name, or number them differently (a deliberate
  # difference, see BUILD_NOTES). Names are compared without the numbers.
  return re.sub(r"_\d+(?=/)", "", name)


def _rows():
  rows = []
  for d in descriptors.DESCRIPTORS:
    marks = ()
    if d.name in KNOWN_GAPS:
      marks = pytest.mark.xfail(reason=KNOWN_GAPS[d.name], strict=True)
    rows.append(pytest.param(d, id=d.name, marks=marks))
  return rows


@pytest.mark.parametrize("d", _rows())
def test_same_as_dm_sonnet(d):
  x = _example(d)
  tf.random.set_seed(0)
  ours = d.create()
  try:
    theirs = _as_sonnet(d.create)()
  except AttributeError as e:
    pytest.skip(f"not in dm-sonnet 2.0.2: {e}")
  call_ours = d.call
  call_theirs = _as_sonnet(d.call)
  call_ours(ours, x)
  try:
    call_theirs(theirs, x)  # Builds dm-sonnet's module.
  except (tf.errors.OpError, TypeError) as e:
    # dm-sonnet cannot run this row here: channels-first kernels missing on
    # CPU, or a tensor `is_training` (deliberate differences, BUILD_NOTES).
    pytest.skip(f"dm-sonnet 2.0.2 fails here: {type(e).__name__}")
  mine, reference = _variables(ours), _variables(theirs)
  assert ([_unnumbered(v.name) for v in mine] ==
          [_unnumbered(v.name) for v in reference])
  for variable, other in zip(mine, reference):
    assert (variable.shape, variable.dtype) == (other.shape, other.dtype), (
        variable.name)
    other.assign(variable)
  # Fresh calls from the same weights (stateful modules have updated both the
  # same way above only if they agree: compare again from here).
  tf.random.set_seed(1)
  out_ours = call_ours(ours, x)
  tf.random.set_seed(1)
  out_theirs = call_theirs(theirs, x)
  tf.nest.map_structure(
      lambda a, b: np.testing.assert_allclose(np.asarray(a), np.asarray(b),
                                              rtol=1e-4, atol=1e-5),
      out_ours, out_theirs)


def test_known_gaps_name_rows():
  names = {d.name for d in descriptors.DESCRIPTORS}
  assert set(KNOWN_GAPS) <= names
  assert isinstance(test_signatures.DIFFERENCES, dict)


def test_mixed_precision_output_dtype_differs_on_purpose():
  """dm-sonnet 2.0.2 casts a `modes` call's outputs back to float32; ours
  stay in the compute dtype (BUILD_NOTES). Measured, not assumed: if either
  side changes, this fails and the note must be revisited."""
  import sonnet_like as snt  # pylint: disable=g-import-not-at-top
  dtypes = {}
  for lib in (snt, sonnet):
    layer = lib.Linear(2, name="half")
    call = lib.mixed_precision.modes([tf.float32, tf.float16])(layer.__call__)
    with lib.mixed_precision.scope(tf.float16):
      call(tf.ones([1, 3]))  # First call: full precision.
      dtypes[lib] = call(tf.ones([1, 3])).dtype
    lib.mixed_precision.disable()
  assert dtypes == {snt: tf.float16, sonnet: tf.float32}


# --- The same mistakes (tests/error_cases.py). ---


def _outcome(snt_lib, case):
  """(phase, exception): where `case` raised ("build"/"use") and what."""
  try:
    obj = case.build(snt_lib)
  except Exception as e:  # pylint: disable=broad-except
    return "build", e
  if case.use is None:
    return None, None
  try:
    case.use(snt_lib, obj)
  except Exception as e:  # pylint: disable=broad-except
    return "use", e
  return None, None


def _error_rows():
  return [pytest.param(c, id=c.name) for c in error_cases.CASES]


@pytest.mark.parametrize("case", _error_rows())
def test_same_error_as_dm_sonnet(case):
  import sonnet_like as snt  # pylint: disable=g-import-not-at-top
  their_phase, theirs = _outcome(sonnet, case)
  our_phase, ours = _outcome(snt, case)
  if case.name in error_cases.OURS_ONLY:
    assert theirs is None, f"Sonnet raises now: {theirs!r}"
    assert isinstance(ours, ValueError) and case.owner in str(ours), ours
    return
  if theirs is None:
    assert ours is None, f"only ours raises: {ours!r}"
    return
  assert ours is not None, f"Sonnet raises {theirs!r}; ours does not"
  if case.name in error_cases.OTHER_TYPE:
    assert not isinstance(ours, type(theirs)), "now the same type"
    assert isinstance(ours, ValueError), ours
  elif case.name in error_cases.EARLIER and isinstance(
      theirs, tf.errors.OpError):
    assert isinstance(ours, ValueError), ours  # An argument check.
  else:
    assert isinstance(ours, type(theirs)), (
        f"Sonnet raises {type(theirs).__name__}, ours "
        f"{type(ours).__name__}: {ours}")
  if case.name in error_cases.EARLIER:
    assert (our_phase, their_phase) == ("build", "use")
  else:
    assert our_phase == their_phase
  if case.phrase is not None:
    assert case.phrase in str(theirs), f"not Sonnet's phrase: {theirs}"
    assert case.phrase in str(ours), ours
  assert case.owner in str(ours), ours


def test_error_tables_name_cases():
  names = [c.name for c in error_cases.CASES]
  assert len(names) == len(set(names))
  listed = (set(error_cases.EARLIER) | set(error_cases.OURS_ONLY) |
            set(error_cases.OTHER_TYPE))
  assert listed <= set(names)
