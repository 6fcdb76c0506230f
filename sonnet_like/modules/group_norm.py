"""GroupNorm: normalization over groups of channels of each input."""

from typing import Any

import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import checks
from sonnet_like.core import initializers
from sonnet_like.core import once
from sonnet_like.core import types
from sonnet_like.modules import axis_norm
from sonnet_like.modules import norm_settings


class GroupNorm(axis_norm.AxisNormBase):
  """Splits the channels into groups and normalizes each group separately.

  Within each group the mean and variance are taken over `axis` (by default
  every axis but the batch: the spatial axes and the group's channels), then
  a per-channel scale and offset are applied.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> gn = snt.GroupNorm(groups=2, name="gn")
      >>> gn(tf.constant([[1., 3., 10., 30.]])).numpy().round(3)
      array([[-1., 1., -1., 1.]], dtype=float32)
  """

  @norm_settings.documented(groups=(
      "How many groups to split the channels into; it must divide the "
      "number of channels."), axis=(
      "The input axes to normalize over (an int, sequence of ints or "
      "slice); the channel axis stands for the channels of one group. By "
      "default all but the batch; `slice(2, None)` also keeps a time axis."))
  def __init__(self, groups: int, axis: axis_norm.Axis = slice(1, None),
               create_scale: bool = True, create_offset: bool = True,
               eps: types.FloatLike = 1e-5,
               scale_init: initializers.Initializer | None = None,
               offset_init: initializers.Initializer | None = None,
               data_format: str = "channels_last", name: str | None = None):
    super().__init__(axis, create_scale, create_offset, eps, scale_init,
                     offset_init, data_format, name)
    arguments.check_positive_int("GroupNorm", "groups", groups)
    self._groups = int(groups)

  @once.once
  def _initialize(self, inputs: tf.Tensor) -> None:
    checks.check_rank(self, inputs, min_rank=2)
    self._build_params(inputs)
    channels = checks.known_dim(self, inputs, self._channel_axis, "channels")
    if channels % self._groups:
      raise ValueError(
          f"{checks.describe(self)} cannot split {channels} channels into "
          f"{self._groups} groups. The number of channels must be divisible "
          f"by the number of groups, was channels = {channels}, groups = "
          f"{self._groups}.")
    self._channels = channels
    axes = axis_norm.resolve_axes(self, self._axis, self._rank)
    # Grouped layout: the channel axis becomes [groups, channels per group].
    # Statistics never run over the groups axis; the channel axis stands for
    # the channels within a group.
    c = self._channel_axis
    self._grouped_axes = tuple(a + 1 if a >= c else a for a in axes)

  def _normalize(self, inputs: tf.Tensor, scale: Any,
                 offset: Any) -> tf.Tensor:
    """Normalizes each group of channels over the chosen axes."""
    c = self._channel_axis
    shape = tf.shape(inputs)
    grouped_shape = tf.concat(
        [shape[:c], [self._groups, self._channels // self._groups],
         shape[c + 1:]], axis=0)
    grouped = tf.reshape(inputs, grouped_shape)
    mean, variance = tf.nn.moments(grouped, self._grouped_axes, keepdims=True)
    outputs = tf.nn.batch_normalization(grouped, mean, variance, None, None,
                                        self._eps)
    outputs = tf.reshape(outputs, shape)
    outputs.set_shape(inputs.shape)
    if scale is not None:
      outputs = outputs * scale
    if offset is not None:
      outputs = outputs + offset
    return outputs
