"""Each public module of both libraries on the same inputs and weights.

Every row of `tests/descriptors.py` is built twice: as written (sonnet_like)
and with the same code run against dm-sonnet 2.0.2 (the row's `snt` swapped
for `sonnet`). Both are called on the same input; dm-sonnet's variables then
get our values (matched by name), and the outputs, variable names, shapes and
dtypes must agree.

Rows dm-sonnet cannot run eagerly on CPU (channels-first and dilated
transposed convolutions) run there under XLA. `test_signatures.DIFFERENCES`
lists deliberate signature differences; `KNOWN_GAPS` rows that still differ
(each a candidate for a fix), `ROWS_ON_PURPOSE` rows that differ on purpose
and `SONNET_FAILS` rows dm-sonnet 2.0.2 cannot run. `python -m tests.parity`
counts what agrees.

The same mistakes (`tests/error_cases.py`) are made with both libraries;
dm-sonnet's side runs in a child process (`tests/sonnet_process.py`), since
on some CPUs a kernel given bad input aborts the process. Which
`tf.errors.OpError` a kernel raises depends on the machine, so no test names
it (`framework.catches_like`), and ours must raise before any kernel sees
the bad input (`framework.from_kernel`).
"""

import numpy as np
import pytest
import tensorflow as tf

from tests import descriptors
from tests import error_cases
from tests import sonnet_process
from tests import test_signatures
from tests.outside import framework
from tests.outside import naming

sonnet = pytest.importorskip("sonnet")

# Row name -> what differs. Rows here must still differ (an xfail that
# passes fails the run), so the list stays true.
KNOWN_GAPS: dict[str, str] = {}

# Row name -> why it differs on purpose (strict xfails too).
ROWS_ON_PURPOSE: dict[str, str] = {
    "Cifar10ConvNet_NCHW_eval_local_stats": (
        "with NCHW ours averages over the spatial axes; dm-sonnet 2.0.2 "
        "averages axes 1 and 2 in every layout (channels and height), so its "
        "logits layer sees the width: other weight shapes."),
}


# Row name -> why dm-sonnet 2.0.2 cannot run it (a TypeError or ValueError)
# while ours does.
SONNET_FAILS: dict[str, str] = {
    "Conv2DLSTM_NCHW_static_unroll": (
        "dm-sonnet's initial_state for NCHW is shaped as for NHWC "
        "([B, C, W, out] instead of [B, out, H, W]): its first step fails."),
    "Cifar10ConvNet_tensor_is_training": (
        "a boolean tensor `is_training`/`test_local_stats` goes through "
        "tf.cond here; dm-sonnet's fused batch norm needs a Python bool."),
}


def _as_sonnet(fn):
  """`fn` (a descriptor lambda) with its global `snt` bound to dm-sonnet."""
  return framework.as_library(fn, sonnet)


def _example(d):
  x = np.random.default_rng(0).normal(size=d.shape)
  return tf.constant(x, dtype=d.dtype)


def _variables(module):
  try:
    return list(getattr(module, "variables", ()))
  except ValueError:  # Sonnet raises for modules with no variables.
    return []


def _rows():
  rows = []
  for d in descriptors.DESCRIPTORS + descriptors.SIDE_BY_SIDE_ROWS:
    marks = ()
    reason = KNOWN_GAPS.get(d.name) or ROWS_ON_PURPOSE.get(d.name)
    if reason:
      marks = pytest.mark.xfail(reason=reason, strict=True)
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
    try:
      call_theirs(theirs, x)  # Builds dm-sonnet's module.
    except tf.errors.OpError:
      # No CPU kernel for channels-first or dilated transposed convolutions;
      # XLA has them (ours transposes around the op instead, BUILD_NOTES).
      call_theirs = tf.function(call_theirs, jit_compile=True,
                                autograph=False)
      call_theirs(theirs, x)
  except (TypeError, ValueError) as e:
    assert d.name in SONNET_FAILS, f"dm-sonnet 2.0.2 fails here: {e!r}"
    return
  assert d.name not in SONNET_FAILS, "dm-sonnet runs this row now"
  mine, reference = _variables(ours), _variables(theirs)
  assert [v.name for v in mine] == [v.name for v in reference]
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
  names = {d.name for d in
           descriptors.DESCRIPTORS + descriptors.SIDE_BY_SIDE_ROWS}
  assert len(names) == len(descriptors.DESCRIPTORS +
                           descriptors.SIDE_BY_SIDE_ROWS)
  assert set(KNOWN_GAPS) | set(SONNET_FAILS) | set(ROWS_ON_PURPOSE) <= names
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


@pytest.fixture(scope="module")
def dm_sonnet_process():
  """dm-sonnet runs the cases in a child: its kernels may abort a process."""
  process = sonnet_process.SonnetProcess()
  yield process
  process.close()


