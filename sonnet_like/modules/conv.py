"""Convolutions: the `ConvND` base and the thin `Conv1D`, `Conv2D`, `Conv3D`.

Channels-first inputs (`NCW`, `NCHW`, `NCDHW`) are transposed to channels-last
around the convolution: TensorFlow's CPU kernels do not support channels-first
for every op (plain Eigen `Conv2D` refuses `NCHW`), and this way the same
code runs on every device and under XLA.

The module-level helpers are shared by the conv family (`conv_transpose.py`,
`depthwise_conv.py`).
"""

import inspect
import math
from typing import Any, Callable, Sequence

import numpy as np
import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import base
from sonnet_like.core import checks
from sonnet_like.core import initializers
from sonnet_like.core import once
from sonnet_like.core import types
from sonnet_like.modules import pad

# The layouts each number of spatial dimensions accepts: (last, first).
DATA_FORMATS = {1: ("NWC", "NCW"), 2: ("NHWC", "NCHW"), 3: ("NDHWC", "NCDHW")}
SUPPORTED_DTYPES = (tf.float16, tf.bfloat16, tf.float32, tf.float64)

TOO_SMALL_ERROR = (
    "{module} needs spatial sizes of at least {kernel} (the kernel shape "
    "dilated by the rate) {context}, got spatial sizes {sizes}. Use "
    "padding='SAME', a padding function such as snt.pad.same, or a smaller "
    "kernel_shape or rate.")


# --- Constructor checks shared by the conv family. ---


def _is_int(value: Any) -> bool:
  return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def positive_ints(owner: str, argument: str, value: Any,
                  n: int) -> tuple[int, ...]:
  """An int or a sequence of 1 or `n` ints -> `n` positive ints."""
  values = tuple(value) if isinstance(value, (list, tuple)) else (value,)
  if len(values) == 1:
    values *= n
  if len(values) != n or not all(_is_int(v) and v >= 1 for v in values):
    raise checks.ArgumentTypeError(
        f"{owner}: {argument} must be a positive int or a sequence of {n} "
        f"positive ints: {argument} must be a scalar or sequence of length 1 "
        f"or sequence of length {n}, got {value!r}.")
  return tuple(int(v) for v in values)


def string_padding(owner: str, padding: Any) -> str:
  """'SAME' or 'VALID' (any case), upper-cased; anything else is an error."""
  if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
    raise ValueError(f"{owner}: padding must be 'SAME' or 'VALID', got "
                     f"{padding!r}.")
  return padding.upper()


def channel_index(owner: str, data_format: Any, n: int) -> int:
  """1 for the channels-first layout of `n` spatial dims, -1 for the other."""
  checks.check_choice(owner, "data_format", data_format, DATA_FORMATS[n])
  return 1 if data_format == DATA_FORMATS[n][1] else -1


def bias_initializer(owner: str, with_bias: bool,
                     b_init: types.Initializer | None
                    ) -> types.Initializer | None:
  """`b_init`, zeros by default; an error if given without a bias."""
  if not isinstance(with_bias, (bool, np.bool_)):
    raise ValueError(f"{owner}: with_bias must be a bool, got {with_bias!r}.")
  arguments.check_no_b_init_without_bias(owner, with_bias, b_init)
  if not with_bias:
    return None
  return initializers.Zeros() if b_init is None else b_init


def check_initializer(owner: str, argument: str, value: Any) -> None:
  if value is not None and not callable(value):
    raise TypeError(f"{owner}: {argument} must be None or a callable "
                    f"(shape, dtype) -> tensor, got {value!r}.")


def default_w_init(fan_in: int) -> initializers.Initializer:
  """Truncated normal with stddev `1 / sqrt(fan_in)`, Sonnet's default."""
  return initializers.TruncatedNormal(stddev=1 / math.sqrt(fan_in))


def effective_kernel(kernel: Sequence[int],
                     rate: Sequence[int]) -> tuple[int, ...]:
  """The size a kernel covers once dilated: `(k - 1) * rate + 1`."""
  return tuple((k - 1) * r + 1 for k, r in zip(kernel, rate))


# --- Input checks and layout changes shared by the conv family. ---


