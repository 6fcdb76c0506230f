"""Regularizers: penalties on a list of tensors (usually weights).

A regularizer maps a sequence of tensors to one scalar loss term:

    >>> import sonnet_like as snt, tensorflow as tf
    >>> l2 = snt.regularizers.L2(0.5)
    >>> float(l2([tf.constant([1.0, 2.0]), tf.constant([[3.0]])]))
    7.0
"""

import abc
from typing import Any, Sequence

import tensorflow as tf

from sonnet_like.core import checks
from sonnet_like.core import types
from sonnet_like.core import utils

__all__ = ["L1", "L2", "OffDiagonalOrthogonal", "Regularizer"]


class Regularizer(abc.ABC):
  """Base class: `regularizer(tensors)` returns a scalar penalty."""

  @abc.abstractmethod
  def __call__(self, tensors: Sequence[tf.Tensor]) -> tf.Tensor:
    """Computes the penalty.

    Args:
      tensors: The tensors to penalise (e.g. `module.trainable_variables`).

    Returns:
      A scalar: the combined penalty of all `tensors`.
    """


class _Scaled(Regularizer):
  """A regularizer `scale * sum(penalty(t) for t in tensors)`."""

  def __init__(self, scale: types.FloatLike):
    """Constructs the regularizer.

    Args:
      scale: The non-negative factor of the penalty.

    Raises:
      ValueError: if `scale` is negative.
    """
    self.scale = _check_scale(type(self).__name__, scale)

  def __repr__(self) -> str:
    return f"{type(self).__name__}(scale={self.scale})"

  __str__ = __repr__

  def __call__(self, tensors: Sequence[tf.Tensor]) -> tf.Tensor:
    """Returns `scale` times the summed penalty (a zero scalar if empty)."""
    tensors = _check_tensors(type(self).__name__, tensors)
    for i, tensor in enumerate(tensors):
      self._check(i, tensor)
    if not tensors:
      return tf.zeros_like(self.scale)
    total = tf.add_n([self._penalty(t) for t in tensors])
    return tf.cast(self.scale, total.dtype) * total

  @abc.abstractmethod
  def _penalty(self, tensor: tf.Tensor) -> tf.Tensor:
    """The unscaled penalty of one tensor, a scalar."""

  def _check(self, i: int, tensor: tf.Tensor) -> None:
    """Raises if `tensors[i]` cannot be penalised (all can, by default)."""


class L1(_Scaled):
  """`scale * sum(|t|)` over all entries of all tensors.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> l1 = snt.regularizers.L1(0.1)
      >>> round(float(l1([tf.constant([1.0, -2.0, 3.0])])), 5)
      0.6
  """

  def _penalty(self, tensor: tf.Tensor) -> tf.Tensor:
    return tf.reduce_sum(tf.abs(tensor))


class L2(_Scaled):
  """`scale * sum(t ** 2)` over all entries (no factor of 1/2).

      >>> import sonnet_like as snt, tensorflow as tf
      >>> weights = tf.constant([1.0, -2.0, 3.0])
      >>> round(float(snt.regularizers.L2(0.1)([weights])), 5)
      1.4
      >>> round(float(0.1 * 2 * tf.nn.l2_loss(weights)), 5)  # l2_loss halves.
      1.4
  """

  def _penalty(self, tensor: tf.Tensor) -> tf.Tensor:
    return tf.reduce_sum(tf.square(tensor))


class OffDiagonalOrthogonal(_Scaled):
  """Penalises correlation between the columns of each tensor.

  Each tensor of rank N >= 2 is flattened to a matrix `W` of shape
  `[-1, last_dim]`; the penalty is `scale` times the sum of the off-diagonal
  entries of `(W^T W) ** 2` (element-wise square), i.e. of `(W^T W - I) ** 2`
  off the diagonal. It is zero when the columns are orthogonal (Brock et
  al., 2018, "Large scale GAN training").

      >>> import sonnet_like as snt, tensorflow as tf
      >>> reg = snt.regularizers.OffDiagonalOrthogonal(1.0)
      >>> float(reg([tf.constant([[1.0, 0.0], [0.0, 2.0]])]))  # orthogonal
      0.0
      >>> float(reg([tf.constant([[1.0, 1.0], [0.0, 1.0]])]))  # 2 * 1 ** 2
      2.0
  """

  def _penalty(self, tensor: tf.Tensor) -> tf.Tensor:
    w = tf.reshape(tensor, [-1, tensor.shape[-1]])
    gram_squared = tf.square(tf.matmul(w, w, transpose_a=True))
    return tf.reduce_sum(gram_squared) - tf.linalg.trace(gram_squared)

  def _check(self, i: int, tensor: tf.Tensor) -> None:
    if tensor.shape.rank is None or tensor.shape.rank < 2:
      raise ValueError(
          f"OffDiagonalOrthogonal: tensors[{i}] must have rank >= 2, got "
          f"{utils.describe_value(tensor)}.")


def _check_scale(owner: str, scale: Any) -> Any:
  if isinstance(scale, (tf.Tensor, tf.Variable)) and scale.shape.rank != 0:
    raise ValueError(f"{owner}: scale must be a scalar, got "
                     f"{utils.describe_value(scale)}.")
  if scale < 0:
    raise ValueError(f"{owner}: scale must be >=0, got {scale!r}.")
  return scale


def _check_tensors(owner: str, tensors: Any) -> list[tf.Tensor]:
  """Converts `tensors`; they must share one floating-point dtype."""
  if isinstance(tensors, (tf.Tensor, tf.Variable)):
    # Also a ValueError: what Sonnet 2 raises for the same mistake.
    raise checks.ArgumentTypeError(
        f"{owner}: expects a sequence of tensors, got a single "
        f"{utils.describe_value(tensors)}; wrap it in a list.")
  converted = [tf.convert_to_tensor(t) for t in tensors]
  for i, t in enumerate(converted):
    if not t.dtype.is_floating:
      raise TypeError(f"{owner}: tensors[{i}] must be floating-point, got "
                      f"{t.dtype.name}.")
    if t.dtype != converted[0].dtype:
      raise TypeError(f"{owner}: all tensors must share one dtype; tensors[0] "
                      f"is {converted[0].dtype.name}, tensors[{i}] is "
                      f"{t.dtype.name}.")
  return converted
