"""CrossReplicaBatchNorm: batch normalization over the global batch."""

import tensorflow as tf

from sonnet_like.core import checks
from sonnet_like.core import types
from sonnet_like.core import utils
from sonnet_like.modules import batch_norm

CROSS_REPLICA_CONTEXT_ERROR = (
    "{module} needs the batch statistics of every replica, so in training (or "
    "with test_local_stats=True) it must run in replica context: call it "
    "inside `strategy.run(fn)` rather than directly under "
    "`strategy.scope()`.")

TENSOR_FLAG_UNDER_STRATEGY_ERROR = (
    "{module} got {argument} as a tensor whose value is known only when the "
    "graph runs. That needs a tf.cond around the batch statistics, and under "
    "a tf.distribute strategy their all-reduce cannot run inside a tf.cond. "
    "Pass a Python bool instead, e.g. trace one function for training "
    "(is_training=True) and one for evaluation (is_training=False).")


class CrossReplicaBatchNorm(batch_norm.BaseBatchNorm):
  """Batch normalization whose batch statistics span all replicas.

  Under a `tf.distribute` strategy each replica sees part of the global
  batch. This module all-reduces the per-channel sums of every replica, so the
  mean and variance it normalizes with (and feeds to the moving statistics)
  are those of the global batch, whatever each replica's share of it. With
  one replica, or without a strategy, it computes what `snt.BatchNorm` does.

  Use it with `snt.distribute.Replicator`: its moving statistics are then
  replica-local variables, which each replica updates with the same global
  statistics, so the copies stay equal.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> bn = snt.distribute.CrossReplicaBatchNorm(
      ...     True, True, snt.ExponentialMovingAverage(0.9, name="mean_ema"),
      ...     snt.ExponentialMovingAverage(0.9, name="var_ema"),
      ...     name="doc_cross_replica_bn")
      >>> x = tf.constant([[1., 10.], [3., 30.]])
      >>> bn(x, is_training=True).numpy().round(3)
      array([[-1., -1.],
             [ 1.,  1.]], dtype=float32)

  The variance is computed as the mean squared deviation from the global
  mean (two all-reduces), which stays accurate for inputs with a large mean.
  As in Sonnet, the moving variance is fed the biased batch variance in
  every layout (`snt.BatchNorm`'s fused NHWC path feeds the unbiased one).
  Statistics of float16/bfloat16 inputs are accumulated in float32. See
  `BaseBatchNorm` for the arguments and the call.
  """

  _fuses_moving_statistics = False  # Never fused, as in Sonnet.

  def __call__(self, inputs: tf.Tensor, is_training: types.BoolLike,
               test_local_stats: types.BoolLike = False,
               scale: tf.Tensor | None = None,
               offset: tf.Tensor | None = None) -> tf.Tensor:
    """Normalizes `inputs` with the global batch (or moving) statistics.

    The arguments are `BaseBatchNorm.__call__`'s; under a strategy,
    `is_training` and `test_local_stats` must be Python bools.
    """
    if tf.distribute.has_strategy():
      for argument, flag in (("is_training", is_training),
                             ("test_local_stats", test_local_stats)):
        checks.check_is_training(self, flag, argument)
        if utils.static_bool(flag) is None:
          raise ValueError(TENSOR_FLAG_UNDER_STRATEGY_ERROR.format(
              module=checks.describe(self), argument=argument))
    return super().__call__(inputs, is_training, test_local_stats, scale,
                            offset)

  def _batch_normalize(self, inputs, scale, offset):
    """Normalizes with the global batch statistics; returns them too."""
    # Never fused, as in Sonnet: the moving variance gets the biased batch
    # variance in every layout (BatchNorm's fused NHWC kernel hands over a
    # Bessel-corrected one).
    mean, variance, _ = self._global_moments(inputs)
    outputs = tf.nn.batch_normalization(inputs, mean, variance, offset, scale,
                                        self._eps)
    return outputs, mean, variance

  def _global_moments(self, inputs):
    """Mean, variance and element count per channel over all replicas."""
    context = tf.distribute.get_replica_context()
    if context is None:
      raise RuntimeError(CROSS_REPLICA_CONTEXT_ERROR.format(
          module=checks.describe(self)))
    low_precision = inputs.dtype in (tf.float16, tf.bfloat16)
    x = tf.cast(inputs, tf.float32) if low_precision else inputs
    count = tf.cast(tf.size(x, out_type=tf.int64) // self._channels, x.dtype)
    total, count = context.all_reduce(
        tf.distribute.ReduceOp.SUM,
        (tf.reduce_sum(x, self._axis, keepdims=True), count))
    mean = total / count
    squares = context.all_reduce(
        tf.distribute.ReduceOp.SUM,
        tf.reduce_sum(tf.square(x - mean), self._axis, keepdims=True))
    variance = squares / count
    if low_precision:
      mean = tf.cast(mean, inputs.dtype)
      variance = tf.cast(variance, inputs.dtype)
    return mean, variance, count
