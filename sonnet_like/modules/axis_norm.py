"""LayerNorm and InstanceNorm: normalization over chosen axes of each input."""

import collections.abc
import numbers
from typing import Any, Sequence, Union

import tensorflow as tf

from sonnet_like.core import checks
from sonnet_like.core import initializers
from sonnet_like.core import once
from sonnet_like.core import types
from sonnet_like.core import utils
from sonnet_like.modules import norm_settings

Axis = Union[int, slice, Sequence[int]]


def check_axis(owner: str, axis: Any) -> None:
  """Accepts an int, a slice or a sequence of ints."""
  if isinstance(axis, slice) or _is_int(axis):
    return
  if (isinstance(axis, collections.abc.Iterable) and
      not isinstance(axis, (str, bytes)) and all(_is_int(a) for a in axis)):
    return
  raise ValueError(f"{owner}: `axis` should be an int, slice or iterable of "
                   f"ints, got {axis!r}.")


def resolve_axes(module: Any, axis: Axis, rank: int) -> tuple[int, ...]:
  """The non-negative axes `axis` selects in a rank-`rank` input.

  Raises:
    ValueError: naming `module`, if an axis is out of range or none is left.
  """
  if isinstance(axis, slice):
    axes = tuple(range(rank))[axis]
  else:
    axes = (axis,) if _is_int(axis) else tuple(axis)
    for a in axes:
      if not -rank <= a < rank:
        raise checks.InputShapeError(
            f"{checks.describe(module)} normalizes over axis {a}, which a "
            f"rank-{rank} input does not have.")
    axes = tuple(sorted({int(a) % rank for a in axes}))
  if not axes:
    raise ValueError(f"{checks.describe(module)} has no axis to normalize "
                     f"over: axis={axis!r} selects none of a rank-{rank} "
                     "input's axes.")
  return axes


def _is_int(value: Any) -> bool:
  # Python bools are ints, and Sonnet 2 takes them as axes 0 and 1: code that
  # passes `GroupNorm(groups, True, True)` (axis=True) runs there and here.
  return isinstance(value, numbers.Integral)


class AxisNormBase(norm_settings.NormSettings):
  """Shared part of LayerNorm, InstanceNorm and GroupNorm.

  Holds the settings and the axes to normalize over, creates the per-channel
  scale/offset and checks later inputs against the first one. `__call__`
  checks the input and the scale and offset; subclasses define `_initialize`
  and `_normalize`. Its constructor is `LayerNorm`'s.
  """

  @norm_settings.documented(axis=(
      "The axes to normalize over: an int, a sequence of ints or a slice "
      "(e.g. -1 for the channels only, `slice(1, None)` for all but the "
      "batch)."))
  def __init__(self, axis: Axis, create_scale: bool, create_offset: bool,
               eps: types.FloatLike = 1e-5,
               scale_init: initializers.Initializer | None = None,
               offset_init: initializers.Initializer | None = None,
               data_format: str = "channels_last", name: str | None = None):
    super().__init__(name=name)
    self._set_norm_settings(create_scale, create_offset, eps, scale_init,
                            offset_init, data_format)
    check_axis(type(self).__name__, axis)
    self._axis = axis

  def __call__(self, inputs: tf.Tensor, scale: tf.Tensor | None = None,
               offset: tf.Tensor | None = None) -> tf.Tensor:
    """Normalizes `inputs`.

    Args:
      inputs: A tensor in the module's `data_format`.
      scale: A tensor broadcastable to `inputs`; only without `create_scale`.
      offset: A tensor broadcastable to `inputs`; only without
        `create_offset`.

    Returns:
      The normalized tensor, shaped like `inputs`.
    """
    inputs = tf.convert_to_tensor(inputs)
    self._check_no_learnt_override(scale, offset)  # Before building.
    self._initialize(inputs)
    inputs = self._check_like_built(inputs)
    scale, offset = self._scale_and_offset(scale, offset)
    return self._normalize(inputs, scale, offset)

  def _build_params(self, inputs: tf.Tensor) -> None:
    """Records the input's rank/dtype/channels; creates scale and offset."""
    checks.check_rank(self, inputs, min_rank=1)
    checks.check_floating(self, inputs)
    rank = inputs.shape.rank
    self._rank = rank
    self._dtype = inputs.dtype
    self._channel_axis = self._channel_index % rank
    self._channels = None
    self.scale = self.offset = None
    if not (self._create_scale or self._create_offset):
      return
    channels = checks.known_dim(self, inputs, self._channel_axis, "channels")
    self._channels = channels
    shape = [channels] + [1] * (rank - 2 if self._channel_axis == 1 else 0)
    if self._create_scale:
      self.scale = tf.Variable(self._scale_init(shape, inputs.dtype),
                               name="scale")
    if self._create_offset:
      self.offset = tf.Variable(self._offset_init(shape, inputs.dtype),
                                name="offset")

  def _scale_and_offset(self, scale: Any, offset: Any) -> tuple:
    """The learnt scale/offset, or those passed at call time (if allowed)."""
    self._check_no_learnt_override(scale, offset)
    return (self.scale if self._create_scale else scale,
            self.offset if self._create_offset else offset)

  def _check_like_built(self, inputs: tf.Tensor) -> tf.Tensor:
    """Checks rank, dtype and channels against the first call."""
    checks.check_rank(self, inputs, rank=self._rank, built=True)
    checks.check_built_dtype(self, inputs, self._dtype)
    if self._channels is None:
      return inputs
    return checks.check_dim(self, inputs, self._channel_axis, self._channels,
                            "channels")


