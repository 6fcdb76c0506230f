"""Tests for snt.distribute.CrossReplicaBatchNorm.

Two replicas (the logical CPUs of conftest.py) each see half of a global
batch whose halves have very different statistics, so per-replica statistics
would be far from the global ones the module must use.
"""

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from tests.distribute import replicators

# (shape of the global batch, data_format, channel axis, Bessel-corrected
# moving variance; never, as in Sonnet: the module is never fused).
_LAYOUTS = {
    "rank2": ((8, 3), "channels_last", 1, False),
    "NHWC": ((8, 2, 3, 3), "NHWC", 3, False),
    "NCHW": ((8, 3, 2, 2), "NCHW", 1, False),
}


def _global_batch(shape, seed=0) -> np.ndarray:
  """Two halves with different means and spreads."""
  rng = np.random.default_rng(seed)
  x = rng.normal(size=shape).astype(np.float32)
  half = shape[0] // 2
  x[:half] = x[:half] * 0.5 - 2.
  x[half:] = x[half:] * 3. + 4.
  return x


def _reference(x, channel_axis, bessel, eps=1e-5):
  """Outputs, mean and (moving) variance of the global batch, in NumPy."""
  axes = tuple(a for a in range(x.ndim) if a != channel_axis)
  mean = x.astype(np.float64).mean(axes, keepdims=True)
  variance = x.astype(np.float64).var(axes, keepdims=True)
  outputs = (x - mean) / np.sqrt(variance + eps)
  if bessel:
    n = x.size // x.shape[channel_axis]
    variance = variance * n / (n - 1)
  return outputs, mean, variance


def _make(data_format="channels_last", decay=0.5, name="xbn"):
  return snt.distribute.CrossReplicaBatchNorm(
      False, False, snt.ExponentialMovingAverage(decay, name="moving_mean"),
      snt.ExponentialMovingAverage(decay, name="moving_variance"),
      data_format=data_format, name=name)


def _halves(replicator, x):
  half = x.shape[0] // 2
  return replicator.experimental_distribute_values_from_function(
      lambda ctx: tf.constant(x[half * ctx.replica_id_in_sync_group:][:half]))


def _copies(replicator, value) -> list[np.ndarray]:
  return [c.numpy() for c in replicator.experimental_local_results(value)]


@pytest.mark.parametrize("compiled", [True, False],
                         ids=["tf_function", "eager"])
@pytest.mark.parametrize("layout", list(_LAYOUTS))
def test_statistics_are_those_of_the_global_batch(layout, compiled):
  replicator = replicators.replicator()
  shape, data_format, channel_axis, bessel = _LAYOUTS[layout]
  x = _global_batch(shape)
  with replicator.scope():
    bn = _make(data_format)
  step = lambda inputs: replicator.run(
      lambda v: bn(v, is_training=True), args=(inputs,))
  step = tf.function(step) if compiled else step
  outputs = np.concatenate(_copies(replicator, step(_halves(replicator, x))))

  expected, mean, variance = _reference(x, channel_axis, bessel)
  np.testing.assert_allclose(outputs, expected, rtol=1e-4, atol=1e-4)
  # One update of a debiased moving average is the value itself.
  for copy in _copies(replicator, bn.moving_mean.average):
    np.testing.assert_allclose(copy, mean, rtol=1e-5, atol=1e-5)
  for copy in _copies(replicator, bn.moving_variance.average):
    np.testing.assert_allclose(copy, variance, rtol=1e-5, atol=1e-5)


def test_moving_averages_update_identically_on_both_replicas():
  replicator = replicators.replicator()
  with replicator.scope():
    bn = _make(decay=0.9)

  @tf.function
  def train(inputs):
    return replicator.run(lambda v: bn(v, is_training=True), args=(inputs,))

  @tf.function
  def evaluate(inputs):
    return replicator.run(lambda v: bn(v, is_training=False), args=(inputs,))

  batches = [_global_batch((8, 3), seed) for seed in range(3)]
  for x in batches:
    train(_halves(replicator, x))
  ema_mean, ema_variance = 0., 0.
  for t, x in enumerate(batches, start=1):
    _, mean, variance = _reference(x, 1, bessel=False)
    ema_mean = 0.9 * ema_mean + 0.1 * mean
    ema_variance = 0.9 * ema_variance + 0.1 * variance
  debias = 1. - 0.9 ** t
  first, second = _copies(replicator, bn.moving_mean.average)
  np.testing.assert_array_equal(first, second)
  np.testing.assert_allclose(first, ema_mean / debias, rtol=1e-5, atol=1e-5)
  first, second = _copies(replicator, bn.moving_variance.average)
  np.testing.assert_array_equal(first, second)
  np.testing.assert_allclose(first, ema_variance / debias, rtol=1e-5)
  assert _copies(replicator, bn.moving_mean.counter) == [3, 3]

  x = _global_batch((8, 3), seed=7)
  outputs = np.concatenate(_copies(replicator,
                                   evaluate(_halves(replicator, x))))
  expected = (x - ema_mean / debias) / np.sqrt(ema_variance / debias + 1e-5)
  np.testing.assert_allclose(outputs, expected, rtol=1e-4, atol=1e-4)


