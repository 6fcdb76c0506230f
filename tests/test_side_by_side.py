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
