"""Tests for sonnet_like/modules/attention/functional.py."""

import numpy as np
import pytest
import tensorflow as tf

from sonnet_like.modules.attention import functional


def _qkv(heads=4, key_heads=2, t=9, s=11, seed=0):
  rng = np.random.default_rng(seed)
  def make(*shape):
    return tf.constant(rng.normal(size=shape), tf.float32)
  return make(2, t, heads, 3), make(2, s, key_heads, 3), make(2, s, key_heads,
                                                              5)


def _both(q, k, v, mask, causal, chunk_size):
  """(plain, chunked) outputs and gradients of a loss of the outputs."""
  full = mask
  if causal:
    order = functional.causal_allowed(tf.range(q.shape[1]),
                                      tf.range(k.shape[1]))[None, None]
    full = order if mask is None else tf.logical_and(mask, order)
  weights = tf.random.stateless_normal([q.shape[1], q.shape[2], v.shape[3]],
                                       [1, 2])
  results = []
  for compute in (lambda: functional.attention(q, k, v, full),
                  lambda: functional.chunked_attention(
                      q, k, v, mask, causal=causal, chunk_size=chunk_size)):
    with tf.GradientTape() as tape:
      tape.watch([q, k, v])
      out = compute()
      loss = tf.reduce_sum(out * weights)
    results.append((out, tape.gradient(loss, [q, k, v])))
  return results


@pytest.mark.parametrize("causal, masked", [(True, False), (False, True),
                                            (True, True)])
def test_chunked_equals_plain(causal, masked):
  q, k, v = _qkv()
  mask = None
  if masked:  # Padding: the second sequence has 6 keys.
    mask = tf.sequence_mask([11, 6], 11)[:, None, None, :]
  (plain, plain_grads), (chunked, chunked_grads) = _both(
      q, k, v, mask, causal, chunk_size=4)     # 11 keys: 3 chunks, padded.
  np.testing.assert_allclose(chunked, plain, rtol=1e-5, atol=1e-5)
  for a, b in zip(chunked_grads, plain_grads):
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
