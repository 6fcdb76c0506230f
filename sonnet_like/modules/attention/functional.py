"""Scaled dot-product attention over heads: all scores at once, or in chunks.

Shapes: queries `[B, T, H, K]`, keys `[B, S, N, K]`, values `[B, S, N, V]`,
where the `N` key/value heads are each shared by `H // N` query heads
(grouped-query attention; `N == H` is ordinary multi-head attention). Query
head `h` reads key/value head `h // (H // N)`. A mask is boolean, `True`
where a query may attend to a key, broadcastable to `[B, H, T, S]`.

`chunked_attention` computes the same result as `attention` one chunk of
keys at a time with a running ("online") softmax, and its gradient the same
way (from the outputs and the log-sum-exp of each row), so neither pass
holds a `[T, S]` matrix of scores: the memory of one chunk is `[T, chunk]`.
"""

import math

import tensorflow as tf

from sonnet_like.core import autograph


@autograph.as_written
def large_negative(dtype: tf.DType) -> float:
  """The score given to a masked pair (Keras' choice, so rows agree)."""
  return -3e4 if tf.as_dtype(dtype) == tf.float16 else -1e9


@autograph.as_written
def causal_allowed(query_positions: tf.Tensor,
                   key_positions: tf.Tensor) -> tf.Tensor:
  """`[T, S]` booleans: a query attends to keys at its position or before."""
  return query_positions[:, tf.newaxis] >= key_positions[tf.newaxis, :]


