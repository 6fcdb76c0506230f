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
  """Greedy decoding that runs the whole prefix at every token."""
  step = tf.function(lambda s: lm(s), input_signature=[  # pylint: disable=unnecessary-lambda
      tf.TensorSpec([prompt.shape[0], None], tf.int32)])
  sequence = prompt
  for _ in range(num_tokens):
    token = tf.argmax(step(sequence)[:, -1], -1, output_type=tf.int32)
    sequence = tf.concat([sequence, token[:, None]], axis=1)
  return sequence[:, prompt.shape[1]:].numpy()


def test_cached_greedy_tokens_equal_recomputation():
  lm = _lm("rotary", num_layers=1)
  prompt = tf.constant([[1, 2, 3, 4], [5, 6, 7, 8]])
  cached = tf.function(lambda p: lm.sample(p, 64, temperature=0.))(prompt)
  expected = _recomputed(lm, prompt, 64)
  np.testing.assert_array_equal(cached, expected)
  assert len(np.unique(expected)) > 3       # Not a constant sequence.


def test_learned_positions_cached_equal_recomputed_and_seeded():
  # Eagerly (the while loops run in Python; cheaper here than tracing).
  lm = _lm("learned", num_layers=2)
  prompt = tf.constant([[1, 2, 3], [4, 5, 6]])

  def sample(cache, temperature=1., seed=(7, 0), top_k=4):
    return lm.sample(prompt, 8, temperature=temperature, top_k=top_k,
                     seed=tf.constant(seed), use_cache=cache).numpy()

  greedy = sample(True, temperature=0.)
  np.testing.assert_array_equal(sample(False, temperature=0.), greedy)
  sampled = sample(True)
  np.testing.assert_array_equal(sample(False), sampled)
  assert not np.array_equal(sampled, greedy)
  assert not np.array_equal(sample(True, seed=(8, 0)), sampled)
  np.testing.assert_array_equal(sample(True, top_k=1), greedy)


def test_too_many_tokens_are_named():
  lm = _lm("learned")
  prompt = tf.constant([[1, 2, 3]])
  with pytest.raises(ValueError, match=r"TransformerLM 'transformer_lm' was "
                     r"asked for a prompt of 3 and 8 new tokens, 11 positions,"
                     r" but the key/value cache holds 10"):
    lm.sample(prompt, 8, max_length=10)
  with pytest.raises(ValueError, match="its learned positions stop at 70"):
    lm.sample(prompt, 68)