@pytest.mark.parametrize("case", _error_rows())
def test_same_error_as_dm_sonnet(case, dm_sonnet_process):
  import sonnet_like as snt  # pylint: disable=g-import-not-at-top
  theirs = dm_sonnet_process.outcome(case.name)
  our_phase, ours = _outcome(snt, case)
  assert not framework.from_kernel(ours), (
      f"ours let the bad input reach a TensorFlow kernel (on some CPUs a "
      f"kernel aborts the process instead): {ours!r}")
  if case.name in error_cases.OURS_ONLY:
    assert theirs.phase is None, f"Sonnet raises now: {theirs!r}"
    assert isinstance(ours, (ValueError, TypeError)), ours
    assert case.owner in str(ours), ours
    return
  if case.name in error_cases.SONNET_ONLY:
    assert theirs.phase is not None, "Sonnet runs now"
    assert ours is None, f"ours raises now: {ours!r}"
    return
  if theirs.phase is None:
    assert ours is None, f"only ours raises: {ours!r}"
    return
  assert ours is not None, f"Sonnet: {theirs!r}; ours does not raise"
  if theirs.crashed:
    # A kernel aborted dm-sonnet's process: ours raises a Python error.
    assert isinstance(ours, (ValueError, TypeError)), ours
  elif case.name in error_cases.OTHER_TYPE:
    assert not framework.catches_like(ours, theirs.error), "now the same type"
    assert isinstance(ours, (ValueError, TypeError)), ours
  elif case.name in error_cases.EARLIER and issubclass(
      theirs.error, tf.errors.OpError):
    assert isinstance(ours, ValueError), ours  # An argument check.
  else:
    assert framework.catches_like(ours, theirs.error), (
        f"Sonnet: {theirs!r}; ours {type(ours).__name__}: {ours}")
  if case.name in error_cases.EARLIER:
    assert (our_phase, theirs.phase) == ("build", "use")
  else:
    assert our_phase == theirs.phase
  if case.phrase is not None:
    if not theirs.crashed:
      assert case.phrase in theirs.message, f"not Sonnet's phrase: {theirs}"
    assert case.phrase in str(ours), ours
  assert case.owner in str(ours), ours


def test_error_tables_name_cases():
  names = [c.name for c in error_cases.CASES]
  assert len(names) == len(set(names))
  tables = (error_cases.EARLIER, error_cases.OURS_ONLY,
            error_cases.OTHER_TYPE, error_cases.SONNET_ONLY)
  listed = [name for table in tables for name in table]
  assert len(listed) == len(set(listed)) and set(listed) <= set(names)


# --- Names, scopes, repr (both libraries, same code). ---


def _both():
  import sonnet_like as snt  # pylint: disable=g-import-not-at-top
  return snt, sonnet


def test_eager_names_are_not_numbered():
  """Eagerly a second top-level `Linear()` is `linear/` too (TF2 eager name
  scopes are not made unique), so their variables share names."""
  names = {}
  for lib in _both():
    a, b = lib.Linear(2), lib.Linear(2)
    names[lib] = (a.name, b.name, a.name_scope.name, b.name_scope.name)
  ours, theirs = names.values()
  assert theirs == ("linear", "linear", "linear/", "linear/")
  assert ours == theirs


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
  module = naming.traced_module(lib, "scoped")
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


@pytest.mark.parametrize("make", [
    lambda lib: lib.optimizers.SGD(0.1),
    lambda lib: lib.optimizers.Momentum(0.1, 0.9),
    lambda lib: lib.optimizers.Adam(0.1),
    lambda lib: lib.optimizers.RMSProp(0.1, momentum=0.5, centered=True),
], ids=["sgd", "momentum", "adam", "rmsprop_centered"])
def test_optimizer_slots_sparse_and_missing_updates_match(make):
  """Slot names, shapes, dtypes; float64, IndexedSlices and None updates."""
  results = []
  for lib in _both():
    optimizer = make(lib)
    p = tf.Variable(np.ones([3, 2], np.float32), name="p")
    q = tf.Variable(np.ones([4], np.float64), name="q")
    optimizer.apply([tf.ones([3, 2]), tf.ones([4], tf.float64)], [p, q])
    sparse = tf.IndexedSlices(tf.ones([1, 2]), tf.constant([1]),
                              tf.constant([3, 2]))
    optimizer.apply([sparse, None], [p, q])
    slots = [(v.name, v.shape.as_list(), v.dtype, v.trainable)
             for v in _variables(optimizer)]
    results.append((slots, p.numpy().tolist(), q.numpy().tolist()))
  assert results[0] == results[1]


@pytest.mark.parametrize("make", [
    "RandomNormal(seed=3)", "TruncatedNormal(1., 2., seed=3)",
    "RandomUniform(-1., 2., seed=3)", "VarianceScaling(seed=3)",
    "VarianceScaling(2., 'fan_avg', 'uniform', seed=3)",
    "VarianceScaling(1., 'fan_out', 'normal', seed=3)",
    "Orthogonal(gain=2., seed=3)",
])
def test_seeded_initializers_give_the_same_values(make):
  values = []
  for lib in _both():
    initializer = eval(f"lib.initializers.{make}")  # pylint: disable=eval-used
    tf.random.set_seed(0)
    values.append(initializer([6, 5], tf.float32).numpy())
  np.testing.assert_array_equal(values[0], values[1])


def test_metric_without_value_can_be_created():
  """Item 4: a Metric subclass defining initialize/update/reset only."""
  for lib in _both():

    class Counter(lib.Metric):

      def initialize(self, value):
        del value

      def update(self, value):
        del value

      def reset(self):
        pass

    counter = Counter(name="counter")
    counter.update(1.)
    assert counter.name == "counter", lib
