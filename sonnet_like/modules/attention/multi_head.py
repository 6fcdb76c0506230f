"""MultiHeadAttention: self- and cross-attention with masks, GQA and a cache."""

from typing import Any

import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import autograph
from sonnet_like.core import base
from sonnet_like.core import checks
from sonnet_like.core import initializers
from sonnet_like.core import once
from sonnet_like.core import types
from sonnet_like.core import utils
from sonnet_like.modules import dropout
from sonnet_like.modules import linear
from sonnet_like.modules.attention import cache as cache_lib
from sonnet_like.modules.attention import functional
from sonnet_like.modules.attention import rotary as rotary_lib

HEADS_DO_NOT_DIVIDE_ERROR = (
    "{module} has {num_heads} heads, which do not divide the model size "
    "{size}; give key_size (and value_size) explicitly, or choose a number "
    "of heads that divides {size}.")

LENGTHS_ERROR = (
    "{module} got keys of length {keys} and values of length {values}; each "
    "key needs its value, so axis 1 of both must be the same.")

MASK_SHAPE_ERROR = (
    "{module} expects a boolean mask of shape [batch, key length], [batch, "
    "query length, key length] or [batch, heads, query length, key length] "
    "(any axis may be 1), here [{batch}, {keys}], [{batch}, {queries}, "
    "{keys}] or [{batch}, {heads}, {queries}, {keys}], got shape {shape}.")

NO_CHUNKED_DROPOUT_ERROR = (
    "{module} computes attention in chunks (chunk_size={chunk_size}), which "
    "has no attention dropout; train it with is_training=False or build it "
    "with dropout_rate=None, or without chunk_size.")


