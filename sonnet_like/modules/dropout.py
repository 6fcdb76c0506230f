"""Dropout: zero random units in training, scaling the rest up to match."""

import numbers

import tensorflow as tf

from sonnet_like.core import base
from sonnet_like.core import checks
from sonnet_like.core import types
from sonnet_like.core import utils


def check_rate(owner: str, argument: str, rate: types.FloatLike) -> None:
  """A rate given as a number (or constant tensor) must be in [0, 1)."""
  value = rate
  if isinstance(rate, (tf.Tensor, tf.Variable)):
    value = tf.get_static_value(rate)
    if value is None or getattr(value, "ndim", 0):
      return  # Only known when the graph runs, or not a scalar: TF checks.
    value = value.item()
  if (isinstance(value, bool) or not isinstance(value, numbers.Real) or
      not 0 <= value < 1):
    raise ValueError(f"{owner}: {argument} must be a number in [0, 1), got "
                     f"{rate!r}.")


def dropout(module: base.Module, x: tf.Tensor, rate: types.FloatLike,
            is_training: types.BoolLike,
            noise_shape: types.ShapeLike | None = None,
            seed: int | None = None) -> tf.Tensor:
  """Inverted dropout of `x` when `is_training`, else `x` unchanged.

  A boolean tensor known only when the graph runs becomes a `tf.cond`.

  Args:
    module: The module applying it, named in errors.
    x: A floating-point tensor.
    rate: Probability of dropping each unit, in [0, 1).
    is_training: A bool or scalar boolean tensor.
    noise_shape: Shape of the random mask, broadcastable to `x`.
    seed: Op-level seed of the mask.

  Returns:
    `x` with dropped units zeroed and the others scaled by `1 / (1 - rate)`
    in training; `x` itself otherwise.
  """
  checks.check_is_training(module, is_training)
  x = tf.convert_to_tensor(x)
  checks.check_floating(module, x)
  training = utils.static_bool(is_training)

  def drop():
    return tf.nn.dropout(x, rate=rate, noise_shape=noise_shape, seed=seed)

  if training is None:
    return tf.cond(is_training, drop, lambda: tf.identity(x))
  return drop() if training else x


class Dropout(base.Module):
  """Randomly zeroes units during training; identity otherwise.

  Each unit is dropped with probability `rate` and the kept ones are scaled
  by `1 / (1 - rate)`, so the expected output equals the input and nothing
  needs rescaling at test time.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> drop = snt.Dropout(0.5, name="dropout")
      >>> drop(tf.ones([2, 3]), is_training=False).numpy()
      array([[1., 1., 1.],
             [1., 1., 1.]], dtype=float32)
      >>> sorted(set(drop(tf.ones([100]), is_training=True).numpy().tolist()))
      [0.0, 2.0]
  """

  def __init__(self, rate: types.FloatLike,
               noise_shape: types.ShapeLike | None = None,
               seed: int | None = None, name: str | None = None):
    """Constructs the module.

    Args:
      rate: Probability of dropping each unit, in [0, 1).
      noise_shape: Shape of the random keep/drop mask, broadcastable to the
        input (e.g. `[batch, 1, 1, channels]` drops whole feature maps); the
        input's shape by default.
      seed: Op-level random seed; with the global seed it fixes the sequence
        of masks, not one mask (each call draws a new one).
      name: Name of the module.
    """
    super().__init__(name=name)
    check_rate("Dropout", "rate", rate)
    self._rate = rate
    self._noise_shape = noise_shape
    self._seed = seed

  def __call__(self, x: tf.Tensor, is_training: types.BoolLike) -> tf.Tensor:
    """Applies dropout if `is_training` (a bool or scalar boolean tensor)."""
    return dropout(self, x, self._rate, is_training, self._noise_shape,
                   self._seed)