@autograph.as_written
def _split_groups(query: tf.Tensor, key_heads: int) -> tf.Tensor:
  """`[B, T, H, K]` -> `[B, T, N, H // N, K]`."""
  shape = tf.shape(query)
  heads, size = query.shape[2], query.shape[3]
  return tf.reshape(query, tf.stack(
      [shape[0], shape[1], key_heads, heads // key_heads, size]))


@autograph.as_written
def _grouped_mask(mask: tf.Tensor, key_heads: int) -> tf.Tensor:
  """A `[b, h, t, s]` mask (h is 1 or H) -> `[b, n, g, t, s]`."""
  if mask.shape[1] == 1:
    return mask[:, :, tf.newaxis]
  shape = tf.shape(mask)
  return tf.reshape(mask, tf.stack(
      [shape[0], key_heads, mask.shape[1] // key_heads, shape[2], shape[3]]))


@autograph.as_written
def attention(query: tf.Tensor, key: tf.Tensor, value: tf.Tensor,
              mask: tf.Tensor | None = None,
              probabilities_fn=None) -> tf.Tensor:
  """Softmax(q k^T / sqrt(K)) v, per head; returns `[B, T, H, V]`.

      >>> import tensorflow as tf
      >>> q = tf.ones([1, 2, 4, 3])                # 4 query heads
      >>> kv = tf.ones([1, 5, 2, 3])               # 2 key/value heads
      >>> attention(q, kv, kv).shape
      TensorShape([1, 2, 4, 3])

  Args:
    query: `[B, T, H, K]`.
    key: `[B, S, N, K]`, `N` dividing `H`.
    value: `[B, S, N, V]`.
    mask: Boolean, broadcastable to `[B, H, T, S]` (rank 4); True = attend.
    probabilities_fn: Applied to the `[B, ..., T, S]` attention
      probabilities (e.g. dropout).
  """
  key_heads = key.shape[2]
  query = query * tf.cast(1. / math.sqrt(query.shape[-1]), query.dtype)
  if key_heads == query.shape[2]:  # One query head per key head.
    scores = tf.einsum("bthk,bshk->bhts", query, key)
  else:
    scores = tf.einsum("btngk,bsnk->bngts", _split_groups(query, key_heads),
                       key)
    if mask is not None:
      mask = _grouped_mask(mask, key_heads)
  if mask is not None:
    scores = tf.where(mask, scores, tf.cast(large_negative(scores.dtype),
                                            scores.dtype))
  probabilities = tf.nn.softmax(scores, axis=-1)
  if probabilities_fn is not None:
    probabilities = probabilities_fn(probabilities)
  if key_heads == query.shape[2]:
    return tf.einsum("bhts,bshv->bthv", probabilities, value)
  outputs = tf.einsum("bngts,bsnv->btngv", probabilities, value)
  shape = tf.shape(outputs)
  return tf.reshape(outputs, tf.stack(
      [shape[0], shape[1], query.shape[2], value.shape[-1]]))


@autograph.as_written
def chunked_attention(query: tf.Tensor, key: tf.Tensor, value: tf.Tensor,
                      mask: tf.Tensor | None = None, causal: bool = False,
                      chunk_size: int = 512) -> tf.Tensor:
  """`attention` computed `chunk_size` keys at a time, in `O(T * chunk)`.

  Equal to `attention(query, key, value, mask & causal)` up to float
  rounding; so is its gradient, which recomputes each chunk's scores
  rather than keeping them.

      >>> import tensorflow as tf
      >>> q, k, v = (tf.random.stateless_normal([1, 6, 2, 4], [0, i])
      ...            for i in range(3))
      >>> plain = attention(q, k, v, causal_allowed(tf.range(6), tf.range(6)))
      >>> chunked = chunked_attention(q, k, v, causal=True, chunk_size=4)
      >>> float(tf.reduce_max(tf.abs(plain - chunked))) < 1e-6
      True

  Args:
    query: `[B, T, H, K]`.
    key: `[B, S, N, K]`, `N` dividing `H`.
    value: `[B, S, N, V]`.
    mask: Boolean, broadcastable to `[B, H, T, S]` (rank 4); True = attend.
    causal: Whether query `t` attends only to keys `s <= t`.
    chunk_size: Keys per chunk; the last chunk is padded.

  Returns:
    `[B, T, H, V]`.
  """
  heads, key_heads = query.shape[2], key.shape[2]
  if key_heads != heads:
    key = tf.repeat(key, heads // key_heads, axis=2)
    value = tf.repeat(value, heads // key_heads, axis=2)
  query = query * tf.cast(1. / math.sqrt(query.shape[-1]), query.dtype)
  q = tf.transpose(query, [0, 2, 1, 3])   # [B, H, T, K]
  k = tf.transpose(key, [0, 2, 1, 3])     # [B, H, S, K]
  v = tf.transpose(value, [0, 2, 1, 3])   # [B, H, S, V]
  length = tf.shape(k)[2]
  chunks = (length + chunk_size - 1) // chunk_size
  padding = chunks * chunk_size - length
  k = tf.pad(k, [[0, 0], [0, 0], [0, padding], [0, 0]])
  v = tf.pad(v, [[0, 0], [0, 0], [0, padding], [0, 0]])
  if mask is not None:
    # [b, h, t, S] -> [chunks, b, h, t, chunk] (an axis of 1 stays 1).
    if mask.shape[3] == 1:
      mask = mask[tf.newaxis]
    else:
      mask = tf.pad(mask, [[0, 0], [0, 0], [0, 0], [0, padding]])
      shape = tf.shape(mask)
      mask = tf.reshape(mask, tf.stack(
          [shape[0], shape[1], shape[2], chunks, chunk_size]))
      mask = tf.transpose(mask, [3, 0, 1, 2, 4])
  outputs = _online_softmax_attention(q, k, v, mask, causal, chunk_size,
                                      length)
  return tf.transpose(outputs, [0, 2, 1, 3])


@autograph.as_written
def _online_softmax_attention(q, k, v, mask, causal, chunk_size, length):
  """Attention on `[B, H, ., .]` tensors, keys padded to whole chunks."""
  dtype = q.dtype
  chunks = tf.shape(k)[2] // chunk_size
  query_positions = tf.range(tf.shape(q)[2])
  masked = tf.cast(large_negative(dtype), dtype)
  padded = tf.cast(dtype.min, dtype)

  def in_chunks(tensor):  # [B, H, S, X] -> [B, H, chunks, C, X]
    shape = tf.shape(tensor)
    return tf.reshape(tensor, tf.stack(
        [shape[0], shape[1], chunks, chunk_size, shape[3]]))

  def chunk(tensor, j):
    return tf.gather(tensor, j, axis=2)

  def scores_of(q, k_chunks, j):
    """The chunk's scores with masked pairs replaced; and which are kept."""
    scores = tf.matmul(q, chunk(k_chunks, j), transpose_b=True)  # [B, H, T, C]
    positions = j * chunk_size + tf.range(chunk_size)
    allowed = None
    if mask is not None:
      allowed = mask[0] if mask.shape[0] == 1 else tf.gather(mask, j)
    if causal:
      order = causal_allowed(query_positions, positions)
      allowed = order if allowed is None else tf.logical_and(allowed, order)
    if allowed is not None:
      scores = tf.where(allowed, scores, masked)
    real = positions < length
    scores = tf.where(real, scores, padded)
    return scores, allowed

  @tf.custom_gradient
  def run(q, k, v):
    k_chunks, v_chunks = in_chunks(k), in_chunks(v)
    rows = tf.shape(q)[:3]
    maximum0 = tf.fill(rows, padded)
    total0 = tf.zeros(rows, dtype)
    accumulated0 = tf.zeros(tf.concat([rows, tf.shape(v)[3:]], 0), dtype)

    def body(j, maximum, total, accumulated):
      scores, _ = scores_of(q, k_chunks, j)
      new_maximum = tf.maximum(maximum, tf.reduce_max(scores, -1))
      weights = tf.exp(scores - new_maximum[..., tf.newaxis])
      correction = tf.exp(maximum - new_maximum)
      total = total * correction + tf.reduce_sum(weights, -1)
      accumulated = (accumulated * correction[..., tf.newaxis] +
                     tf.matmul(weights, chunk(v_chunks, j)))
      return j + 1, new_maximum, total, accumulated

    _, maximum, total, accumulated = tf.while_loop(
        lambda j, *_: j < chunks, body,
        (tf.constant(0), maximum0, total0, accumulated0),
        parallel_iterations=1)
    outputs = accumulated / total[..., tf.newaxis]
    log_sum_exp = maximum + tf.math.log(total)

    def grad(d_outputs):
      row_dot = tf.reduce_sum(d_outputs * outputs, -1)[..., tf.newaxis]
      d_keys = tf.TensorArray(dtype, size=chunks, infer_shape=False)
      d_values = tf.TensorArray(dtype, size=chunks, infer_shape=False)

      def backward(j, d_q, d_keys, d_values):
        scores, allowed = scores_of(q, k_chunks, j)
        p = tf.exp(scores - log_sum_exp[..., tf.newaxis])
        d_values = d_values.write(j, tf.matmul(p, d_outputs, transpose_a=True))
        d_p = tf.matmul(d_outputs, chunk(v_chunks, j), transpose_b=True)
        d_scores = p * (d_p - row_dot)
        if allowed is not None:
          d_scores = tf.where(allowed, d_scores, tf.zeros_like(d_scores))
        d_q += tf.matmul(d_scores, chunk(k_chunks, j))
        d_keys = d_keys.write(j, tf.matmul(d_scores, q, transpose_a=True))
        return j + 1, d_q, d_keys, d_values

      _, d_q, d_keys, d_values = tf.while_loop(
          lambda j, *_: j < chunks, backward,
          (tf.constant(0), tf.zeros_like(q), d_keys, d_values),
          parallel_iterations=1)

      def joined(array, like):  # [chunks, B, H, C, X] -> [B, H, S_padded, X]
        stacked = tf.transpose(array.stack(), [1, 2, 0, 3, 4])
        return tf.reshape(stacked, tf.shape(like))

      return d_q, joined(d_keys, k), joined(d_values, v)

    return outputs, grad

  return run(q, k, v)