def test_gradients_match_one_device():
  replicator = replicators.replicator()
  x = _global_batch((8, 3))
  weights = np.random.default_rng(3).normal(size=(8, 3)).astype(np.float32)

  def loss_and_grads(bn, inputs, w):
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(tf.square(bn(inputs, is_training=True)) * w)
    return tape.gradient(loss, [bn.scale, bn.offset])

  def make():
    return snt.distribute.CrossReplicaBatchNorm(
        True, True, snt.ExponentialMovingAverage(0.5),
        snt.ExponentialMovingAverage(0.5), name="trained")

  with replicator.scope():
    bn = make()

  @tf.function
  def step(inputs, w):
    def replica_step(inputs, w):
      grads = loss_and_grads(bn, inputs, w)
      return tf.distribute.get_replica_context().all_reduce("sum", grads)
    return replicator.run(replica_step, args=(inputs, w))

  grads = step(_halves(replicator, x), _halves(replicator, weights))
  expected = loss_and_grads(make(), tf.constant(x), tf.constant(weights))
  for grad, want in zip(grads, expected):
    assert np.any(np.abs(want.numpy()) > 1e-3)
    for copy in _copies(replicator, grad):
      np.testing.assert_allclose(copy, want.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("flag", ["python", "tensor"])
@pytest.mark.parametrize("layout", list(_LAYOUTS))
def test_one_replica_equals_batch_norm(layout, flag):
  shape, data_format, _, _ = _LAYOUTS[layout]
  ours = snt.distribute.CrossReplicaBatchNorm(
      True, True, snt.ExponentialMovingAverage(0.9),
      snt.ExponentialMovingAverage(0.9), data_format=data_format)
  theirs = snt.BatchNorm(True, True, decay_rate=0.9, data_format=data_format)
  training = True if flag == "python" else tf.constant(True)
  for seed in range(2):
    x = tf.constant(_global_batch(shape, seed))
    np.testing.assert_allclose(ours(x, is_training=training).numpy(),
                               theirs(x, is_training=training).numpy(),
                               rtol=1e-4, atol=1e-4)
  # BatchNorm's fused NHWC kernel feeds the unbiased variance to the moving
  # average; CrossReplicaBatchNorm, like Sonnet's, the biased one.
  n = np.prod(shape) // shape[_LAYOUTS[layout][2]]
  bessel = n / (n - 1) if layout == "NHWC" else 1.
  np.testing.assert_allclose(ours.moving_mean.value.numpy(),
                             theirs.moving_mean.value.numpy(), rtol=1e-5,
                             atol=1e-5)
  np.testing.assert_allclose(ours.moving_variance.value.numpy() * bessel,
                             theirs.moving_variance.value.numpy(), rtol=1e-5,
                             atol=1e-5)
  if layout == "NHWC":
    return  # The evaluation outputs differ by the same factor.
  x = tf.constant(_global_batch(shape, 5))
  np.testing.assert_allclose(ours(x, is_training=False).numpy(),
                             theirs(x, is_training=False).numpy(), rtol=1e-4,
                             atol=1e-4)


# Bad input.


def test_training_in_cross_replica_context_is_an_error():
  replicator = replicators.replicator()
  with replicator.scope():
    bn = _make(name="outside_run")
    with pytest.raises(RuntimeError,
                       match=r"CrossReplicaBatchNorm 'outside_run'.*"
                       r"inside `strategy.run"):
      bn(tf.ones([4, 3]), is_training=True)


def test_tensor_is_training_under_a_strategy_is_an_error():
  replicator = replicators.replicator()
  with replicator.scope():
    bn = _make(name="tensor_flag")

  @tf.function
  def step(inputs, training):
    return replicator.run(lambda v: bn(v, is_training=training),
                          args=(inputs,))

  with pytest.raises(ValueError, match=r"CrossReplicaBatchNorm 'tensor_flag' "
                     r"got is_training as a tensor.*Pass a Python bool"):
    step(tf.ones([4, 3]), tf.constant(True))


def test_input_checks_name_the_module():
  bn = _make(name="checked")
  bn(tf.ones([4, 3]), is_training=True)
  with pytest.raises(ValueError, match="CrossReplicaBatchNorm 'checked'"):
    bn(tf.ones([4, 5]), is_training=True)
  with pytest.raises(TypeError, match="CrossReplicaBatchNorm 'checked'"):
    bn(tf.ones([4, 3]), is_training="yes")
  with pytest.raises(TypeError, match="CrossReplicaBatchNorm 'ints'.*int32"):
    _make(name="ints")(tf.ones([4, 3], tf.int32), is_training=True)


def test_eval_before_training_is_an_error():
  bn = _make(name="untrained")
  with pytest.raises(ValueError, match="CrossReplicaBatchNorm 'untrained'.*"
                     "before any call with is_training=True"):
    bn(tf.ones([4, 3]), is_training=False)


def test_constructor_errors_name_the_class():
  with pytest.raises(ValueError,
                     match=r"CrossReplicaBatchNorm: eps must be a "
                     r"non-negative number, got -1\."):
    snt.distribute.CrossReplicaBatchNorm(
        True, True, snt.ExponentialMovingAverage(0.5),
        snt.ExponentialMovingAverage(0.5), eps=-1)
  with pytest.raises(ValueError, match="CrossReplicaBatchNorm: Unable to extract channel information"):
    _make(data_format="HWCN?")
