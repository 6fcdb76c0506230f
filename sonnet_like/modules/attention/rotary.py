"""RotaryEmbedding: positions as rotations of pairs of features (RoFormer)."""

from typing import Any

import numpy as np
import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import autograph
from sonnet_like.core import base
from sonnet_like.core import checks


@base.allow_empty_variables
class RotaryEmbedding(base.Module):
  """Rotates feature pairs of queries or keys by angles set by position.

  Feature `i` and feature `i + D/2` of a head form a pair, rotated by the
  angle `position * max_wavelength ** (-2i / D)` (the "half-split" layout of
  GPT-NeoX, Llama and Keras Hub). Applied to queries and keys, the dot
  product of a query at position `m` and a key at position `n` then depends
  on `m - n` only. It has no variables.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> rotary = snt.RotaryEmbedding()
      >>> x = tf.ones([1, 3, 2, 4])                 # [batch, time, heads, D]
      >>> rotary(x).shape
      TensorShape([1, 3, 2, 4])
      >>> rotary(x)[0, 0, 0].numpy()                # position 0: unchanged
      array([1., 1., 1., 1.], dtype=float32)
  """

  def __init__(self, max_wavelength: float = 10_000.,
               name: str | None = None):
    """Constructs a RotaryEmbedding.

    Args:
      max_wavelength: The longest wavelength, of the last pair.
      name: Name of the module.
    """
    super().__init__(name=name)
    arguments.check_positive_number("RotaryEmbedding", "max_wavelength",
                                    max_wavelength)
    self.max_wavelength = max_wavelength

  @autograph.as_written
  def __call__(self, inputs: tf.Tensor,
               positions: Any = None) -> tf.Tensor:
    """Rotates `inputs` of shape `[batch, time, heads, size]`.

    Args:
      inputs: Queries or keys; `size` must be even.
      positions: The position of each time step, `[time]` or
        `[batch, time]`; `0, 1, ...` by default.

    Returns:
      The rotated tensor, shaped like `inputs`.
    """
    inputs = tf.convert_to_tensor(inputs)
    checks.check_rank(self, inputs, rank=4, layout="[batch, time, heads, size]")
    checks.check_floating(self, inputs)
    size = checks.known_dim(self, inputs, -1, "size")
    if size % 2:
      raise checks.InputShapeError(
          f"{checks.describe(self)} rotates pairs of features, so the last "
          f"axis must have an even size, got {size}.")
    if positions is None:
      positions = tf.range(tf.shape(inputs)[1])
    positions = tf.cast(positions, tf.float32)
    exponents = np.arange(size // 2, dtype=np.float64) * 2 / size
    frequencies = tf.constant(self.max_wavelength ** -exponents, tf.float32)
    angles = positions[..., tf.newaxis] * frequencies      # [(B,) T, D/2]
    if angles.shape.rank == 2:
      angles = angles[tf.newaxis]
    angles = angles[:, :, tf.newaxis, :]                    # [B|1, T, 1, D/2]
    cos = tf.cast(tf.cos(angles), inputs.dtype)
    sin = tf.cast(tf.sin(angles), inputs.dtype)
    first, second = tf.split(inputs, 2, axis=-1)
    return tf.concat([first * cos - second * sin,
                      second * cos + first * sin], axis=-1)