class LayerNorm(AxisNormBase):
  """Normalizes each input over the given axes, with per-channel scale/offset.

  `outputs = scale * (x - mean) / sqrt(variance + eps) + offset`, where the
  mean and variance are taken over `axis` for each remaining index (e.g. each
  example of the batch).

      >>> import sonnet_like as snt, tensorflow as tf
      >>> ln = snt.LayerNorm(axis=-1, create_scale=True, create_offset=True,
      ...                    name="doc_ln")
      >>> ln(tf.constant([[1., 2., 3.]])).numpy().round(3)
      array([[-1.225,  0.   ,  1.225]], dtype=float32)
      >>> [v.name for v in ln.variables]
      ['doc_ln/offset:0', 'doc_ln/scale:0']

  Without `create_scale`/`create_offset` there is no variable of that kind
  and a tensor passed at call time (e.g. for conditional normalization), if
  any, is used instead.

  Attributes:
    scale: The scale variable, or None without `create_scale`.
    offset: The offset variable, or None without `create_offset`.
  """

  @once.once
  def _initialize(self, inputs: tf.Tensor) -> None:
    self._build_params(inputs)
    self._axes = resolve_axes(self, self._axis, self._rank)

  def _normalize(self, inputs: tf.Tensor, scale: Any,
                 offset: Any) -> tf.Tensor:
    mean, variance = tf.nn.moments(inputs, self._axes, keepdims=True)
    return tf.nn.batch_normalization(inputs, mean, variance, offset, scale,
                                     self._eps)


class InstanceNorm(LayerNorm):
  """Normalizes each channel of each example over the spatial axes.

  A `LayerNorm` over the axes between batch and channels.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> norm = snt.InstanceNorm(create_scale=False, create_offset=False,
      ...                         name="instance_norm")
      >>> norm(tf.constant([[[1.], [3.]]])).numpy().ravel()
      array([-0.99999..., 0.99999...], dtype=float32)
  """

  def __init__(self, create_scale: bool, create_offset: bool,
               eps: types.FloatLike = 1e-5,
               scale_init: initializers.Initializer | None = None,
               offset_init: initializers.Initializer | None = None,
               data_format: str = "channels_last", name: str | None = None):
    """Constructs the module; see `LayerNorm` for the arguments."""
    channels_first = utils.channel_index(data_format, "InstanceNorm") == 1
    super().__init__(
        axis=slice(2, None) if channels_first else slice(1, -1),
        create_scale=create_scale, create_offset=create_offset, eps=eps,
        scale_init=scale_init, offset_init=offset_init,
        data_format=data_format, name=name)
