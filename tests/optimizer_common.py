"""Tests shared by every optimizer; each tests/optimizers/test_<optimizer>.py runs them.

A test file imports the `test_*` functions below (pytest collects them there)
and defines a `case` fixture returning a `Case` for its optimizer.
"""

import contextlib
import dataclasses
import functools
from typing import Any, Callable

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt

# tf.Module's property: () for an optimizer without state (SGD), where
# Sonnet's (and ours) raises.
all_variables = tf.Module.variables.fget

STEPS = 4


@dataclasses.dataclass
class Case:
  """How to build one optimizer configuration and its references.

  Attributes:
    make: Builds a fresh optimizer of ours.
    numpy_rule: `numpy_rule(params, grads_per_step) -> params`, the
      published update rule in float64 NumPy, applied step by step.
    sonnet: Builds the same optimizer from dm-sonnet 2.0.2.
    keras: Builds the equivalent Keras optimizer.
    keras_rtol: Tolerance against Keras (its epsilon placement may differ).
    stateful: Whether the optimizer keeps per-parameter slots.
    distribute: Whether to run the (slow) tf.distribute tests; one
      configuration per optimizer is enough.
  """
  make: Callable[[], snt.Optimizer]
  numpy_rule: Callable[[list[np.ndarray], list[list[np.ndarray]]],
                       list[np.ndarray]]
  sonnet: Callable[[], Any]
  keras: Callable[[], Any]
  keras_rtol: float = 1e-5
  stateful: bool = True
  distribute: bool = True


def _values(shapes=((3, 2), (2,)), seed=0):
  rng = np.random.default_rng(seed)
  params = [rng.normal(size=s).astype(np.float32) for s in shapes]
  grads = [[rng.normal(size=s).astype(np.float32) for s in shapes]
           for _ in range(STEPS)]
  return params, grads


def _run(apply, params, grads):
  variables = [tf.Variable(p) for p in params]
  for step in grads:
    apply([tf.constant(g) for g in step], variables)
  return [v.numpy() for v in variables]


def _assert_all_close(actual, expected, rtol=1e-6, atol=1e-6):
  assert len(actual) == len(expected)
  for a, e in zip(actual, expected):
    np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=rtol,
                               atol=atol)


def test_matches_numpy_reference(case):
  params, grads = _values()
  ours = _run(case.make().apply, params, grads)
  _assert_all_close(ours, case.numpy_rule(params, grads), rtol=1e-5,
                    atol=1e-6)


def test_matches_sonnet(case):
  params, grads = _values()
  ours = _run(case.make().apply, params, grads)
  theirs = _run(case.sonnet().apply, params, grads)
  _assert_all_close(ours, theirs, rtol=1e-6, atol=1e-7)


def test_matches_keras(case):
  params, grads = _values()
  ours = _run(case.make().apply, params, grads)
  keras_optimizer = case.keras()
  theirs = _run(lambda g, p: keras_optimizer.apply_gradients(zip(g, p)),
                params, grads)
  _assert_all_close(ours, theirs, rtol=case.keras_rtol, atol=1e-6)


def test_variable_names_match_sonnet(case):
  parameters = [tf.Variable(tf.ones([2]), name="w"),
                tf.Variable(tf.ones([]), name="b")]
  updates = [tf.ones([2]), tf.ones([])]
  ours, theirs = case.make(), case.sonnet()
  ours.apply(updates, parameters)
  theirs.apply(updates, parameters)
  names = lambda m: sorted(v.name for v in all_variables(m))
  assert names(ours) == names(theirs)
  assert all(not v.trainable for v in all_variables(ours)
             if v is not getattr(ours, "learning_rate", None))


def test_none_update_leaves_parameter_alone(case):
  a, b = tf.Variable([1., 2.]), tf.Variable(3.)
  opt = case.make()
  opt.apply([None, tf.constant(1.)], [a, b])
  opt.apply([None, tf.constant(1.)], [a, b])
  np.testing.assert_array_equal(a.numpy(), [1., 2.])
  assert b.numpy() != 3.