def layout(data_format: str) -> str:
  """"NHWC" -> "[N, H, W, C]", for error messages."""
  return "[" + ", ".join(data_format) + "]"


def missing_channel_advice(inputs: tf.Tensor, n: int,
                           data_format: str) -> str:
  """How to add a channel axis to an input one axis short (else "")."""
  if inputs.shape.rank != n + 1:
    return ""
  channels_first = data_format.startswith("NC")
  index = "x[:, None]" if channels_first else "x[..., None]"
  dims = inputs.shape.as_list()
  shape = [dims[0], 1, *dims[1:]] if channels_first else [*dims, 1]
  return (f"If it has one channel, add the channel axis: {index} has shape "
          f"{tuple(shape)}.")


def check_build_input(module: Any, inputs: tf.Tensor, n: int,
                      data_format: str) -> None:
  """Rank `n + 2` and a dtype TensorFlow's convolutions support."""
  checks.check_rank(module, inputs, rank=n + 2, layout=layout(data_format),
                    advice=missing_channel_advice(inputs, n, data_format))
  dtype = tf.as_dtype(inputs.dtype)
  if dtype not in SUPPORTED_DTYPES:
    raise checks.InputDTypeError(
        f"{checks.describe(module)} expects a float16, bfloat16, float32 or "
        f"float64 input. Expected floating point type, got {dtype.name}. "
        "Cast it first, e.g. tf.cast(x, tf.float32).")


def check_call_input(module: Any, inputs: tf.Tensor, n: int, data_format: str,
                     built_dtype: tf.DType, input_channels: int) -> tf.Tensor:
  """Rank, dtype and channel count against what `module` was built for."""
  checks.check_rank(module, inputs, rank=n + 2, layout=layout(data_format),
                    advice=missing_channel_advice(inputs, n, data_format))
  checks.check_built_dtype(module, inputs, built_dtype)
  axis = 1 if data_format.startswith("NC") else -1
  return checks.check_dim(module, inputs, axis, input_channels,
                          "input channels")


def check_fits(module: Any, x: tf.Tensor, kernel: Sequence[int],
               context: str) -> tf.Tensor:
  """Checks that the spatial sizes of channels-last `x` are >= `kernel`.

  TensorFlow's answer to a VALID convolution with a kernel larger than its
  input depends on the kernel: an error, an empty tensor, or (oneDNN) a
  tensor of the wrong shape. Static sizes are checked now, unknown ones when
  the graph runs.
  """
  sizes = x.shape[1:-1].as_list()
  message = TOO_SMALL_ERROR.format(
      module=checks.describe(module), kernel=tuple(kernel), context=context,
      sizes="{sizes}")
  known = [s for s in sizes if s is not None]
  if any(s is not None and s < k for s, k in zip(sizes, kernel)):
    raise ValueError(message.format(sizes=tuple(sizes)))
  if len(known) == len(sizes):
    return x
  check = tf.debugging.assert_greater_equal(
      tf.shape(x)[1:-1], tf.constant(kernel, tf.int32),
      message=message.format(sizes="smaller than that"))
  with tf.control_dependencies([check]):
    return tf.identity(x)


def to_channels_last(x: tf.Tensor) -> tf.Tensor:
  """`[N, C, ...]` -> `[N, ..., C]`."""
  rank = x.shape.rank
  return tf.transpose(x, [0] + list(range(2, rank)) + [1])


def to_channels_first(x: tf.Tensor) -> tf.Tensor:
  """`[N, ..., C]` -> `[N, C, ...]`."""
  rank = x.shape.rank
  return tf.transpose(x, [0, rank - 1] + list(range(1, rank - 1)))


def check_spatial_dims(owner: str, n: Any, sonnet_words: str = "") -> int:
  """`n` if it is 1, 2 or 3; otherwise an error (ending with `sonnet_words`)."""
  if n not in (1, 2, 3):
    raise ValueError(f"{owner}: num_spatial_dims must be 1, 2 or 3, got "
                     f"{n!r}.{sonnet_words}")
  return n


