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


def test_key_size_lets_heads_not_divide_the_model_size():
  # Before, TransformerLM took no key_size and said to give it.
  with pytest.raises(ValueError, match=(
      r"^TransformerLM has 5 heads, which do not divide model_size 16; pass "
      r"key_size \(and value_size if it differs\)")):
    snt.nets.TransformerLM(11, 1, num_heads=5, model_size=16)
  lm = snt.nets.TransformerLM(11, 1, num_heads=5, model_size=16, key_size=4,
                              value_size=2)
  assert lm(tf.constant([[1, 2, 3]])).shape == (1, 3, 11)
  attention = lm.transformer.blocks[0].attention
  assert (attention.key_size, attention.value_size) == (4, 2)
  assert lm.sample(tf.constant([[1, 2]]), 3, seed=0).shape == (1, 3)


def test_a_seed_gives_the_same_tokens_eagerly_traced_and_with_xla():
  # Before, stateless_categorical drew other tokens under XLA.
  lm = _lm("rotary", num_layers=1)
  prompt = tf.constant([[1, 2, 3], [4, 5, 6]])

  def sample(p):  # With and without top_k.
    return tf.stack([lm.sample(p, 16, temperature=0.8, top_k=k, seed=0)
                     for k in (None, 4)])

  eager = sample(prompt).numpy()
  np.testing.assert_array_equal(tf.function(sample)(prompt), eager)
  np.testing.assert_array_equal(
      tf.function(sample, jit_compile=True)(prompt), eager)
  assert len(np.unique(eager[0])) > 3  # Sampled, not a constant sequence.
  assert not np.array_equal(eager[0], eager[1])


def test_sampled_tokens_follow_the_softmax_of_the_logits():
  lm = _lm("rotary", num_layers=1)
  prompt = tf.tile(tf.constant([[1, 2, 3]]), [4000, 1])
  tokens = lm.sample(prompt, 1, temperature=0.5, seed=1)[:, 0].numpy()
  expected = tf.nn.softmax(lm(prompt[:1])[0, -1] / 0.5).numpy()
  counts = np.bincount(tokens, minlength=13) / len(tokens)
  np.testing.assert_allclose(counts, expected, atol=0.03)