class MultiHeadAttention(base.Module):
  """Multi-head attention (Vaswani et al., 2017), Haiku's argument names.

  Projects queries, keys and values to `num_heads` heads, attends with
  scaled dot products and projects the joined heads to `model_size`:

      >>> import sonnet_like as snt, tensorflow as tf
      >>> attention = snt.MultiHeadAttention(num_heads=4, name="attention")
      >>> x = tf.ones([2, 5, 16])                  # [batch, time, features]
      >>> attention(x).shape                       # self-attention
      TensorShape([2, 5, 16])
      >>> memory = tf.ones([2, 7, 16])
      >>> attention(x, memory).shape               # cross-attention
      TensorShape([2, 5, 16])
      >>> sorted(v.name for v in attention.variables)[:2]
      ['attention/key/b:0', 'attention/key/w:0']

  A mask is boolean, True where a query may attend to a key:
  `[batch, key length]` (padding), `[batch, query length, key length]` or
  `[batch, heads, query length, key length]`. With `causal=True` each query
  also sees only keys at its own position or before. With `num_kv_heads`
  below `num_heads`, groups of query heads share key/value heads
  (grouped-query attention; 1 is multi-query attention).

  Decoding one step at a time, a `KVCache` (from `initial_cache`) keeps the
  keys and values seen so far; a call with `cache=` returns the outputs and
  the next cache.
  """

  def __init__(self, num_heads: int, key_size: int | None = None, *,
               w_init: initializers.Initializer | None = None,
               with_bias: bool = True,
               b_init: initializers.Initializer | None = None,
               value_size: int | None = None, model_size: int | None = None,
               num_kv_heads: int | None = None, causal: bool = False,
               dropout_rate: types.FloatLike | None = None,
               rotary: "rotary_lib.RotaryEmbedding | bool" = False,
               chunk_size: int | None = None, name: str | None = None):
    """Constructs a MultiHeadAttention module.

    Args:
      num_heads: Number of query heads.
      key_size: Size of each head's queries and keys; by default
        `model_size // num_heads` (the query's size when `model_size` is not
        given either).
      w_init: Initializer of the projections' weights (see `Linear`).
      with_bias: Whether the projections add a bias.
      b_init: Initializer of the biases; must be None without bias.
      value_size: Size of each head's values; `key_size` by default.
      model_size: Size of the output; `key_size * num_heads` by default.
      num_kv_heads: Number of key/value heads, dividing `num_heads`;
        `num_heads` by default.
      causal: Whether each query attends only to keys at its position or
        before (for self-attention over one sequence).
      dropout_rate: Dropout rate of the attention probabilities in training;
        then every call needs `is_training`.
      rotary: A `RotaryEmbedding` (or True for the default one) applied to
        queries and keys after projection.
      chunk_size: If given, attention without a cache is computed this many
        keys at a time, in memory linear in the sequence length (see
        `chunked_attention`).
      name: Name of the module.
    """
    super().__init__(name=name)
    owner = "MultiHeadAttention"
    arguments.check_positive_int(owner, "num_heads", num_heads)
    arguments.check_positive_int(owner, "key_size", key_size, optional=True)
    arguments.check_positive_int(owner, "value_size", value_size,
                                 optional=True)
    arguments.check_positive_int(owner, "model_size", model_size,
                                 optional=True)
    arguments.check_positive_int(owner, "num_kv_heads", num_kv_heads,
                                 optional=True)
    arguments.check_positive_int(owner, "chunk_size", chunk_size,
                                 optional=True)
    arguments.check_no_b_init_without_bias(owner, with_bias, b_init)
    if dropout_rate is not None:
      dropout.check_rate(owner, "dropout_rate", dropout_rate)
    num_kv_heads = num_kv_heads or num_heads
    if num_heads % num_kv_heads:
      raise ValueError(f"{owner}: num_kv_heads must divide num_heads="
                       f"{num_heads}, got {num_kv_heads}.")
    if key_size is None and model_size is not None and model_size % num_heads:
      raise ValueError(HEADS_DO_NOT_DIVIDE_ERROR.format(
          module=owner, num_heads=num_heads, size=model_size))
    if rotary is True:
      rotary = rotary_lib.RotaryEmbedding()
    elif rotary is False or rotary is None:
      rotary = None
    elif not isinstance(rotary, rotary_lib.RotaryEmbedding):
      raise TypeError(f"{owner}: rotary must be a bool or a RotaryEmbedding, "
                      f"got {rotary!r}.")
    self.num_heads = num_heads
    self.num_kv_heads = num_kv_heads
    self.key_size = key_size
    self.value_size = value_size
    self.model_size = model_size
    self.causal = bool(causal)
    self.dropout_rate = dropout_rate
    self.rotary = rotary
    self.chunk_size = chunk_size
    self._w_init = w_init
    self._with_bias = with_bias
    self._b_init = b_init
    if key_size is not None or model_size is not None:
      self._set_sizes(model_size)

  @autograph.as_written
  def _set_sizes(self, size: int) -> None:
    """Fills in key, value and model sizes from a model size `size`."""
    if self.key_size is None:
      if size % self.num_heads:
        raise checks.InputShapeError(HEADS_DO_NOT_DIVIDE_ERROR.format(
            module=checks.describe(self), num_heads=self.num_heads,
            size=size))
      self.key_size = size // self.num_heads
    self.value_size = self.value_size or self.key_size
    self.model_size = self.model_size or self.key_size * self.num_heads

  @once.once
  def _initialize(self, query: tf.Tensor, key: tf.Tensor,
                  value: tf.Tensor) -> None:
    for tensor in (query, key, value):
      checks.check_rank(self, tensor, rank=3, layout="[batch, time, features]")
      checks.check_floating(self, tensor)
    self.dtype = query.dtype
    if self.key_size is None:
      self._set_sizes(checks.known_dim(self, query, -1, "query size"))
    kwargs = dict(w_init=self._w_init, with_bias=self._with_bias,
                  b_init=self._b_init)
    self.query_projection = linear.Linear(
        self.num_heads * self.key_size, name="query", **kwargs)
    self.key_projection = linear.Linear(
        self.num_kv_heads * self.key_size, name="key", **kwargs)
    self.value_projection = linear.Linear(
        self.num_kv_heads * self.value_size, name="value", **kwargs)
    self.output_projection = linear.Linear(self.model_size, name="output",
                                           **kwargs)

  @property
  def _uses_dropout(self) -> bool:
    rate = self.dropout_rate
    if isinstance(rate, (tf.Tensor, tf.Variable)):
      rate = tf.get_static_value(rate)
      return rate is None or rate != 0
    return rate is not None and rate != 0

  def initial_cache(self, batch_size: Any, max_length: int,
                    dtype: tf.DType = tf.float32) -> cache_lib.KVCache:
    """An empty `KVCache` for `max_length` positions of self-attention.

    Raises:
      ValueError: if `key_size` is only known once the module is called.
    """
    arguments.check_positive_int(checks.describe(self), "max_length",
                                 max_length)
    if self.key_size is None:
      raise checks.NotBuiltError(
          f"{checks.describe(self)} infers key_size from its first input; "
          "call it once, or give key_size or model_size, before "
          "initial_cache().")
    return cache_lib.KVCache.zeros(batch_size, max_length, self.num_kv_heads,
                                   self.key_size, self.value_size, dtype)

  @autograph.as_written
  def __call__(self, query: tf.Tensor, key: tf.Tensor | None = None,
               value: tf.Tensor | None = None, mask: tf.Tensor | None = None,
               *, is_training: types.BoolLike | None = None,
               cache: cache_lib.KVCache | None = None) -> Any:
    """Attends from `query` to `key`/`value`.

    Args:
      query: `[batch, query length, features]`.
      key: `[batch, key length, features]`; `query` by default.
      value: `[batch, key length, features]`; `key` by default.
      mask: Boolean, True where a query may attend to a key (shapes above);
        with a cache the key length is the cache's `max_length`.
      is_training: Whether attention dropout is on; required with
        `dropout_rate`, and must be None without it.
      cache: A `KVCache` for self-attention decoding: `query` holds the next
        positions, whose keys and values are added to it.

    Returns:
      `[batch, query length, model_size]`; with `cache`, a pair of that and
      the updated cache.
    """
    query = tf.convert_to_tensor(query)
    if cache is not None and (key is not None or value is not None):
      raise ValueError(f"{checks.describe(self)} decodes with a cache from "
                       "its own keys and values (self-attention); call it "
                       "without key and value.")
    key = query if key is None else tf.convert_to_tensor(key)
    value = key if value is None else tf.convert_to_tensor(value)
    self._initialize(query, key, value)
    self._check_is_training(is_training)
    for tensor in (query, key, value):
      checks.check_rank(self, tensor, rank=3, layout="[batch, time, features]")
      checks.check_built_dtype(self, tensor, self.dtype)
    keys_length, values_length = key.shape[1], value.shape[1]
    if (keys_length is not None and values_length is not None and
        keys_length != values_length):
      raise checks.InputShapeError(LENGTHS_ERROR.format(
          module=checks.describe(self), keys=keys_length,
          values=values_length))

    queries = self._heads(self.query_projection, query, self.num_heads,
                          self.key_size)
    keys = self._heads(self.key_projection, key, self.num_kv_heads,
                       self.key_size)
    values = self._heads(self.value_projection, value, self.num_kv_heads,
                         self.value_size)
    offset = 0 if cache is None else tf.convert_to_tensor(cache.length,
                                                          tf.int32)
    query_positions = offset + tf.range(tf.shape(queries)[1])
    if self.rotary is not None:
      queries = self.rotary(queries, query_positions)
      keys = self.rotary(keys, query_positions if cache is not None else
                         tf.range(tf.shape(keys)[1]))

    if cache is not None:
      cache = cache_lib.append(self, cache, keys, values)
      keys, values = cache.keys, cache.values
      key_positions = tf.range(tf.shape(keys)[1])
      filled = key_positions < cache.length
      allowed = tf.broadcast_to(filled, [tf.shape(queries)[1],
                                         tf.shape(keys)[1]])
      if self.causal:
        allowed = tf.logical_and(allowed, functional.causal_allowed(
            query_positions, key_positions))
      mask = self._mask(mask, queries, keys)
      allowed = allowed[tf.newaxis, tf.newaxis]
      mask = allowed if mask is None else tf.logical_and(mask, allowed)
      outputs = functional.attention(queries, keys, values, mask,
                                     self._dropout_fn(is_training))
      return self._joined(outputs), cache

    mask = self._mask(mask, queries, keys)
    if self.chunk_size is not None:
      if self._uses_dropout and utils.static_bool(is_training) is not False:
        raise ValueError(NO_CHUNKED_DROPOUT_ERROR.format(
            module=checks.describe(self), chunk_size=self.chunk_size))
      outputs = functional.chunked_attention(
          queries, keys, values, mask, causal=self.causal,
          chunk_size=self.chunk_size)
      return self._joined(outputs)
    if self.causal:
      order = functional.causal_allowed(query_positions,
                                        tf.range(tf.shape(keys)[1]))
      order = order[tf.newaxis, tf.newaxis]
      mask = order if mask is None else tf.logical_and(mask, order)
    outputs = functional.attention(queries, keys, values, mask,
                                   self._dropout_fn(is_training))
    return self._joined(outputs)

  @autograph.as_written
  def _heads(self, projection: linear.Linear, inputs: tf.Tensor, heads: int,
             size: int) -> tf.Tensor:
    """`[B, T, D]` projected to `[B, T, heads, size]`.

    The projection sees a matrix `[B * T, D]`: a plain matrix product, whose
    weight gradient is one product too (a rank-3 input would make it a
    batched product and a sum over the batch).
    """
    shape = tf.shape(inputs)
    flat = tf.reshape(inputs, tf.stack([shape[0] * shape[1], shape[2]]))
    return tf.reshape(projection(flat),
                      tf.stack([shape[0], shape[1], heads, size]))

  @autograph.as_written
  def _joined(self, outputs: tf.Tensor) -> tf.Tensor:
    """`[B, T, H, V]` -> the output projection of `[B, T, H * V]`."""
    shape = tf.shape(outputs)
    joined = tf.reshape(outputs, tf.stack(
        [shape[0] * shape[1], self.num_heads * self.value_size]))
    projected = self.output_projection(joined)
    return tf.reshape(projected,
                      tf.stack([shape[0], shape[1], self.model_size]))

  @autograph.as_written
  def _check_is_training(self, is_training: Any) -> None:
    if self._uses_dropout and is_training is None:
      raise ValueError(f"{checks.describe(self)} uses attention dropout "
                       f"(dropout_rate={self.dropout_rate!r}): pass "
                       "is_training=True or False.")
    if not self._uses_dropout and is_training is not None:
      raise ValueError(f"{checks.describe(self)} has no dropout "
                       "(dropout_rate=None): The `is_training` argument "
                       "should only be used with dropout.")
    if is_training is not None:
      checks.check_is_training(self, is_training)

  @autograph.as_written
  def _dropout_fn(self, is_training: Any):
    if not self._uses_dropout:
      return None
    return lambda p: dropout.dropout(self, p, self.dropout_rate, is_training)

  @autograph.as_written
  def _mask(self, mask: Any, queries: tf.Tensor,
            keys: tf.Tensor) -> tf.Tensor | None:
    """The mask as `[b, h, t, s]` booleans (axes of 1 broadcast)."""
    if mask is None:
      return None
    mask = tf.convert_to_tensor(mask)
    if mask.dtype != tf.bool:
      raise checks.InputDTypeError(
          f"{checks.describe(self)} expects a boolean mask (True = attend), "
          f"got {mask.dtype.name}.")
    batch, queries_length = queries.shape[0], queries.shape[1]
    keys_length = keys.shape[1]
    expected = {2: [batch, keys_length],
                3: [batch, queries_length, keys_length],
                4: [batch, self.num_heads, queries_length, keys_length]}
    wanted = expected.get(mask.shape.rank)
    if wanted is None or any(
        got not in (None, 1, size) and size is not None
        for got, size in zip(mask.shape.as_list(), wanted)):
      raise checks.InputShapeError(MASK_SHAPE_ERROR.format(
          module=checks.describe(self), batch=_dim(batch),
          keys=_dim(keys_length), queries=_dim(queries_length),
          heads=self.num_heads,
          shape=tuple(mask.shape.as_list()) if mask.shape.rank is not None
          else "of unknown rank"))
    if mask.shape.rank == 2:
      return mask[:, tf.newaxis, tf.newaxis, :]
    if mask.shape.rank == 3:
      return mask[:, tf.newaxis]
    return mask


def _dim(size: int | None) -> str:
  return "?" if size is None else str(size)
