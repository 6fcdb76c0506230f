"""core/utils.py: replicate, seeded_generator, reseed."""

import numpy as np
import pytest
import tensorflow as tf

from sonnet_like.core import utils


def test_replicate():
  assert utils.replicate(3, 2, "Conv2D", "stride") == (3, 3)
  assert utils.replicate([1, 2], 2, "Conv2D", "stride") == (1, 2)
  with pytest.raises(ValueError, match=r"Conv2D: stride must be a scalar or "
                     r"a sequence of 2 values, got \[1, 2, 3\]"):
    utils.replicate([1, 2, 3], 2, "Conv2D", "stride")


def _draws(generator, n=64):
  return generator.uniform_full_int([n], tf.uint32).numpy()


def test_neighbouring_seeds_give_unrelated_streams():
  # With Generator.from_seed, seed 1's stream is seed 0's shifted by 4 draws.
  shifted = _draws(tf.random.Generator.from_seed(0))[4:]
  assert np.array_equal(shifted, _draws(tf.random.Generator.from_seed(1))[:60])
  zero, one = _draws(utils.seeded_generator(0)), _draws(utils.seeded_generator(1))
  assert not set(zero) & set(one)


def test_reseed_restarts_the_stream_eagerly_and_in_tf_function():
  expected = _draws(utils.seeded_generator(5), 8)
  generator = utils.seeded_generator(0)
  generator.normal([3])
  utils.reseed(generator, 5)
  np.testing.assert_array_equal(_draws(generator, 8), expected)

  @tf.function(jit_compile=True)
  def reseeded(seed):
    utils.reseed(generator, seed)
    return generator.uniform_full_int([8], tf.uint32)

  np.testing.assert_array_equal(reseeded(tf.constant(5)).numpy(), expected)


def test_bound_model_finds_how_to_pass_is_training_once():
  calls = []

  def required(x, is_training):
    calls.append(is_training)
    return x + 1.0

  def refuses(x, is_training=None):  # Sonnet's MLP without dropout.
    if is_training is not None:
      raise ValueError("is_training is only for dropout")
    calls.append(None)
    return x + 2.0

  x = tf.constant(1.0)
  for model, expected in ((required, True), (refuses, None)):
    calls.clear()
    call, outputs = utils.bound_model(model, x, True)
    assert float(outputs) == float(call(x)) == float(
        utils.call_model(model, x, True))
    assert calls == [expected] * 3  # The bound call passes it or not.
  plain = lambda x: x * 3.0
  call, outputs = utils.bound_model(plain, x, False)
  assert call is plain and float(outputs) == 3.0
