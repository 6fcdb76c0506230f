"""Transposed convolutions: `ConvNDTranspose` and Conv{1,2,3}DTranspose.

A transposed convolution maps a `[N, *in, C_in]` input to the `[N, *out,
C_out]` output whose (forward) convolution with the same kernel, stride and
padding has the input's shape: it is the gradient of that convolution.

Like `ConvND`, channels-first inputs are transposed to channels-last around
the op. A dilation rate > 1 is applied by spreading the kernel out with zeros
(the exact definition of dilation): TensorFlow's plain CPU kernels have no
dilated transposed convolution, and this also allows `stride > 1` together
with `rate > 1`.
"""

from typing import Any, Sequence

import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import checks
from sonnet_like.core import types
from sonnet_like.modules import conv

OUTPUT_SHAPE_ERROR = (
    "{module} cannot produce spatial output shape {output} from spatial "
    "input sizes {sizes}: with stride {stride}, effective kernel {kernel} "
    "and {padding} padding, that output needs input sizes {expected}. Drop "
    "output_shape to get the default output shape, or change it.")


def dilate(w: tf.Tensor, rate: Sequence[int]) -> tf.Tensor:
  """Spreads the leading `len(rate)` axes of `w` out with `rate - 1` zeros.

  Args:
    w: A kernel `[k_1, ..., k_n, ...]` with static shape.
    rate: The dilation rate of each of the first `n` axes.

  Returns:
    The kernel of shape `[(k_1 - 1) * rate_1 + 1, ...]` with the original
    taps `rate` apart and zeros in between.
  """
  for axis, r in enumerate(rate):
    if r == 1:
      continue
    shape = w.shape.as_list()
    k = shape[axis]
    spread = tf.expand_dims(w, axis + 1)
    paddings = [[0, 0]] * (len(shape) + 1)
    paddings[axis + 1] = [0, r - 1]
    spread = tf.pad(spread, paddings)
    spread = tf.reshape(spread, shape[:axis] + [k * r] + shape[axis + 1:])
    w = spread[(slice(None),) * axis + (slice(0, (k - 1) * r + 1),)]
  return w


def default_output_size(size: Any, stride: int, kernel: int,
                        padding: str) -> Any:
  """Sonnet's default output size: `in * stride` (+ `kernel - 1` if VALID)."""
  size = size * stride
  return size + kernel - 1 if padding == "VALID" else size


