"""`merge_leading_dims` and `split_leading_dim`: fold axes into the batch.

`[T, B, N] -> [T * B, N]` lets a module written for `[batch, N]` run on every
step of a sequence; `split_leading_dim` undoes it on the result.
"""

import math
from typing import Any

import tensorflow as tf

from sonnet_like.core import checks


def _is_tensor(x: Any) -> bool:
  return isinstance(x, (tf.Tensor, tf.Variable))


def merge_leading_dims(x: Any, num_dims: int) -> Any:
  """Folds the first `num_dims` axes of `x` into one.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> snt.merge_leading_dims(tf.ones([3, 2, 5]), num_dims=2).shape
      TensorShape([6, 5])

  A tensor of rank below `num_dims`, and anything that is not a tensor or a
  variable, is returned as it is:

      >>> snt.merge_leading_dims(tf.ones([3]), num_dims=2).shape
      TensorShape([3])
      >>> snt.merge_leading_dims("text", num_dims=2)
      'text'

  Args:
    x: A tensor (or anything else, returned unchanged).
    num_dims: How many leading axes to fold together.

  Returns:
    `x` with shape `[prod(shape[:num_dims])] + shape[num_dims:]`.

  Raises:
    ValueError: if the rank of `x` is unknown.
  """
  if not _is_tensor(x):
    return x
  if (isinstance(num_dims, bool) or not isinstance(num_dims, int) or
      num_dims < 1):
    # Also a TypeError: what Sonnet 2 raises for the same mistake.
    raise checks.ArgumentTypeError(
        f"merge_leading_dims: num_dims must be a positive int, got "
        f"{num_dims!r}.")
  shape = x.shape
  if shape.rank is None:
    raise ValueError("merge_leading_dims: Can't merge leading dimensions of "
                     "tensor of unknown rank; give it a static rank first "
                     "(e.g. an input_signature with a known number of axes).")
  if num_dims > shape.rank:
    return x
  leading = shape[:num_dims]
  merged = (math.prod(leading.as_list()) if leading.is_fully_defined()
            else None)
  static = tf.TensorShape([merged]).concatenate(shape[num_dims:])
  if static.is_fully_defined():
    return tf.reshape(x, static)
  dynamic = tf.shape(x)
  new_shape = tf.concat(
      [tf.reduce_prod(dynamic[:num_dims], keepdims=True), dynamic[num_dims:]],
      axis=0)
  result = tf.reshape(x, new_shape)
  result.set_shape(static)  # Keep what is known statically.
  return result


def split_leading_dim(x: Any, example: tf.Tensor, num_dims: int) -> Any:
  """Splits the first axis of `x` into the first `num_dims` axes of `example`.

  The inverse of `merge_leading_dims`:

      >>> import sonnet_like as snt, tensorflow as tf
      >>> snt.split_leading_dim(tf.ones([6, 5]), tf.ones([3, 2, 7]), 2).shape
      TensorShape([3, 2, 5])
      >>> snt.split_leading_dim("text", tf.ones([3, 2, 7]), 2)
      'text'

  Args:
    x: A tensor whose first axis holds the merged axes (anything else is
      returned unchanged).
    example: A tensor whose first `num_dims` axes give the split sizes.
    num_dims: How many leading axes of `example` to use.

  Returns:
    `x` with shape `example.shape[:num_dims] + x.shape[1:]`.
  """
  if x is None or not _is_tensor(x):
    return x
  static = example.shape[:num_dims].concatenate(x.shape[1:])
  if static.is_fully_defined():
    return tf.reshape(x, static)
  new_shape = tf.concat([tf.shape(example)[:num_dims], tf.shape(x)[1:]],
                        axis=0)
  result = tf.reshape(x, new_shape)
  if static.rank is not None:
    result.set_shape(static)
  return result