def test_sparse_update_matches_dense(case):
  table = np.random.default_rng(1).normal(size=(4, 3)).astype(np.float32)
  ids = tf.constant([0, 2, 1, 2, 3, 0])  # Duplicates; every row touched.
  sparse, dense = tf.Variable(table), tf.Variable(table)
  sparse_opt, dense_opt = case.make(), case.make()
  for step in range(STEPS):
    target = tf.constant(float(step))
    for variable, opt, densify in ((sparse, sparse_opt, False),
                                   (dense, dense_opt, True)):
      with tf.GradientTape() as tape:
        loss = tf.reduce_sum((tf.gather(variable, ids) - target)**2)
      grad = tape.gradient(loss, variable)
      assert isinstance(grad, tf.IndexedSlices)
      opt.apply([tf.convert_to_tensor(grad) if densify else grad], [variable])
  np.testing.assert_allclose(sparse.numpy(), dense.numpy(), rtol=1e-5,
                             atol=1e-6)
  assert not np.allclose(sparse.numpy(), table)


def test_sparse_update_leaves_other_rows_and_slots_alone(case):
  table = tf.Variable(tf.ones([4, 2]))
  opt = case.make()
  for _ in range(2):
    opt.apply([tf.IndexedSlices(tf.ones([2, 2]), tf.constant([1, 1]),
                                tf.constant([4, 2]))], [table])
  values = table.numpy()
  np.testing.assert_array_equal(values[[0, 2, 3]], 1.)
  assert np.all(values[1] != 1.)
  for slot in all_variables(opt):
    if slot.shape == (4, 2):
      np.testing.assert_array_equal(slot.numpy()[[0, 2, 3]], 0.)


@pytest.mark.parametrize("mode", ["tf_function", "xla"])
def test_compiled_matches_eager(case, mode):
  params, grads = _values()
  eager = _run(case.make().apply, params, grads)
  opt = case.make()
  compiled = tf.function(opt.apply, jit_compile=(mode == "xla"))
  # The first call, which creates the slots, happens inside the function.
  _assert_all_close(_run(compiled, params, grads), eager, rtol=1e-5)


def test_compiled_step_does_not_retrace(case):
  params, grads = _values()
  variables = [tf.Variable(p) for p in params]
  opt = case.make()
  traces = []

  @tf.function
  def step(updates):
    traces.append(1)
    opt.apply(updates, variables)

  for g in grads:
    step([tf.constant(x) for x in g])
  assert len(traces) <= 2  # tf.function traces twice when creating slots.


def test_checkpoint_mid_training_continues_identically(case, tmp_path):
  params, grads = _values()
  variables = [tf.Variable(p) for p in params]
  opt = case.make()
  for g in grads[:2]:
    opt.apply(g, variables)
  path = tf.train.Checkpoint(opt=opt, params=variables).save(
      str(tmp_path / "ckpt"))
  for g in grads[2:]:
    opt.apply(g, variables)

  fresh_vars = [tf.Variable(tf.zeros_like(p)) for p in params]
  fresh = case.make()
  # Restored before the first apply: the slots are filled when created.
  status = tf.train.Checkpoint(opt=fresh, params=fresh_vars).restore(path)
  for g in grads[2:]:
    fresh.apply(g, fresh_vars)
  status.assert_consumed()
  _assert_all_close([v.numpy() for v in fresh_vars],
                    [v.numpy() for v in variables], rtol=0, atol=0)
  _assert_all_close([v.numpy() for v in all_variables(fresh)],
                    [v.numpy() for v in all_variables(opt)], rtol=0, atol=0)


