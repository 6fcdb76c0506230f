"""KVCache: the keys and values an attention layer has seen, in fixed size.

A cache is a value, not a variable: a call that takes one returns the next
one, so a whole decoding loop can be a `tf.while_loop` (its shapes never
change) inside one `tf.function`, compiled by XLA or not.
"""

from typing import Any, NamedTuple

import tensorflow as tf

from sonnet_like.core import autograph
from sonnet_like.core import checks

CACHE_OVERFLOW_ERROR = (
    "{module} has a key/value cache of {capacity} positions, {length} of "
    "them filled, so it cannot take {new} more; make the cache longer "
    "(initial_cache(batch_size, max_length=...)) or decode fewer tokens.")


class KVCache(NamedTuple):
  """Keys and values of the positions decoded so far, and how many there are.

  Attributes:
    keys: `[batch, max_length, key_heads, key_size]`; positions from
      `length` on are zeros.
    values: `[batch, max_length, key_heads, value_size]`.
    length: Scalar int32, the number of positions filled.
  """
  keys: tf.Tensor
  values: tf.Tensor
  length: tf.Tensor

  @classmethod
  def zeros(cls, batch_size: Any, max_length: int, key_heads: int,
            key_size: int, value_size: int,
            dtype: tf.DType = tf.float32) -> "KVCache":
    """An empty cache.

        >>> KVCache.zeros(2, 16, 1, 4, 4).keys.shape
        TensorShape([2, 16, 1, 4])
    """
    return cls(tf.zeros([batch_size, max_length, key_heads, key_size], dtype),
               tf.zeros([batch_size, max_length, key_heads, value_size],
                        dtype),
               tf.constant(0, tf.int32))


@autograph.as_written
def append(module: Any, cache: KVCache, keys: tf.Tensor,
           values: tf.Tensor) -> KVCache:
  """`cache` with `keys`/`values` (`[B, L, N, .]`) written at `length`.

  Raises:
    tf.errors.InvalidArgumentError: naming `module`, when they do not fit
      (eagerly, and when a graph runs; under XLA, which drops assertions,
      writes past the end are dropped).
  """
  capacity = cache.keys.shape[1]
  new = keys.shape[1]
  length = tf.convert_to_tensor(cache.length, tf.int32)
  message = dict(module=checks.describe(module), capacity=capacity, new=new)
  static_length = tf.get_static_value(length)
  if static_length is not None:
    if static_length + new > capacity:
      raise tf.errors.InvalidArgumentError(
          None, None, CACHE_OVERFLOW_ERROR.format(length=int(static_length),
                                                  **message))
  else:
    prefix, suffix = CACHE_OVERFLOW_ERROR.format(
        length="\0", **message).split("\0")
    check = tf.debugging.Assert(length + new <= capacity,
                                [prefix.rstrip(), length, suffix.lstrip()])
    with tf.control_dependencies([check]):
      length = tf.identity(length)
  batch = tf.shape(keys)[0]
  positions = length + tf.range(new)
  indices = tf.stack([
      tf.broadcast_to(tf.range(batch)[:, tf.newaxis], [batch, new]),
      tf.broadcast_to(positions[tf.newaxis, :], [batch, new])], axis=-1)
  return KVCache(
      tf.tensor_scatter_nd_update(cache.keys, indices,
                                  tf.cast(keys, cache.keys.dtype)),
      tf.tensor_scatter_nd_update(cache.values, indices,
                                  tf.cast(values, cache.values.dtype)),
      length + new)
