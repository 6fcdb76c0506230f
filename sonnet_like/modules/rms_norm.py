"""RMSNorm: scale by the root mean square over chosen axes (no centring)."""

import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import autograph
from sonnet_like.core import base
from sonnet_like.core import checks
from sonnet_like.core import initializers
from sonnet_like.core import once
from sonnet_like.core import types
from sonnet_like.modules import axis_norm


class RMSNorm(base.Module):
  """`outputs = scale * x / sqrt(mean(x ** 2) + eps)` (Zhang & Sennrich, 2019).

  Haiku's `hk.RMSNorm`: like `LayerNorm` without the mean and the offset;
  the pre-norm of most recent transformers.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> norm = snt.RMSNorm(axis=-1, name="rms_norm")
      >>> norm(tf.constant([[3., 4.]])).numpy().round(3)
      array([[0.849, 1.131]], dtype=float32)
      >>> [v.name for v in norm.variables]
      ['rms_norm/scale:0']
  """

  def __init__(self, axis: axis_norm.Axis = -1, eps: types.FloatLike = 1e-5,
               scale_init: initializers.Initializer | None = None,
               create_scale: bool = True, name: str | None = None):
    """Constructs an RMSNorm.

    Args:
      axis: The axes to take the mean square over (an int, a sequence of
        ints or a slice); the scale has one entry per channel (last axis).
      eps: Added to the mean square.
      scale_init: Initializer of the scale; ones by default.
      create_scale: Whether to learn a scale.
      name: Name of the module.
    """
    super().__init__(name=name)
    axis_norm.check_axis("RMSNorm", axis)
    arguments.check_positive_number("RMSNorm", "eps", eps)
    if not create_scale and scale_init is not None:
      raise ValueError("RMSNorm: scale_init must be None when "
                       f"create_scale=False, got {scale_init!r}.")
    self._axis = axis
    self._eps = eps
    self._scale_init = scale_init or initializers.Ones()
    self._create_scale = create_scale
    if not create_scale:
      base.allow_empty_variables(self)

  @once.once
  def _initialize(self, inputs: tf.Tensor) -> None:
    checks.check_rank(self, inputs, min_rank=1)
    checks.check_floating(self, inputs)
    self._rank = inputs.shape.rank
    self._dtype = inputs.dtype
    self._axes = axis_norm.resolve_axes(self, self._axis, self._rank)
    self.scale = None
    if self._create_scale:
      self._channels = checks.known_dim(self, inputs, -1, "channels")
      self.scale = tf.Variable(
          self._scale_init([self._channels], inputs.dtype), name="scale")

  @autograph.as_written
  def __call__(self, inputs: tf.Tensor) -> tf.Tensor:
    """Normalizes `inputs`; returns a tensor of the same shape."""
    inputs = tf.convert_to_tensor(inputs)
    self._initialize(inputs)
    checks.check_rank(self, inputs, rank=self._rank, built=True)
    checks.check_built_dtype(self, inputs, self._dtype)
    if self.scale is not None:
      inputs = checks.check_dim(self, inputs, -1, self._channels, "channels")
    mean_square = tf.reduce_mean(tf.square(inputs), self._axes, keepdims=True)
    outputs = inputs * tf.math.rsqrt(mean_square + tf.cast(self._eps,
                                                           inputs.dtype))
    return outputs if self.scale is None else outputs * self.scale
