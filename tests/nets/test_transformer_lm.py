"""Tests for sonnet_like/nets/transformer_lm.py."""

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt


def _lm(position="rotary"):
  tf.random.set_seed(3)
  return snt.nets.TransformerLM(13, 2, 4, 16, num_kv_heads=2,
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


@pytest.mark.parametrize("position", ["rotary", "learned"])
def test_cached_greedy_tokens_equal_recomputation(position):
  lm = _lm(position)
  prompt = tf.constant([[1, 2, 3, 4], [5, 6, 7, 8]])
  sample = tf.function(lambda p: lm.sample(p, 64, temperature=0.))
  cached = sample(prompt).numpy()
  expected = _recomputed(lm, prompt, 64)
  np.testing.assert_array_equal(cached, expected)
  assert len(np.unique(expected)) > 3       # Not a constant sequence.


def test_sampling_is_seeded_and_top_k_limited():
  lm = _lm()
  prompt = tf.constant([[1, 2, 3]])
  sample = tf.function(lambda p, seed, top_k, cache: lm.sample(
      p, 6, temperature=1., top_k=top_k, seed=seed, use_cache=cache))
  first = sample(prompt, 7, 4, True).numpy()
  np.testing.assert_array_equal(sample(prompt, 7, 4, True), first)
  np.testing.assert_array_equal(sample(prompt, 7, 4, False), first)
  assert not np.array_equal(sample(prompt, 8, 4, True), first)
  greedy = lm.sample(prompt, 6, temperature=0.)
  np.testing.assert_array_equal(sample(prompt, 9, 1, True), greedy)


def test_too_many_tokens_are_named():
  lm = _lm("learned")
  prompt = tf.constant([[1, 2, 3]])
  with pytest.raises(ValueError, match=r"TransformerLM 'transformer_lm' was "
                     r"asked for a prompt of 3 and 8 new tokens, 11 positions,"
                     r" but the key/value cache holds 10"):
    lm.sample(prompt, 8, max_length=10)
  with pytest.raises(ValueError, match="its learned positions stop at 70"):
    lm.sample(prompt, 68)