def test_learning_rate_variable_can_be_assigned(case):
  opt = case.make()
  opt.learning_rate = tf.Variable(0., trainable=False)
  w = tf.Variable([1., 2.])
  step = tf.function(lambda g: opt.apply([g], [w]))
  step(tf.constant([1., 1.]))
  np.testing.assert_array_equal(w.numpy(), [1., 2.])  # Zero learning rate.
  opt.learning_rate.assign(0.1)
  step(tf.constant([1., 1.]))
  assert np.all(w.numpy() < [1., 2.])
  assert step.experimental_get_tracing_count() <= 2


@functools.lru_cache(maxsize=None)
def _mirrored_strategy() -> tf.distribute.MirroredStrategy:
  """One strategy per process over the two logical CPUs of conftest.py.

  Reduction through one device avoids collective ops, whose instance keys
  clash between strategies created in the same process.
  """
  devices = [d.name for d in tf.config.list_logical_devices("CPU")][:2]
  assert len(devices) == 2, "conftest.py should provide two logical CPUs"
  return tf.distribute.MirroredStrategy(
      devices, cross_device_ops=tf.distribute.ReductionToOneDevice())


def _distributed_training(case, strategy, compiled, sparse=False):
  """Three steps of regression on a global batch of 8; returns variables.

  Dense: a Linear layer. Sparse: an embedding table read with tf.gather,
  whose gradient is a tf.IndexedSlices with repeated indices.
  """
  rng = np.random.default_rng(2)
  if sparse:
    x = rng.integers(0, 5, size=(8,)).astype(np.int32)
  else:
    x = rng.normal(size=(8, 3)).astype(np.float32)
  y = rng.normal(size=(8, 2)).astype(np.float32)
  scope = strategy.scope() if strategy else contextlib.nullcontext()
  with scope:
    if sparse:
      table = tf.Variable(rng.normal(size=(6, 2)).astype(np.float32))
      model, parameters = lambda ids: tf.gather(table, ids), [table]
    else:
      tf.random.set_seed(0)
      model = snt.Linear(2)
      model(x[:1])
      parameters = list(model.trainable_variables)
    opt = case.make()
  initial = [v.numpy() for v in parameters]

  def replica_step(inputs, targets):
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum((model(inputs) - targets)**2) / 8.
    grads = tape.gradient(loss, parameters)
    if strategy:
      grads = tf.distribute.get_replica_context().all_reduce("sum", grads)
    opt.apply(grads, parameters)

  def step(inputs, targets):
    if strategy:
      strategy.run(replica_step, args=(inputs, targets))
    else:
      replica_step(inputs, targets)

  step = tf.function(step) if compiled else step
  if strategy:
    dataset = tf.data.Dataset.from_tensors((x, y)).repeat(3)
    batches = strategy.experimental_distribute_dataset(dataset)
  else:
    batches = [(x, y)] * 3
  for inputs, targets in batches:
    step(inputs, targets)
  return parameters, opt, initial


@pytest.mark.parametrize("compiled,sparse", [
    (True, False), (False, False), (True, True)], ids=[
        "tf_function", "eager", "tf_function_sparse"])