def layout_of(owner: str, data_format: str | None,
              n: int) -> tuple[str, int]:
  """`(data_format, channel index)`; None means channels-last."""
  if data_format is None:
    data_format = DATA_FORMATS[n][0]
  return data_format, channel_index(owner, data_format, n)


class ConvBase(base.Module):
  """What the conv family shares: weights and bias, input checks, layout.

  A subclass's `__init__` calls `_set_spatial` and `_set_weights`, and it
  defines `_weight_shape`, `_convolve` (on a channels-last input, without
  the bias) and, where they differ from a convolution's, `_fan_in` and
  `_bias_size`. The first call checks the input and creates `w` (and `b`);
  every call checks the input against them and moves channels-first inputs
  to channels-last around `_convolve`.
  """

  def _set_spatial(self, owner: str, n: int, kernel_shape: Any, stride: Any,
                   rate: Any, no_strided_dilation: str = "") -> None:
    """Checks and stores the kernel, stride and rate of `n` dimensions; with
    `no_strided_dilation` (the reason), stride > 1 with rate > 1 is refused."""
    self._num_spatial_dims = n
    self._kernel = positive_ints(owner, "kernel_shape", kernel_shape, n)
    self._stride = positive_ints(owner, "stride", stride, n)
    self._rate = positive_ints(owner, "rate", rate, n)
    if (no_strided_dilation and max(self._stride) > 1 and
        max(self._rate) > 1):
      raise ValueError(
          f"{owner}: stride must be 1 when rate > 1 ({no_strided_dilation}), "
          f"got stride={stride!r} and rate={rate!r}.")

  def _set_weights(self, owner: str, data_format: str | None,
                   with_bias: bool, w_init: types.Initializer | None,
                   b_init: types.Initializer | None) -> None:
    """Checks and stores the layout, the initializers and `with_bias`."""
    self.data_format, self._channel_index = layout_of(
        owner, data_format, self._num_spatial_dims)
    check_initializer(owner, "w_init", w_init)
    check_initializer(owner, "b_init", b_init)
    self.with_bias = bool(with_bias)
    self.b_init = bias_initializer(owner, with_bias, b_init)
    self.w_init = w_init

  def _weight_shape(self) -> tuple[int, ...]:
    raise NotImplementedError

  def _fan_in(self) -> int:
    return math.prod(self._kernel) * self.input_channels

  def _bias_size(self) -> int:
    return self.output_channels

  def _convolve(self, x: tf.Tensor) -> tf.Tensor:
    raise NotImplementedError

  def _built(self) -> None:
    """Runs at the end of the first call's build (for subclasses)."""

  @once.once
  def _initialize(self, inputs: tf.Tensor) -> None:
    """Creates `w` and `b` for the input's channel count and dtype."""
    check_build_input(self, inputs, self._num_spatial_dims, self.data_format)
    self.input_channels = checks.known_dim(
        self, inputs, self._channel_index, "number of input channels")
    self._dtype = inputs.dtype
    if self.w_init is None:
      self.w_init = default_w_init(self._fan_in())
    self.w = tf.Variable(self.w_init(self._weight_shape(), self._dtype),
                         name="w")
    if self.with_bias:
      self.b = tf.Variable(self.b_init((self._bias_size(),), self._dtype),
                           name="b")
    self._built()

  def __call__(self, inputs: tf.Tensor) -> tf.Tensor:
    """Applies the convolution to `inputs` and adds the bias.

    Args:
      inputs: A float16, bfloat16, float32 or float64 tensor of rank
        `num_spatial_dims + 2` in `data_format` layout.

    Returns:
      A tensor of the same layout with the module's output channels.
    """
    inputs = tf.convert_to_tensor(inputs)
    self._initialize(inputs)
    inputs = check_call_input(self, inputs, self._num_spatial_dims,
                              self.data_format, self._dtype,
                              self.input_channels)
    channels_first = self._channel_index == 1
    x = to_channels_last(inputs) if channels_first else inputs
    outputs = self._convolve(x)
    if self.with_bias:
      outputs = tf.nn.bias_add(outputs, self.b)
    return to_channels_first(outputs) if channels_first else outputs


