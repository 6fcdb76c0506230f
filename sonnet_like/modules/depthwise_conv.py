"""DepthwiseConv2D: a separate 2D filter bank for each input channel.

Each input channel is convolved with its own `channel_multiplier` filters, so
the output has `input_channels * channel_multiplier` channels, ordered channel
by channel (`[c0 f0, c0 f1, ..., c1 f0, ...]`), as in `tf.nn.depthwise_conv2d`.
Channels-first inputs are transposed to channels-last around the op, like
`ConvND`.
"""

import math
from typing import Any, Sequence

import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import types
from sonnet_like.modules import conv


def _same_padding(size: Any, stride: int, kernel: int) -> list[Any]:
  """`[before, after]` of TensorFlow's SAME padding, for ints or tensors."""
  total = (-(-size // stride) - 1) * stride + kernel - size
  total = max(total, 0) if isinstance(total, int) else tf.maximum(total, 0)
  return [total // 2, total - total // 2]


class DepthwiseConv2D(conv.ConvBase):
  """Depthwise 2D convolution, with an optional bias.

  `w` has shape `kernel_shape + [input_channels, channel_multiplier]` and `b`
  shape `[input_channels * channel_multiplier]`.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> conv = snt.DepthwiseConv2D(3, channel_multiplier=2, name="dw")
      >>> conv(tf.ones([1, 8, 8, 4])).shape
      TensorShape([1, 8, 8, 8])
      >>> conv.w.shape
      TensorShape([3, 3, 4, 2])
  """

  def __init__(self,
               kernel_shape: int | Sequence[int],
               channel_multiplier: int = 1,
               stride: int | Sequence[int] = 1,
               rate: int | Sequence[int] = 1,
               padding: str = "SAME",
               with_bias: bool = True,
               w_init: types.Initializer | None = None,
               b_init: types.Initializer | None = None,
               data_format: str = "NHWC",
               name: str | None = None):
    """Constructs a `DepthwiseConv2D` module.

    Args:
      kernel_shape: Kernel size: an int or `(height, width)`.
      channel_multiplier: Number of filters per input channel.
      stride: Stride: an int or `(height, width)`.
      rate: Dilation rate: an int or `(height, width)`. `stride` must be 1
        where `rate > 1` (TensorFlow's strided dilated depthwise convolution
        returns wrong values).
      padding: "SAME" or "VALID" (any case).
      with_bias: Whether to add a bias `b`.
      w_init: Initializer for `w`; by default a truncated normal with stddev
        `1 / sqrt(prod(kernel_shape))`.
      b_init: Initializer for `b`; zeros by default. Must be None without a
        bias.
      data_format: "NHWC" (channels-last) or "NCHW".
      name: Name of the module.
    """
    super().__init__(name=name)
    owner = type(self).__name__
    self.channel_multiplier = int(arguments.check_positive_int(
        owner, "channel_multiplier", channel_multiplier))
    self._set_spatial(owner, 2, kernel_shape, stride, rate,
                      "TensorFlow's strided dilated depthwise convolution is "
                      "wrong")
    self.rate = self._rate
    self.kernel_shape = kernel_shape
    self.padding = conv.string_padding(owner, padding)
    self._set_weights(owner, data_format, with_bias, w_init, b_init)
    # Sonnet's layout of the stride: four values in data_format order.
    if self._channel_index == 1:
      self.stride = (1, 1) + self._stride
    else:
      self.stride = (1,) + self._stride + (1,)

  def _weight_shape(self) -> tuple[int, ...]:
    return self._kernel + (self.input_channels, self.channel_multiplier)

  def _fan_in(self) -> int:
    return math.prod(self._kernel)

  def _bias_size(self) -> int:
    return self.input_channels * self.channel_multiplier

  def _convolve(self, x: tf.Tensor) -> tf.Tensor:
    """The depthwise convolution of channels-last `x`, without the bias."""
    kernel = conv.effective_kernel(self._kernel, self._rate)
    if self.padding == "VALID":
      x = conv.check_fits(self, x, kernel, "with VALID padding")
    stride_h, stride_w = self._stride
    if stride_h == stride_w:
      return tf.nn.depthwise_conv2d(
          x, self.w, strides=(1, stride_h, stride_w, 1), padding=self.padding,
          dilations=self._rate)
    # TensorFlow's Eigen CPU kernel refuses unequal strides: pad as the
    # strided op would, convolve at stride 1 and keep every stride-th row
    # and column (rate is 1 here).
    if self.padding == "SAME":
      sizes = [s if s is not None else d for s, d in
               zip(x.shape[1:3].as_list(), tf.unstack(tf.shape(x)[1:3]))]
      x = tf.pad(x, [[0, 0]] + [
          _same_padding(size, s, k)
          for size, s, k in zip(sizes, self._stride, kernel)] + [[0, 0]])
    outputs = tf.nn.depthwise_conv2d(x, self.w, strides=(1, 1, 1, 1),
                                     padding="VALID")
    return outputs[:, ::stride_h, ::stride_w]
