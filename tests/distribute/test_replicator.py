"""Tests for snt.distribute.Replicator, TpuReplicator, create_variables_eagerly.

They run over the two logical CPUs that conftest.py makes, on the one
Replicator of replicators.py.
"""

import inspect

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.distribute import replicator as replicator_lib
from tests.distribute import replicators

ON_READ = tf.VariableSynchronization.ON_READ
ONLY_FIRST_REPLICA = tf.VariableAggregation.ONLY_FIRST_REPLICA


def _copies(strategy, value) -> list[np.ndarray]:
  return [c.numpy() for c in strategy.experimental_local_results(value)]


class _LazyVariable:
  """Creates a variable on its first call, wherever that call happens."""

  def __init__(self):
    self.v = None

  def __call__(self):
    if self.v is None:
      self.v = tf.Variable(1.)
    return self.v.read_value()


# Replica-local variables.


def test_is_a_mirrored_strategy_over_both_devices():
  replicator = replicators.replicator()
  assert isinstance(replicator, tf.distribute.MirroredStrategy)
  assert replicator.num_replicas_in_sync == 2


@pytest.mark.parametrize("where", ["scope", "run_eager", "run_tf_function"])
def test_variables_are_replica_local_by_default(where):
  replicator = replicators.replicator()
  if where == "scope":
    with replicator.scope():
      v = tf.Variable(1.)
  else:
    lazy = _LazyVariable()
    run = lambda: replicator.run(lazy)
    if where == "run_tf_function":
      run = tf.function(run)
    run()
    v = lazy.v
  assert v.synchronization == ON_READ
  assert v.aggregation == ONLY_FIRST_REPLICA
  assert v.trainable
  assert len(v.values) == 2
  assert sorted(c.device.split("device:")[-1] for c in v.values) == [
      "CPU:0", "CPU:1"]


def test_explicit_variable_settings_are_kept():
  replicator = replicators.replicator()
  with replicator.scope():
    frozen = tf.Variable(1., trainable=False)
    summed = tf.Variable(1., aggregation=tf.VariableAggregation.SUM)
    mirrored = tf.Variable(
        1., synchronization=tf.VariableSynchronization.ON_WRITE)
  assert not frozen.trainable and frozen.synchronization == ON_READ
  assert summed.aggregation == tf.VariableAggregation.SUM
  assert mirrored.synchronization == tf.VariableSynchronization.ON_WRITE


def test_each_replica_updates_its_own_copy():
  replicator = replicators.replicator()
  with replicator.scope():
    v = tf.Variable(0.)

  def add_replica_id():
    context = tf.distribute.get_replica_context()
    v.assign_add(tf.cast(context.replica_id_in_sync_group, tf.float32) + 1.)

  replicator.run(add_replica_id)
  assert _copies(replicator, v) == [1., 2.]
  assert float(v.numpy()) == 1.  # Read outside `run`: the first replica's.
  v.assign(5.)  # Cross-replica assignment sets every copy.
  assert _copies(replicator, v) == [5., 5.]


# Training.


def _regression_data():
  rng = np.random.default_rng(0)
  x = rng.normal(size=(8, 3)).astype(np.float32)
  y = rng.normal(size=(8, 2)).astype(np.float32)
  return x, y


def _model():
  return snt.Sequential([snt.Linear(4, name="hidden"), tf.nn.tanh,
                         snt.Linear(2, name="out")], name="model")


def _loss(model, x, y, global_batch):
  return tf.reduce_sum(tf.square(model(x) - y)) / global_batch


_OPTIMIZERS = {
    "SGD": lambda: snt.optimizers.SGD(0.1),
    "Adam": lambda: snt.optimizers.Adam(0.05),
}


@pytest.mark.parametrize("compiled", [True, False],
                         ids=["tf_function", "eager"])
