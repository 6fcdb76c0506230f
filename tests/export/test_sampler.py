"""snt.export.save_sampler: the same samples as GAN.sample for a seed."""

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.export import sampler as sampler_lib


def _uniform_codes(rng: tf.random.Generator, num_samples) -> tf.Tensor:
  return rng.uniform([num_samples, 3], -1.0, 1.0)


@pytest.mark.parametrize("seed", [0, 1, 12345, 2**40 + 3])
def test_seeded_normal_is_from_seed_normal(seed):
  np.testing.assert_array_equal(
      sampler_lib.seeded_normal(tf.constant(seed, tf.int64), [7, 3]),
      tf.random.Generator.from_seed(seed).normal([7, 3]))


def test_both_signatures(tmp_path):
  generator = snt.nets.MLP([8, 2], name="generator")
  path = snt.export.save_sampler(generator, tmp_path / "g",
                                 np.zeros([4, 5], np.float32))
  loaded = tf.saved_model.load(path)
  assert sorted(loaded.signatures) == ["sample", "serving_default"]
  codes = tf.random.normal([6, 5])
  np.testing.assert_array_equal(
      loaded.signatures["serving_default"](latents=codes)["samples"],
      generator(codes))
  sample = loaded.signatures["sample"]

  def draw(n, seed):
    return sample(num_samples=tf.constant(n),
                  seed=tf.constant(seed, tf.int64))["samples"].numpy()

  expected = generator(tf.random.Generator.from_seed(3).normal([9, 5]))
  np.testing.assert_array_equal(draw(9, 3), expected)
  np.testing.assert_array_equal(draw(9, 3), expected)  # No state kept.
  assert not np.array_equal(draw(9, 4), expected)
  np.testing.assert_array_equal(loaded(codes), generator(codes))


def test_a_custom_latent_sampler(tmp_path):
  generator = snt.nets.MLP([8, 2], name="generator")
  path = snt.export.save_sampler(generator, tmp_path / "g",
                                 tf.TensorSpec([None, 3]),
                                 latent_sampler=_uniform_codes)
  sample = tf.saved_model.load(path).signatures["sample"]
  for seed in (5, 6, 5):
    got = sample(num_samples=tf.constant(4), seed=tf.constant(seed, tf.int64))
    np.testing.assert_array_equal(got["samples"], generator(
        _uniform_codes(tf.random.Generator.from_seed(seed), 4)))


def test_errors(tmp_path):
  with pytest.raises(TypeError, match="save_sampler: generator must be "
                     "callable, got 1"):
    snt.export.save_sampler(1, tmp_path / "g", tf.TensorSpec([None, 2]))
  with pytest.raises(TypeError, match="latent_sampler must be callable as "
                     r"latent_sampler\(rng, num_samples\), got 'normal'"):
    snt.export.save_sampler(tf.identity, tmp_path / "g",
                            tf.TensorSpec([None, 2]), latent_sampler="normal")
  with pytest.raises(TypeError, match="latents must be one tf.TensorSpec"):
    snt.export.save_sampler(tf.identity, tmp_path / "g",
                            {"a": tf.TensorSpec([None, 2])})