def fixed_dims_init(nd_init: Callable[..., None],
                    n: int) -> Callable[..., None]:
  """The `__init__` of a thin class such as `Conv2D`: `nd_init` (e.g.
  `ConvND.__init__`) with `num_spatial_dims=n` and the channels-last layout
  of `n` dimensions as the default `data_format`. Its signature is
  `nd_init`'s without `num_spatial_dims`, as Sonnet 2's thin classes have.
  """
  signature = inspect.signature(nd_init)
  parameters = [
      p.replace(default=DATA_FORMATS[n][0], annotation=str)
      if p.name == "data_format" else p
      for p in signature.parameters.values() if p.name != "num_spatial_dims"]
  signature = signature.replace(parameters=parameters)

  def __init__(self, *args, **kwargs):
    try:
      bound = signature.bind(self, *args, **kwargs)
    except TypeError as e:
      raise TypeError(f"{type(self).__name__}: {e}") from None
    bound.apply_defaults()
    arguments = dict(bound.arguments)
    del arguments["self"]
    nd_init(self, n, **arguments)

  __init__.__signature__ = signature
  __init__.__doc__ = (
      f"Constructs the module: the arguments of `{nd_init.__qualname__[:-9]}`"
      f" without `num_spatial_dims` (here {n}); `data_format` is "
      f"{DATA_FORMATS[n][0]!r} (channels-last, the default) or "
      f"{DATA_FORMATS[n][1]!r}.")
  return __init__


class ConvND(ConvBase):
  """An N-dimensional convolution (N = 1, 2 or 3) with an optional bias.

  `w` has shape `kernel_shape + [input_channels, output_channels]` and `b`
  shape `[output_channels]`. The input channel count is fixed when the module
  is first called; later inputs must match it. `snt.Conv1D`, `snt.Conv2D`
  and `snt.Conv3D` fix N (Sonnet does not export `ConvND` at top level).

      >>> import tensorflow as tf
      >>> from sonnet_like.modules.conv import ConvND
      >>> conv = ConvND(2, output_channels=4, kernel_shape=3, name="conv")
      >>> conv(tf.ones([1, 8, 8, 3])).shape
      TensorShape([1, 8, 8, 4])
      >>> conv.w.shape
      TensorShape([3, 3, 3, 4])
  """

  def __init__(self,
               num_spatial_dims: int,
               output_channels: int,
               kernel_shape: int | Sequence[int],
               stride: int | Sequence[int] = 1,
               rate: int | Sequence[int] = 1,
               padding: types.PaddingLike = "SAME",
               with_bias: bool = True,
               w_init: types.Initializer | None = None,
               b_init: types.Initializer | None = None,
               data_format: str | None = None,
               name: str | None = None):
    """Constructs a `ConvND` module.

    Args:
      num_spatial_dims: Number of spatial dimensions: 1, 2 or 3.
      output_channels: Number of output channels.
      kernel_shape: Kernel size: an int for every spatial dimension, or one
        per dimension.
      stride: Step between kernel applications: an int or one per dimension.
      rate: Dilation rate (gap between kernel taps): an int or one per
        dimension. TensorFlow has no strided dilated convolution, so `stride`
        must be 1 where `rate > 1`.
      padding: "SAME" or "VALID" (any case), a padding function from
        `snt.pad` (or any `f(effective_kernel_size) -> [before, after]`), or
        one such function per spatial dimension.
      with_bias: Whether to add a bias `b`.
      w_init: Initializer for `w`; by default a truncated normal with stddev
        `1 / sqrt(fan_in)`, `fan_in = prod(kernel_shape) * input_channels`.
      b_init: Initializer for `b`; zeros by default. Must be None without a
        bias.
      data_format: Channels-last ("NWC", "NHWC", "NDHWC") or channels-first
        ("NCW", "NCHW", "NCDHW"); None means channels-last.
      name: Name of the module.
    """
    super().__init__(name=name)
    owner = type(self).__name__
    n = check_spatial_dims(owner, num_spatial_dims)
    self.output_channels = int(arguments.check_positive_int(
        owner, "output_channels", output_channels))
    self._set_spatial(owner, n, kernel_shape, stride, rate,
                      "TensorFlow has no strided dilated convolution")
    # As given, like Sonnet; the tuples above are what the maths uses.
    self.kernel_shape = kernel_shape
    self.stride = stride
    self.rate = rate
    if isinstance(padding, str) and padding.upper() in ("SAME", "VALID"):
      self.conv_padding = padding.upper()
      self.padding_func = None
      self._padding_fns = None
    else:
      self.conv_padding = "VALID"
      self.padding_func = padding
      self._padding_fns = _padding_functions(owner, padding, n)
    self._set_weights(owner, data_format, with_bias, w_init, b_init)

  def _weight_shape(self) -> tuple[int, ...]:
    return self._kernel + (self.input_channels, self.output_channels)

  def _built(self) -> None:
    if self._padding_fns is not None:
      # Padding is applied to the channels-last view of the input.
      self._padding = pad.create(self._padding_fns, self._kernel, self._rate,
                                 self._num_spatial_dims, channel_index=-1)
      _check_paddings(type(self).__name__, self._padding_fns,
                      self._padding[1:-1])

  def _convolve(self, x: tf.Tensor) -> tf.Tensor:
    """Pads (with a padding function), checks the sizes and convolves."""
    if self._padding_fns is not None:
      x = tf.pad(x, self._padding)
    if self.conv_padding == "VALID":
      context = ("with VALID padding" if self._padding_fns is None else
                 "after its padding function is applied")
      x = check_fits(self, x, effective_kernel(self._kernel, self._rate),
                     context)
    return tf.nn.convolution(x, self.w, strides=self._stride,
                             padding=self.conv_padding, dilations=self._rate)