def input_size_for(output: Any, stride: int, kernel: int, padding: str) -> Any:
  """The input size whose transposed convolution can produce `output`."""
  if padding == "VALID":
    output = output - kernel + 1
  return -(-output // stride)  # Ceiling division, for ints and tensors.


def _length(shape: Any) -> int | None:
  """The length of a sequence, array or 1-D tensor; None for a scalar."""
  if isinstance(shape, (list, tuple)):
    return len(shape)
  static = getattr(shape, "shape", None)
  if static is not None and len(static) == 1:
    return int(static[0]) if static[0] is not None else None
  return None


class ConvNDTranspose(conv.ConvBase):
  """An N-dimensional transposed convolution (N = 1, 2 or 3), with a bias.

  `w` has shape `kernel_shape + [output_channels, input_channels]` and `b`
  shape `[output_channels]`. Without `output_shape` the spatial output size
  is `input * stride` for SAME padding and `input * stride + k - 1` for
  VALID, where `k` is the dilated kernel size.

      >>> import tensorflow as tf
      >>> from sonnet_like.modules.conv_transpose import ConvNDTranspose
      >>> up = ConvNDTranspose(2, output_channels=4, kernel_shape=3, stride=2,
      ...                      name="up")
      >>> up(tf.ones([1, 5, 5, 3])).shape
      TensorShape([1, 10, 10, 4])
      >>> up.w.shape
      TensorShape([3, 3, 4, 3])
  """

  def __init__(self,
               num_spatial_dims: int,
               output_channels: int,
               kernel_shape: int | Sequence[int],
               output_shape: types.ShapeLike | None = None,
               stride: int | Sequence[int] = 1,
               rate: int | Sequence[int] = 1,
               padding: str = "SAME",
               with_bias: bool = True,
               w_init: types.Initializer | None = None,
               b_init: types.Initializer | None = None,
               data_format: str | None = None,
               name: str | None = None):
    """Constructs a `ConvNDTranspose` module.

    Args:
      num_spatial_dims: Number of spatial dimensions: 1, 2 or 3.
      output_channels: Number of output channels.
      kernel_shape: Kernel size: an int, or one per spatial dimension.
      output_shape: Spatial output size: an int, or one per spatial
        dimension. None (default) picks it from the input as described above.
        Stride > 1 makes several output sizes possible for one input size.
      stride: Upsampling factor: an int or one per spatial dimension.
      rate: Dilation rate: an int or one per spatial dimension.
      padding: "SAME" or "VALID" (any case).
      with_bias: Whether to add a bias `b`.
      w_init: Initializer for `w`; by default a truncated normal with stddev
        `1 / sqrt(prod(kernel_shape) * input_channels)`.
      b_init: Initializer for `b`; zeros by default. Must be None without a
        bias.
      data_format: Channels-last ("NWC", "NHWC", "NDHWC") or channels-first
        ("NCW", "NCHW", "NCDHW"); None means channels-last.
      name: Name of the module.
    """
    super().__init__(name=name)
    owner = type(self).__name__
    n = conv.check_spatial_dims(
        owner, num_spatial_dims, " We only support transpose convolution "
        "operations for num_spatial_dims=1, 2 or 3, received "
        f"num_spatial_dims={num_spatial_dims!r}.")
    self.output_channels = int(arguments.check_positive_int(
        owner, "output_channels", output_channels))
    self._set_spatial(owner, n, kernel_shape, stride, rate)
    if not isinstance(padding, str) or padding.upper() not in ("SAME",
                                                               "VALID"):
      raise checks.ArgumentTypeError(
          f"{owner} only takes string padding, please provide either `SAME` "
          f"or `VALID`, got {padding!r}.")
    self.padding = padding.upper()
    self.kernel_shape = kernel_shape
    self.stride = stride
    self.rate = rate
    self._effective_kernel = conv.effective_kernel(self._kernel, self._rate)
    self.output_shape = None
    if output_shape is not None:
      if isinstance(output_shape, tf.TensorShape):
        output_shape = output_shape.as_list()
      length = _length(output_shape)
      if length is not None and length != n:
        raise ValueError(
            f"{owner}: The output_shape must be of length {n} but instead "
            f"was {length} (output_shape={output_shape!r}).")
      self.output_shape = conv.positive_ints(owner, "output_shape",
                                             output_shape, n)
      if self.padding == "VALID" and any(
          o < k for o, k in zip(self.output_shape, self._effective_kernel)):
        raise ValueError(
            f"{owner}: output_shape must be at least the effective kernel "
            f"size {self._effective_kernel} with VALID padding, got "
            f"{output_shape!r}.")
    self._set_weights(owner, data_format, with_bias, w_init, b_init)

  def _weight_shape(self) -> tuple[int, ...]:
    return self._kernel + (self.output_channels, self.input_channels)

  def _convolve(self, x: tf.Tensor) -> tf.Tensor:
    """The transposed convolution of channels-last `x`, without the bias."""
    x, spatial = self._output_spatial(x)
    output_shape = tf.stack([tf.shape(x)[0], *spatial, self.output_channels])
    return tf.nn.conv_transpose(x, dilate(self.w, self._rate), output_shape,
                                strides=self._stride, padding=self.padding)

  def _output_spatial(self, x: tf.Tensor) -> tuple[tf.Tensor, list[Any]]:
    """Channels-last `x` (checked) and the spatial output sizes."""
    static = x.shape[1:-1].as_list()
    dynamic = tf.unstack(tf.shape(x)[1:-1])
    sizes = [s if s is not None else d for s, d in zip(static, dynamic)]
    settings = list(zip(self._stride, self._effective_kernel))
    if self.output_shape is None:
      return x, [default_output_size(size, s, k, self.padding)
                 for size, (s, k) in zip(sizes, settings)]
    expected = [input_size_for(o, s, k, self.padding)
                for o, (s, k) in zip(self.output_shape, settings)]
    message = OUTPUT_SHAPE_ERROR.format(
        module=checks.describe(self), output=self.output_shape,
        sizes="{sizes}", stride=self._stride, kernel=self._effective_kernel,
        padding=self.padding, expected=tuple(expected))
    if any(s is not None and s != e for s, e in zip(static, expected)):
      raise ValueError(message.format(sizes=tuple(static)))
    if None in static:
      check = tf.debugging.assert_equal(
          tf.shape(x)[1:-1], tf.constant(expected, tf.int32),
          message=message.format(sizes="that differ"))
      with tf.control_dependencies([check]):
        x = tf.identity(x)
    return x, list(self.output_shape)


class Conv1DTranspose(ConvNDTranspose):
  """A 1D transposed convolution over `[N, W, C]` (or `[N, C, W]`) inputs.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> up = snt.Conv1DTranspose(2, kernel_shape=4, stride=2,
      ...                          padding="VALID", name="up1d")
      >>> up(tf.ones([1, 5, 3])).shape
      TensorShape([1, 13, 2])
  """

  __init__ = conv.fixed_dims_init(ConvNDTranspose.__init__, 1)


class Conv2DTranspose(ConvNDTranspose):
  """A 2D transposed convolution over `[N, H, W, C]` (or `[N, C, H, W]`).

      >>> import sonnet_like as snt, tensorflow as tf
      >>> up = snt.Conv2DTranspose(2, kernel_shape=3, output_shape=(9, 10),
      ...                          stride=2, name="up2d")
      >>> up(tf.ones([1, 5, 5, 3])).shape
      TensorShape([1, 9, 10, 2])
  """

  __init__ = conv.fixed_dims_init(ConvNDTranspose.__init__, 2)


class Conv3DTranspose(ConvNDTranspose):
  """A 3D transposed convolution over `[N, D, H, W, C]` (or `[N, C, D, H, W]`).

      >>> import sonnet_like as snt, tensorflow as tf
      >>> up = snt.Conv3DTranspose(2, kernel_shape=3, stride=(1, 2, 2),
      ...                          name="up3d")
      >>> up(tf.ones([1, 2, 3, 4, 5])).shape
      TensorShape([1, 2, 6, 8, 2])
  """

  __init__ = conv.fixed_dims_init(ConvNDTranspose.__init__, 3)