@pytest.mark.parametrize("optimizer", list(_OPTIMIZERS))
def test_training_matches_one_device(optimizer, compiled):
  replicator = replicators.replicator()
  x, y = _regression_data()
  steps = 3
  with replicator.scope():
    model = _model()
    model(x[:1])
    opt = _OPTIMIZERS[optimizer]()
  initial = [v.numpy() for v in model.trainable_variables]

  def replica_step(inputs, targets):
    with tf.GradientTape() as tape:
      loss = _loss(model, inputs, targets, 8.)
    grads = tape.gradient(loss, model.trainable_variables)
    grads = tf.distribute.get_replica_context().all_reduce("sum", grads)
    opt.apply(grads, model.trainable_variables)

  def step(inputs, targets):
    replicator.run(replica_step, args=(inputs, targets))

  step = tf.function(step) if compiled else step
  batches = replicator.experimental_distribute_dataset(
      tf.data.Dataset.from_tensors((x, y)).repeat(steps))
  for inputs, targets in batches:
    step(inputs, targets)

  single = _model()
  single(x[:1])
  for v, value in zip(single.trainable_variables, initial):
    v.assign(value)
  single_opt = _OPTIMIZERS[optimizer]()
  for _ in range(steps):
    with tf.GradientTape() as tape:
      loss = _loss(single, x, y, 8.)
    single_opt.apply(tape.gradient(loss, single.trainable_variables),
                     single.trainable_variables)

  for v, expected, before in zip(model.trainable_variables,
                                 single.trainable_variables, initial):
    assert v.synchronization == ON_READ
    assert not np.allclose(expected.numpy(), before)  # Training moved it.
    first, second = _copies(replicator, v)
    np.testing.assert_allclose(first, expected.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(first, second)
  for slot in tf.Module.variables.fget(opt):  # () for SGD.
    first, second = _copies(replicator, slot)
    np.testing.assert_array_equal(first, second)


# create_variables_eagerly.


class _EagerOnlyOnes(snt.initializers.Initializer):
  """Ones, computed with NumPy: works only when run eagerly."""

  def __call__(self, shape, dtype):
    return tf.constant(tf.ones(shape, dtype).numpy())


def test_module_first_called_in_run_under_tf_function():
  replicator = replicators.replicator()
  x = np.random.default_rng(1).normal(size=(4, 3)).astype(np.float32)
  with replicator.scope():
    model = snt.Linear(2, w_init=_EagerOnlyOnes(), name="eager_linear")

  @tf.function
  def forward(inputs):
    return replicator.run(snt.distribute.create_variables_eagerly(model),
                          args=(inputs,))

  outputs = forward(replicator.experimental_distribute_values_from_function(
      lambda ctx: x[2 * ctx.replica_id_in_sync_group:][:2]))
  assert model.w.synchronization == ON_READ
  for copy in _copies(replicator, model.w):
    np.testing.assert_array_equal(copy, np.ones([3, 2], np.float32))
  np.testing.assert_allclose(
      np.concatenate([o.numpy() for o in
                      replicator.experimental_local_results(outputs)]),
      x @ np.ones([3, 2], np.float32), rtol=1e-6)


def test_without_it_the_eager_only_initializer_fails():
  model = snt.Linear(2, w_init=_EagerOnlyOnes(), name="graph_linear")
  with pytest.raises(Exception):  # A symbolic tensor has no value to read.
    tf.function(model)(tf.ones([1, 3]))


def test_variables_are_created_eagerly():
  created = []

  @tf.function
  @snt.distribute.create_variables_eagerly
  def f():
    if not created:
      created.append(tf.Variable(
          snt.initializers.TruncatedNormal()([2, 2], tf.float32)))
      created.append(tf.Variable(tf.ones([3])))  # A constant in the graph.
    with tf.init_scope():
      # Eager variables hold their values already, during the trace.
      assert all(np.all(np.isfinite(v.numpy())) for v in created)
    return created[1] * 2.

  np.testing.assert_array_equal(f().numpy(), [2., 2., 2.])


def test_initializers_used_for_other_tensors_stay_random():
  noise = snt.initializers.RandomNormal()
  f = tf.function(snt.distribute.create_variables_eagerly(
      lambda: noise([16], tf.float32)))
  assert not np.array_equal(f().numpy(), f().numpy())


def test_initializers_are_restored_afterwards():
  before = {cls: cls.__dict__["__call__"]
            for cls in replicator_lib._initializer_classes()}
  assert snt.initializers.Zeros in before

  def fails():
    inner = snt.distribute.create_variables_eagerly(lambda: None)
    inner()  # Nested: leaving it must keep the outer call's state.
    assert snt.initializers.Zeros.__call__ is not before[
        snt.initializers.Zeros]
    raise KeyError("boom")

  with pytest.raises(KeyError, match="boom"):
    snt.distribute.create_variables_eagerly(fails)()
  after = {cls: cls.__dict__["__call__"]
           for cls in replicator_lib._initializer_classes()}
  assert after == before


def test_wrapper_keeps_the_function_signature():
  def forward(x, *, scale=2.):
    """Doubles."""
    return x * scale

  wrapped = snt.distribute.create_variables_eagerly(forward)
  assert wrapped.__name__ == "forward" and wrapped.__doc__ == "Doubles."
  assert float(wrapped(tf.constant(3.), scale=3.)) == 9.


# TpuReplicator: no TPU here, so only what needs none.


def test_tpu_replicator_is_a_tpu_strategy():
  assert issubclass(snt.distribute.TpuReplicator, tf.distribute.TPUStrategy)
  assert "scope" in snt.distribute.TpuReplicator.__dict__
  assert (inspect.signature(snt.distribute.TpuReplicator.__init__) ==
          inspect.signature(tf.distribute.TPUStrategy.__init__))
