"""BatchNorm: normalization by batch statistics, moving averages at test."""

import numbers
from typing import Any

import tensorflow as tf

from sonnet_like.core import base
from sonnet_like.core import checks
from sonnet_like.core import initializers
from sonnet_like.core import once
from sonnet_like.core import types
from sonnet_like.core import utils
from sonnet_like.modules import moving_averages
from sonnet_like.modules import norm_settings

NO_MOVING_STATISTICS_ERROR = (
    "{module} was called with is_training=False before any call with "
    "is_training=True, so its moving mean and variance are still zero (the "
    "output would be the input divided by sqrt(eps)). Train it first "
    "(module(x, is_training=True)), restore its variables from a checkpoint, "
    "or pass test_local_stats=True to normalize with the batch's own "
    "statistics.")


class BaseBatchNorm(norm_settings.NormSettings):
  r"""Batch normalization with caller-supplied moving statistics.

  Normalizes each channel over the batch and spatial axes:
  `outputs = scale * (x - mean) / sqrt(variance + eps) + offset`.

  In training (`is_training=True`) the batch's own mean and variance are used
  and fed to the `moving_mean` and `moving_variance` metrics; otherwise the
  metrics' values are used, unless `test_local_stats=True` asks for the
  batch's statistics. As in Sonnet 2, rank-4 channels-last inputs go through
  the fused kernel (float32) and the variance it hands to `moving_variance`
  carries Bessel's correction `n / (n - 1)`; other layouts track the plain
  batch variance.

  Evaluating with moving statistics that no training step has set is an
  error (eagerly, and when a `tf.function` runs); under XLA, which drops
  asserts, the output is NaN instead.

  `scale` and `offset` are always variables (non-trainable ones of ones and
  zeros without `create_scale`/`create_offset`); without `create_*`, tensors
  passed at call time take their place, e.g. for conditional normalization.

  Attributes:
    _axis: The axes the statistics reduce over (after the first call), as in
      Sonnet 2, for subclasses.
    scale: The per-channel scale variable (created on the first call).
    offset: The per-channel offset variable (created on the first call).
    moving_mean: The metric tracking the mean.
    moving_variance: The metric tracking the variance.
  """

  # Whether NHWC float32 inputs are normalized with the moving statistics by
  # the fused kernel, as Sonnet 2 does.
  _fuses_moving_statistics = True

  @norm_settings.documented(
      moving_mean="A metric (`update(value)`, `value`, `initialize(value)`), "
      "e.g. an `ExponentialMovingAverage`, tracking the mean.",
      moving_variance="The same for the variance.")
  def __init__(self, create_scale: bool, create_offset: bool,
               moving_mean: Any, moving_variance: Any,
               eps: types.FloatLike = 1e-5,
               scale_init: initializers.Initializer | None = None,
               offset_init: initializers.Initializer | None = None,
               data_format: str = "channels_last", name: str | None = None):
    if "_scope_name" not in self.__dict__:  # `BatchNorm` enters it earlier.
      super().__init__(name=name)
    self._set_norm_settings(create_scale, create_offset, eps, scale_init,
                            offset_init, data_format)
    self.moving_mean = moving_mean
    self.moving_variance = moving_variance

  @once.once
  def _initialize(self, inputs: tf.Tensor) -> None:
    checks.check_rank(self, inputs, min_rank=2)
    checks.check_floating(self, inputs)
    rank = inputs.shape.rank
    channel_axis = self._channel_index % rank
    channels = checks.known_dim(self, inputs, channel_axis, "channels")
    self._rank = rank
    self._channel_axis = channel_axis
    self._channels = channels
    self._dtype = inputs.dtype
    # The reduced axes, under Sonnet 2's name (subclasses read it).
    self._axis = tuple(a for a in range(rank) if a != channel_axis)
    # Sonnet's fused layout: its moving variance is Bessel-corrected.
    self._nhwc = rank == 4 and channel_axis == 3
    self._fused = self._nhwc and inputs.dtype == tf.float32
    # Statistics keep the reduced axes, e.g. [1, 1, 1, C] for NHWC.
    self._stats_shape = [channels if a == channel_axis else 1
                         for a in range(rank)]
    self.shape = tf.TensorShape(self._stats_shape)  # Public in Sonnet 2.
    zeros = tf.zeros(self._stats_shape, inputs.dtype)
    self.moving_mean.initialize(zeros)
    self.moving_variance.initialize(zeros)
    params_shape = [channels] + [1] * (rank - 2 if channel_axis == 1 else 0)
    self.scale = tf.Variable(self._scale_init(params_shape, inputs.dtype),
                             name="scale", trainable=self._create_scale)
    self.offset = tf.Variable(self._offset_init(params_shape, inputs.dtype),
                              name="offset", trainable=self._create_offset)

  def __call__(self, inputs: tf.Tensor, is_training: types.BoolLike,
               test_local_stats: types.BoolLike = False,
               scale: tf.Tensor | None = None,
               offset: tf.Tensor | None = None) -> tf.Tensor:
    """Normalizes `inputs`.

    Args:
      inputs: A tensor in the module's `data_format`, rank >= 2.
      is_training: A bool or scalar boolean tensor: use the batch statistics
        and update the moving ones.
      test_local_stats: Outside training, use the batch statistics instead of
        the moving ones.
      scale: A tensor broadcastable to `inputs` replacing the scale; only
        without `create_scale`.
      offset: The same for the offset; only without `create_offset`.

    Returns:
      The normalized tensor, shaped like `inputs`.
    """
    checks.check_is_training(self, is_training)
    checks.check_is_training(self, test_local_stats, "test_local_stats")
    self._check_no_learnt_override(scale, offset)
    inputs = tf.convert_to_tensor(inputs)
    self._initialize(inputs)
    checks.check_rank(self, inputs, rank=self._rank, built=True)
    checks.check_built_dtype(self, inputs, self._dtype)
    inputs = checks.check_dim(self, inputs, self._channel_axis,
                              self._channels, "channels")
    if scale is None:
      scale = self.scale
    else:
      scale = tf.convert_to_tensor(scale, dtype=inputs.dtype)
    if offset is None:
      offset = self.offset
    else:
      offset = tf.convert_to_tensor(offset, dtype=inputs.dtype)

    training = utils.static_bool(is_training)
    local = utils.static_bool(test_local_stats)
    if training is not None and local is not None:
      if training or local:
        outputs, mean, variance = self._batch_normalize(inputs, scale, offset)
      else:
        outputs = self._moving_normalize(inputs, scale, offset)
      if training:
        self._update_statistics(mean, variance)
      return outputs

    # Known only when the graph runs: branch in the graph.
    def by_batch():
      return self._batch_normalize(inputs, scale, offset)

    def by_moving():
      unused = tf.zeros(self._stats_shape, inputs.dtype)
      return self._moving_normalize(inputs, scale, offset), unused, unused

    use_batch = tf.logical_or(is_training, test_local_stats)
    outputs, mean, variance = tf.cond(use_batch, by_batch, by_moving)

    def update():
      self._update_statistics(mean, variance)
      return tf.constant(True)

    updated = tf.cond(is_training, update, lambda: tf.constant(False))
    with tf.control_dependencies([updated]):
      return tf.identity(outputs)

  def _batch_normalize(self, inputs, scale, offset):
    """Returns the outputs and the batch statistics for the moving ones."""
    channels = [self._channels]
    if (self._fused and scale.shape == channels and offset.shape == channels):
      empty = tf.zeros([0], inputs.dtype)
      outputs, mean, variance = tf.raw_ops.FusedBatchNormV3(
          x=inputs, scale=scale, offset=offset, mean=empty, variance=empty,
          epsilon=self._eps, data_format="NHWC", is_training=True)[:3]
      return (outputs, tf.reshape(mean, self._stats_shape),
              tf.reshape(variance, self._stats_shape))
    mean, variance = tf.nn.moments(inputs, self._axis, keepdims=True)
    outputs = tf.nn.batch_normalization(inputs, mean, variance, offset, scale,
                                        self._eps)
    if self._nhwc:  # Same statistics as the fused kernel's.
      count = tf.cast(tf.size(inputs) // self._channels, inputs.dtype)
      variance = variance * count / tf.maximum(count - 1, 1)
    return outputs, mean, variance

  def _moving_normalize(self, inputs, scale, offset):
    mean = self.moving_mean.value
    variance = self.moving_variance.value
    if isinstance(self.moving_mean, moving_averages.ExponentialMovingAverage):
      mean = self._require_statistics(mean)
    channels = [self._channels]
    if (self._fused and self._fuses_moving_statistics and
        scale.shape == channels and offset.shape == channels and
        isinstance(self._eps, numbers.Real)):
      # Sonnet 2's kernel (and so its rounding) for NHWC float32.
      return tf.raw_ops.FusedBatchNormV2(
          x=inputs, scale=scale, offset=offset,
          mean=tf.reshape(mean, channels),
          variance=tf.reshape(variance, channels), epsilon=self._eps,
          data_format="NHWC", is_training=False)[0]
    return tf.nn.batch_normalization(inputs, mean, variance, offset, scale,
                                     self._eps)

  def _require_statistics(self, mean: tf.Tensor) -> tf.Tensor:
    """Refuses moving statistics that no training step has set."""
    message = NO_MOVING_STATISTICS_ERROR.format(module=checks.describe(self))
    counter = self.moving_mean.counter
    if tf.executing_eagerly():
      if int(counter.numpy()) == 0:
        raise ValueError(message)
      return mean
    check = tf.debugging.assert_greater(
        counter, tf.constant(0, counter.dtype), message=message)
    with tf.control_dependencies([check]):
      trained = tf.greater(counter, 0)
      # XLA drops asserts: NaN outputs then show the mistake instead.
      return tf.where(trained, mean, tf.constant(float("nan"), mean.dtype))

  def _update_statistics(self, mean, variance) -> None:
    self.moving_mean.update(mean)
    self.moving_variance.update(variance)


class BatchNorm(BaseBatchNorm):
  """Batch normalization whose test statistics are exponential moving averages.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> bn = snt.BatchNorm(create_scale=True, create_offset=True,
      ...                    name="doc_bn")
      >>> x = tf.constant([[1., 10.], [3., 30.]])
      >>> bn(x, is_training=True).numpy().round(3)
      array([[-1., -1.],
             [ 1.,  1.]], dtype=float32)
      >>> [v.name for v in bn.variables]  # doctest: +NORMALIZE_WHITESPACE
      ['doc_bn/offset:0', 'doc_bn/scale:0',
       'doc_bn/moving_mean/counter:0', 'doc_bn/moving_mean/hidden:0',
       'doc_bn/moving_mean/average:0', 'doc_bn/moving_variance/counter:0',
       'doc_bn/moving_variance/hidden:0', 'doc_bn/moving_variance/average:0']

  See `BaseBatchNorm` for the arguments and the call.
  """

  @norm_settings.documented(
      decay_rate="Decay of the moving averages, in (0, 1).")
  def __init__(self, create_scale: bool, create_offset: bool,
               decay_rate: float = 0.999, eps: types.FloatLike = 1e-5,
               scale_init: initializers.Initializer | None = None,
               offset_init: initializers.Initializer | None = None,
               data_format: str = "channels_last", name: str | None = None):
    # Enter the module's scope first so the averages are named inside it.
    base.Module.__init__(self, name=name)
    moving_averages.check_decay(type(self).__name__, "decay_rate", decay_rate,
                                low_inclusive=False)
    ema = moving_averages.ExponentialMovingAverage
    super().__init__(
        create_scale=create_scale, create_offset=create_offset,
        moving_mean=ema(decay_rate, name="moving_mean"),
        moving_variance=ema(decay_rate, name="moving_variance"), eps=eps,
        scale_init=scale_init, offset_init=offset_init,
        data_format=data_format, name=name)