def _padding_functions(owner: str, padding: Any, n: int) -> tuple:
  """A padding function or a sequence of 1 or `n` of them -> `n` of them."""
  functions = (tuple(padding) if isinstance(padding, (list, tuple)) else
               (padding,))
  if len(functions) == 1:
    functions *= n
  if len(functions) != n or not all(callable(f) for f in functions):
    # Sonnet raises a TypeError for a sequence of the wrong length.
    raise checks.ArgumentTypeError(
        f"{owner}: padding must be 'SAME', 'VALID', a padding function such "
        f"as snt.pad.causal, or a sequence of {n} of them, got {padding!r}.")
  return functions


def _check_paddings(owner: str, functions: Sequence[Any],
                    paddings: Sequence[Any]) -> None:
  for function, pair in zip(functions, paddings):
    if (len(pair) != 2 or not all(_is_int(p) and p >= 0 for p in pair)):
      raise ValueError(
          f"{owner}: padding function {function!r} must return two "
          f"non-negative ints [before, after], got {list(pair)!r}.")


class Conv1D(ConvND):
  """A 1D convolution over `[N, W, C]` (or `[N, C, W]`) inputs.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> conv = snt.Conv1D(4, kernel_shape=3, stride=2, name="conv1d")
      >>> conv(tf.ones([2, 10, 3])).shape
      TensorShape([2, 5, 4])
  """

  __init__ = fixed_dims_init(ConvND.__init__, 1)


class Conv2D(ConvND):
  """A 2D convolution over `[N, H, W, C]` (or `[N, C, H, W]`) inputs.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> conv = snt.Conv2D(8, kernel_shape=(3, 5), padding="VALID",
      ...                   name="conv2d")
      >>> conv(tf.ones([2, 10, 10, 3])).shape
      TensorShape([2, 8, 6, 8])
      >>> conv(tf.ones([2, 10, 10, 6]))
      Traceback (most recent call last):
        ...
      sonnet_like.core.checks.InputShapeError: Conv2D 'conv2d' was built for
      input channels 3, got 6 ...
  """

  __init__ = fixed_dims_init(ConvND.__init__, 2)


class Conv3D(ConvND):
  """A 3D convolution over `[N, D, H, W, C]` (or `[N, C, D, H, W]`) inputs.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> conv = snt.Conv3D(2, kernel_shape=3, data_format="NCDHW",
      ...                   name="conv3d")
      >>> conv(tf.ones([1, 4, 5, 6, 7])).shape
      TensorShape([1, 2, 5, 6, 7])
  """

  __init__ = fixed_dims_init(ConvND.__init__, 3)
