"""Tests for sonnet_like/nets/transformer_lm.py."""

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt


def _lm(position="rotary", num_layers=2):
  tf.random.set_seed(3)
  return snt.nets.TransformerLM(13, num_layers, 4, 16, num_kv_heads=2,
                                position=position, max_length=70, norm="rms")


def _recomputed(lm, prompt, num_tokens):
  """Greedy decoding that runs the whole prefix at every token (eagerly)."""
  sequence = prompt
  for _ in range(num_tokens):
    token = tf.argmax(lm(sequence)[:, -1], -1, output_type=tf.int32)
    sequence = tf.concat([sequence, token[:, None]], axis=1)
  return sequence[:, prompt.shape[1]:].numpy()


def test_cached_greedy_tokens_equal_recomputation():
  lm = _lm("rotary", num_layers=2)
  prompt = tf.constant([[1, 2, 3, 4], [5, 6, 7, 8]])
  cached = tf.function(lambda p: lm.sample(p, 64, temperature=0.))(prompt)
  expected = _recomputed(lm, prompt, 64)
  np.testing.assert_array_equal(cached, expected)
  assert len(np.unique(expected)) > 3       # Not a constant sequence.


def test_learned_positions_cached_equal_recomputed_and_seeded():
  lm = _lm("learned", num_layers=1)
  prompt = tf.constant([[1, 2, 3], [4, 5, 6]])

  @tf.function
  def both(seed):  # Greedy, then sampled among the 4 most likely.
    return [lm.sample(prompt, 64, temperature=t, top_k=k, seed=seed,
                      use_cache=cache)
            for t, k in ((0., None), (1., 4)) for cache in (True, False)]

  greedy, greedy_recomputed, sampled, sampled_recomputed = both(
      tf.constant([7, 0]))
  np.testing.assert_array_equal(greedy, greedy_recomputed)
  np.testing.assert_array_equal(sampled, sampled_recomputed)
  assert not np.array_equal(sampled, greedy)
  np.testing.assert_array_equal(both(tf.constant([7, 0]))[2], sampled)
  assert not np.array_equal(both(tf.constant([8, 0]))[2], sampled)
  top_1 = lm.sample(prompt[:, :2], 3, top_k=1, seed=5)
  np.testing.assert_array_equal(top_1, lm.sample(prompt[:, :2], 3,
                                                 temperature=0.))


def test_too_many_tokens_are_named():
  lm = _lm("learned")
  prompt = tf.constant([[1, 2, 3]])
  with pytest.raises(ValueError, match=r"TransformerLM 'transformer_lm' was "
                     r"asked for a prompt of 3 and 8 new tokens, 11 positions,"
                     r" but the key/value cache holds 10"):
    lm.sample(prompt, 8, max_length=10)
  with pytest.raises(ValueError, match="its learned positions stop at 70"):
    lm.sample(prompt, 68)
