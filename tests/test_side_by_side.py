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


def test_mixed_precision_outputs_are_float32_as_in_sonnet():
  """dm-sonnet 2.0.2 casts a `modes` call's outputs back to float32; so do we
  (tests/test_mixed_precision.py compares the cases side by side)."""
  import sonnet_like as snt  # pylint: disable=g-import-not-at-top
  dtypes = {}
  for lib in (snt, sonnet):
    layer = lib.Linear(2, name="half")
    call = lib.mixed_precision.modes([tf.float32, tf.float16])(layer.__call__)
    with lib.mixed_precision.scope(tf.float16):
      call(tf.ones([1, 3]))  # First call: full precision.
      dtypes[lib] = call(tf.ones([1, 3])).dtype
    lib.mixed_precision.disable()
  assert dtypes == {snt: tf.float32, sonnet: tf.float32}


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


# --- Names, scopes, repr (both libraries, same code). ---


def _both():
  import sonnet_like as snt  # pylint: disable=g-import-not-at-top
  return snt, sonnet


def test_eager_numbering_differs_on_purpose():
  """Ours numbers a second top-level `Linear()` (BUILD_NOTES); Sonnet gives
  both one name, so their variables share names."""
  names = {}
  for lib in _both():
    a, b = lib.Linear(2), lib.Linear(2)
    names[lib] = (a.name, b.name, a.name_scope.name, b.name_scope.name)
  ours, theirs = names.values()
  assert theirs == ("linear", "linear", "linear/", "linear/")
  assert ours == ("linear", "linear_1", "linear/", "linear_1/")


def test_mlp_layer_names_default_and_reversed():
  seen = {}
  # pylint: disable=protected-access
  for lib in _both():
    mlp = lib.nets.MLP([2, 3])
    layers = [layer.name for layer in mlp._layers]
    mlp(tf.ones([1, 4]))
    reverse = mlp.reverse()
    reverse(tf.ones([1, 3]))
    seen[lib] = (mlp.name, layers, reverse.name,
                 [layer.name for layer in reverse._layers],
                 [v.name for v in reverse.variables],
                 [v.name for v in mlp.variables])
  ours, theirs = seen.values()
  assert ours == theirs


def _traced_op_names(lib):
  class Scoped(lib.Module):

    @tf.function
    def __call__(self, x):
      return tf.identity(x * 2., name="out")

  module = Scoped(name="scoped")
  concrete = module.__call__.get_concrete_function(tf.TensorSpec([1]))
  module(tf.ones([1]))  # The polymorphic function too.
  return [op.name for op in concrete.graph.get_operations()
          if op.type not in ("Placeholder",)]


def test_tf_function_call_enters_the_module_scope():
  ours, theirs = (_traced_op_names(lib) for lib in _both())
  assert "scoped/out" in theirs
  assert ours == theirs


def test_variable_names_in_outer_scopes_and_nested_modules():
  seen = {}
  for lib in _both():

    class Outer(lib.Module):

      def __init__(self):
        super().__init__()
        self.inner = lib.Linear(2)

      def __call__(self, x):
        return self.inner(x)

    with tf.name_scope("outer_scope"):
      linear = lib.Linear(2)
      linear(tf.ones([1, 2]))
    outer = Outer()
    outer(tf.ones([1, 2]))
    gru = lib.GRU(3)
    gru(tf.ones([1, 2]), gru.initial_state(1))
    seen[lib] = [[v.name for v in m.variables] for m in (linear, outer, gru)]
    seen[lib].append([linear.name_scope.name, outer.inner.name_scope.name])
  ours, theirs = seen.values()
  assert ours == theirs


def _repr_modules(lib):
  class Wildcard(lib.Module):

    def __init__(self, *args, name=None, **kwargs):
      del args, kwargs
      super().__init__(name=name)

  return [
      lib.Linear(3),
      lib.Linear(3, with_bias=False, name="named"),
      lib.Reshape((-1, 2), preserve_dims=2),
      lib.nets.MLP([100] * 12),  # 79 characters: one line.
      lib.nets.MLP([100] * 20, activate_final=True),  # Wider: one per line.
      lib.Conv2D(3, 3, stride=2, padding="VALID", with_bias=False,
                 data_format="NCHW", name="a_rather_long_convolution_name"),
      lib.Sequential([lib.Linear(2), tf.nn.relu]),
      Wildcard(1, (2, 3), name="w", extra=[4] * 40),
      Wildcard("x"),
  ]


def test_repr_of_short_long_and_wildcard_arguments():
  ours, theirs = ([repr(m) for m in _repr_modules(lib)] for lib in _both())
  assert any("\n" in r for r in theirs)  # The long layout is exercised.
  assert ours == theirs


# --- once ---


class _CallableObject:

  def __init__(self):
    self.calls = 0

  def __call__(self):
    self.calls += 1


def test_once_wrapper_exposes_what_sonnet_exposes():
  def build():
    """Doc."""

  for lib in _both():
    wrapped = lib.once(build)
    assert wrapped.__snt_once_wrapped__ is build, lib
    assert wrapped.__wrapped__ is build, lib
    assert (wrapped.__name__, wrapped.__qualname__, wrapped.__doc__) == (
        build.__name__, build.__qualname__, "Doc."), lib


def test_once_wraps_callables_without_a_qualname():
  import functools  # pylint: disable=g-import-not-at-top
  for lib in _both():
    target = _CallableObject()
    wrapped = lib.once(target)
    wrapped()
    wrapped()
    calls = []
    partial = lib.once(functools.partial(calls.append, 1))
    partial()
    partial()
    assert (target.calls, calls) == (1, [1]), lib


# --- optimizers and deterministic initializers: same numbers. ---


@pytest.mark.parametrize("make", [
    lambda lib: lib.optimizers.SGD(0.1),
    lambda lib: lib.optimizers.Momentum(0.1, 0.9),
    lambda lib: lib.optimizers.Momentum(0.1, 0.9, use_nesterov=True),
    lambda lib: lib.optimizers.Adam(0.1),
    lambda lib: lib.optimizers.RMSProp(0.1),
    lambda lib: lib.optimizers.RMSProp(0.1, momentum=0.5, centered=True),
], ids=["sgd", "momentum", "nesterov", "adam", "rmsprop", "rmsprop_centered"])
def test_optimizer_steps_match(make):
  rng = np.random.default_rng(0)
  grads = [rng.normal(size=(3, 2)).astype(np.float32) for _ in range(3)]
  results = []
  for lib in _both():
    optimizer = make(lib)
    parameter = tf.Variable(np.ones([3, 2], np.float32), name="p")
    for g in grads:
      optimizer.apply([tf.constant(g)], [parameter])
    results.append(parameter.numpy())
  np.testing.assert_allclose(results[0], results[1], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("make", [
    lambda lib: lib.initializers.Zeros(),
    lambda lib: lib.initializers.Ones(),
    lambda lib: lib.initializers.Constant(2.5),
    lambda lib: lib.initializers.Identity(gain=3.),
], ids=["zeros", "ones", "constant", "identity"])
@pytest.mark.parametrize("shape,dtype", [([3, 4], tf.float32),
                                         ([2, 3, 3], tf.float64)])
def test_deterministic_initializers_match(make, shape, dtype):
  ours, theirs = (make(lib)(shape, dtype) for lib in _both())
  assert (ours.shape, ours.dtype) == (theirs.shape, theirs.dtype)
  np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
