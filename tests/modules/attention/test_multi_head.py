"""Tests for sonnet_like/modules/attention/multi_head.py."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt

B, T, S, D = 2, 5, 7, 12


def _inputs(*shapes, seed=0):
  rng = np.random.default_rng(seed)
  return [tf.constant(rng.normal(size=s), tf.float32) for s in shapes]


def _keras_twin(ours, query, value, heads, key_size, value_size):
  """A Keras layer holding `ours`' weights (built on the same inputs)."""
  layer = keras.layers.MultiHeadAttention(
      heads, key_size, value_dim=value_size, output_shape=ours.model_size)
  layer(query, value)
  pairs = [(layer.query_dense, ours.query_projection, key_size),
           (layer.key_dense, ours.key_projection, key_size),
           (layer.value_dense, ours.value_projection, value_size)]
  for dense, projection, size in pairs:
    dense.kernel.assign(tf.reshape(projection.w, [-1, heads, size]))
    dense.bias.assign(tf.reshape(projection.b, [heads, size]))
  layer.output_dense.kernel.assign(
      tf.reshape(ours.output_projection.w, [heads, value_size, -1]))
  layer.output_dense.bias.assign(ours.output_projection.b)
  return layer


@pytest.mark.parametrize("case", ["self", "cross", "padding_mask", "causal"])
def test_equals_keras_with_the_same_weights(case):
  heads, key_size, value_size = 3, 4, 5
  query, memory = _inputs([B, T, D], [B, S, 6])
  if case in ("self", "causal"):
    memory = query
  ours = snt.MultiHeadAttention(heads, key_size, value_size=value_size,
                                model_size=D, causal=case == "causal")
  ours(query, memory)
  theirs = _keras_twin(ours, query, memory, heads, key_size, value_size)
  kwargs, mask = {}, None
  if case == "padding_mask":
    lengths = tf.constant([3, 7])
    mask = tf.sequence_mask(lengths, S)                   # [B, S]
    kwargs["attention_mask"] = tf.broadcast_to(mask[:, None], [B, T, S])
  if case == "causal":
    kwargs["use_causal_mask"] = True
  expected = theirs(query, memory, **kwargs)
  got = ours(query, memory, mask=mask)
  np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
  # The mask matters (so the comparison above can fail).
  if case in ("padding_mask", "causal"):
    assert np.abs(theirs(query, memory) - expected).max() > 1e-3


def test_grouped_query_heads_equal_repeated_key_value_heads():
  query, = _inputs([B, T, 8])
  grouped = snt.MultiHeadAttention(4, 2, num_kv_heads=2)
  full = snt.MultiHeadAttention(4, 2)
  out = grouped(query)
  full(query)
  for ours, theirs in [(grouped.key_projection, full.key_projection),
                       (grouped.value_projection, full.value_projection)]:
    w = tf.reshape(ours.w, [8, 2, 1, 2])                   # [D, N, 1, K]
    theirs.w.assign(tf.reshape(tf.repeat(w, 2, axis=2), [8, 8]))
    b = tf.reshape(ours.b, [2, 1, 2])
    theirs.b.assign(tf.reshape(tf.repeat(b, 2, axis=1), [8]))
  for name in ("query_projection", "output_projection"):
    for mine, other in zip(getattr(grouped, name).variables,
                           getattr(full, name).variables):
      other.assign(mine)
  np.testing.assert_allclose(full(query), out, rtol=1e-5, atol=1e-6)
  assert grouped.key_projection.w.shape == (8, 4)


def test_mask_shapes_are_equivalent():
  query, = _inputs([B, T, D])
  mha = snt.MultiHeadAttention(3)
  padding = tf.sequence_mask([2, 5], T)
  full = tf.broadcast_to(padding[:, None, None, :], [B, 3, T, T])
  np.testing.assert_allclose(mha(query, mask=padding), mha(query, mask=full),
                             rtol=1e-6)


def test_dropout_follows_is_training():
  query, = _inputs([B, T, D])
  mha = snt.MultiHeadAttention(3, dropout_rate=0.5)
  plain = snt.MultiHeadAttention(3)
  evaluation = mha(query, is_training=False)
  plain(query)
  for mine, other in zip(mha.variables, plain.variables):
    other.assign(mine)
  np.testing.assert_allclose(evaluation, plain(query), rtol=1e-6)
  assert np.abs(mha(query, is_training=True) - evaluation).max() > 1e-3
  with pytest.raises(ValueError, match="is_training"):
    mha(query)


def test_cached_decoding_equals_full_causal_attention():
  x, = _inputs([B, 6, 8])
  mha = snt.MultiHeadAttention(2, num_kv_heads=1, causal=True, rotary=True)
  full = mha(x)
  cache = mha.initial_cache(B, max_length=8)
  first, cache = mha(x[:, :2], cache=cache)           # A prompt of 2.
  steps = [first]
  for t in range(2, 6):
    out, cache = mha(x[:, t:t + 1], cache=cache)
    steps.append(out)
  np.testing.assert_allclose(tf.concat(steps, 1), full, rtol=1e-5, atol=1e-6)
  assert int(cache.length) == 6


def test_errors_name_the_module():
  query, keys, values = _inputs([B, T, D], [B, S, D], [B, S + 1, D])
  mha = snt.MultiHeadAttention(3, name="attn")
  with pytest.raises(ValueError, match=r"MultiHeadAttention 'attn' got keys "
                     r"of length 7 and values of length 8"):
    mha(query, keys, values)
  with pytest.raises(ValueError, match=r"MultiHeadAttention 'attn' expects a "
                     r"boolean mask .* got shape \(2, 6\)"):
    mha(query, keys, mask=tf.ones([B, 6], tf.bool))
  with pytest.raises(ValueError, match=r"MultiHeadAttention 'heads' has 5 "
                     r"heads, which do not divide the model size 12"):
    snt.MultiHeadAttention(5, name="heads")(query)
  with pytest.raises(ValueError, match="5 heads, which do not divide the "
                     "model size 12"):
    snt.MultiHeadAttention(5, model_size=12)
  cached = snt.MultiHeadAttention(3, 4, causal=True, name="dec")
  cache = cached.initial_cache(B, max_length=4)
  _, cache = cached(query[:, :3], cache=cache)
  with pytest.raises(tf.errors.InvalidArgumentError, match=r"MultiHeadAttention"
                     r" 'dec' has a key/value cache of 4 positions, 3 of them "
                     r"filled, so it cannot take 2 more"):
    cached(query[:, :2], cache=cache)
  step = tf.function(lambda x, c: cached(x, cache=c))
  with pytest.raises(tf.errors.InvalidArgumentError, match="MultiHeadAttention"
                     r" .*dec.* has a key/value cache of 4 positions"):
    step(query[:, :2], cache)