def test_mirrored_strategy_matches_single_device(case, compiled, sparse):
  if not case.distribute:
    pytest.skip("tf.distribute is tested on another configuration.")
  strategy = _mirrored_strategy()
  parameters, opt, initial = _distributed_training(case, strategy, compiled,
                                                   sparse)
  single, _, _ = _distributed_training(case, None, compiled, sparse)
  for v, expected, before in zip(parameters, single, initial):
    assert not np.allclose(expected.numpy(), before)  # Training moved it.
    copies = [c.numpy() for c in strategy.experimental_local_results(v)]
    assert len(copies) == 2
    np.testing.assert_allclose(copies[0], expected.numpy(), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_array_equal(copies[0], copies[1])
  for slot in all_variables(opt):
    copies = [c.numpy() for c in strategy.experimental_local_results(slot)]
    np.testing.assert_array_equal(copies[0], copies[-1])


def test_cross_replica_apply_under_strategy_scope(case):
  if not case.distribute:
    pytest.skip("tf.distribute is tested on another configuration.")
  strategy = _mirrored_strategy()
  grads = [tf.constant([1., -1.]), tf.constant([0.5, 2.])]
  with strategy.scope():
    w = tf.Variable([1., 2.])
    opt = case.make()
    for g in grads:  # Plain tensors, then per-replica values.
      opt.apply([g], [w])
    opt.apply([strategy.experimental_distribute_values_from_function(
        lambda _: tf.constant([3., 3.]))], [w])
  expected = tf.Variable([1., 2.])
  single = case.make()
  for g in grads + [tf.constant([3., 3.])]:
    single.apply([g], [expected])
  for copy in strategy.experimental_local_results(w):
    np.testing.assert_allclose(copy.numpy(), expected.numpy(), rtol=1e-6)


def test_parameters_outside_strategy_scope(case):
  strategy = _mirrored_strategy()
  w = tf.Variable([1.])
  with strategy.scope():
    opt = case.make()
  with pytest.raises(ValueError, match="was not created under the scope"):
    strategy.run(lambda: opt.apply([tf.constant([1.])], [w]))


# Bad input.


def test_different_lengths(case):
  opt = case.make()
  with pytest.raises(ValueError, match=r"'[a-z_0-9]+': got 1 updates for 2 "
                     "parameters"):
    opt.apply([tf.ones([2])], [tf.Variable(tf.ones([2])), tf.Variable(1.)])


def test_empty_parameters(case):
  with pytest.raises(ValueError, match="`parameters` cannot be empty"):
    case.make().apply([], [])


def test_all_updates_none(case):
  with pytest.raises(ValueError, match="all 2 updates are None"):
    case.make().apply([None, None], [tf.Variable(1.), tf.Variable(2.)])


def test_update_shape_mismatch(case):
  opt = case.make()
  name = type(opt).__name__
  with pytest.raises(ValueError, match=rf"{name} '.*': updates\[0\] \(for "
                     r"parameter 'w:0', shape \(2, 3\)\) has shape \(3, 2\)"):
    opt.apply([tf.ones([3, 2])], [tf.Variable(tf.ones([2, 3]), name="w")])


def test_sparse_update_shape_mismatch(case):
  with pytest.raises(ValueError, match=r"has values of shape \(1, 5\)"):
    case.make().apply(
        [tf.IndexedSlices(tf.ones([1, 5]), tf.constant([0]))],
        [tf.Variable(tf.ones([4, 3]))])


def test_update_dtype_mismatch(case):
  with pytest.raises(ValueError, match="DType of update .* is not equal to that of parameter: float64; cast it"):
    case.make().apply([tf.ones([2], tf.float64)], [tf.Variable(tf.ones([2]))])


def test_parameter_not_a_variable(case):
  opt = case.make()
  name = type(opt).__name__
  with pytest.raises(TypeError, match=rf"{name} '.*': parameters\[0\] must be "
                     "a tf.Variable, got EagerTensor"):
    opt.apply([tf.ones([2])], [tf.ones([2])])


def test_parameters_changed_after_slots_were_created(case):
  a = tf.Variable(tf.ones([2]), name="a")
  b = tf.Variable(tf.ones([3]), name="b")
  opt = case.make()
  opt.apply([tf.ones([2])], [a])
  if not case.stateful:  # Nothing is kept per parameter: any list is fine.
    opt.apply([tf.ones([3])], [b])
    assert b.numpy()[0] != 1.
    return
  with pytest.raises(ValueError, match=r"created its state for parameters\[0"
                     r"\] = 'a:0' of shape \(2,\).*passes 'b:0' of shape"):
    opt.apply([tf.ones([3])], [b])
  with pytest.raises(ValueError, match="for 1 parameters, but this call "
                     "passes 2 parameters"):
    opt.apply([tf.ones([2]), tf.ones([3])], [a, b])
