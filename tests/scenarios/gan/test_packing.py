"""PacGAN packing (`GAN(pack=m)`, gan_pack.py): grouping against NumPy, the
batch-size error, penalties on packed inputs, and learning with packs."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.scenarios.gan import evaluation as gan_eval
from sonnet_like.scenarios.gan import losses as gan_losses
from sonnet_like.scenarios.gan import packing as gan_pack


def _numpy_pack(x, m):
  """Pack i is examples i*m .. i*m+m-1 concatenated along the last axis."""
  if x.ndim == 1:
    return x.reshape(-1, m)
  return np.concatenate([x[j::m] for j in range(m)], axis=-1)


@pytest.mark.parametrize("shape,m", [((12, 3), 2), ((12, 3), 4), ((12,), 3),
                                     ((6, 2, 2, 3), 3), ((8, 5), 1)])
def test_pack_groups_consecutive_examples_like_numpy(shape, m):
  x = np.random.default_rng(0).normal(size=shape).astype(np.float32)
  packed = gan_pack.pack(x, m)
  np.testing.assert_array_equal(packed.numpy(), _numpy_pack(x, m))
  assert packed.shape[0] == shape[0] // m
  scores = np.arange(shape[0] // m, dtype=np.float32)
  np.testing.assert_array_equal(gan_pack.unpack(tf.constant(scores), m),
                                np.repeat(scores, m))


def test_pack_keeps_the_static_shape_inside_tf_function():
  fn = tf.function(lambda x: gan_pack.pack(x, 2)).get_concrete_function(
      tf.TensorSpec([None, 4, 3]))
  assert fn.structured_outputs.shape.as_list() == [None, 4, 6]


class _Recorder(snt.Module):
  """A linear discriminator that records the shapes it is called with."""

  def __init__(self, features):
    super().__init__(name="discriminator")
    self.w = tf.Variable(tf.range(1.0, features + 1.0)[:, None] / 10.0)
    self.shapes = []

  def __call__(self, x):
    self.shapes.append(x.shape.as_list())
    return tf.matmul(x, self.w)


def test_discriminator_sees_packs_and_each_member_gets_its_pack_score():
  gan = snt.scenarios.GAN(num_steps=1, batch_size=8, pack=4, progress=False)
  discriminator = _Recorder(4 * 2)
  gan.discriminator = discriminator
  x = np.random.default_rng(1).normal(size=(8, 2)).astype(np.float32)
  scores = gan._scores(tf.constant(x))  # pylint: disable=protected-access
  assert discriminator.shapes == [[2, 8]]
  expected = _numpy_pack(x, 4) @ discriminator.w.numpy()[:, 0]
  np.testing.assert_allclose(scores, np.repeat(expected, 4), rtol=1e-5)


@pytest.mark.parametrize("kwargs,message", [
    (dict(batch_size=10, pack=4), r"GAN: batch_size must be a multiple of "
     r"pack \* replicas = 4 \* 1 = 4 .*got 10"),
    (dict(pack=0), "GAN: pack must be a positive int, got 0"),
    (dict(pack=2.0), "GAN: pack must be a positive int, got 2.0"),
    (dict(pack=True), "GAN: pack must be a positive int, got True"),
])
def test_bad_pack_or_batch_size_is_refused(kwargs, message):
  with pytest.raises(ValueError, match=message):
    snt.scenarios.GAN(num_steps=1, **kwargs)


def test_batch_size_must_split_into_packs_on_every_replica():
  gan_pack.check(4, 16, 2)
  with pytest.raises(ValueError, match=r"pack \* replicas = 4 \* 2 = 8 .*"
                     r"got 12"):
    gan_pack.check(4, 12, 2)
  with pytest.raises(ValueError, match="cannot be cut into packs of 4"):
    gan_pack.pack(np.zeros((6, 2), np.float32), 4)


def test_a_batch_of_unknown_size_is_checked_when_the_graph_runs():
  fn = tf.function(lambda x: gan_pack.pack(x, 4),
                   input_signature=[tf.TensorSpec([None, 2])])
  assert fn(tf.zeros([8, 2])).shape == [2, 8]
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match="GAN: a batch .*cannot be cut into packs of 4"):
    fn(tf.zeros([6, 2]))


def test_a_wrong_discriminator_output_names_the_packs():
  gan = snt.scenarios.GAN(num_steps=1, batch_size=8, pack=4, progress=False)
  gan.discriminator = lambda x: tf.zeros([x.shape[0], 3])
  with pytest.raises(ValueError, match=r"shape \[2, 3\] for 2 packs of 4 "
                     r"examples \(pack=4\)"):
    gan._scores(tf.zeros([8, 2]))  # pylint: disable=protected-access


def _critic():
  tf.random.set_seed(0)
  critic = snt.nets.MLP([8, 1], activation=tf.nn.tanh)
  return lambda x: critic(x)[:, 0]


def test_r1_penalty_is_taken_on_real_packs():
  critic = _critic()
  rng = np.random.default_rng(2)
  real, fake = (rng.normal(size=(6, 2)).astype(np.float32) for _ in range(2))
  got = gan_pack.penalty("r1", critic, tf.constant(real), tf.constant(fake),
                         None, 3)
  packs = tf.constant(_numpy_pack(real, 3))
  with tf.GradientTape() as tape:
    tape.watch(packs)
    total = tf.reduce_sum(critic(packs))
  grads = tape.gradient(total, packs).numpy()
  expected = 0.5 * (grads ** 2).sum(axis=1)
  np.testing.assert_allclose(got, np.repeat(expected, 3), rtol=1e-5)


def test_wgan_gp_penalty_interpolates_whole_packs_with_one_weight():
  critic = _critic()
  rng = np.random.default_rng(3)
  real, fake = (rng.normal(size=(6, 2)).astype(np.float32) for _ in range(2))
  weight = np.array([0.1, 0.9, 0.5, 0.7, 0.3, 0.2], np.float32)
  got = gan_pack.penalty("wgan_gp", critic, tf.constant(real),
                         tf.constant(fake), tf.constant(weight), 2)
  eps = weight[::2, None]
  interpolates = tf.constant(eps * _numpy_pack(real, 2) +
                             (1 - eps) * _numpy_pack(fake, 2))
  with tf.GradientTape() as tape:
    tape.watch(interpolates)
    total = tf.reduce_sum(critic(interpolates))
  norms = np.linalg.norm(tape.gradient(total, interpolates).numpy(), axis=1)
  np.testing.assert_allclose(got, np.repeat((norms - 1) ** 2, 2), rtol=1e-4)
  # The same as gan_losses' penalty on NumPy-packed inputs.
  np.testing.assert_allclose(got, np.repeat(gan_losses.wgan_gp_penalty(
      critic, tf.constant(_numpy_pack(real, 2)),
      tf.constant(_numpy_pack(fake, 2)), weight[::2]), 2), rtol=1e-5)


@pytest.mark.parametrize("loss,penalty", [("wasserstein", "wgan_gp"),
                                          ("non_saturating", "r1")])
def test_packed_training_with_penalties_is_finite(loss, penalty):
  tf.random.set_seed(0)
  generator = snt.nets.MLP([8, 2], name="generator")
  discriminator = snt.nets.MLP([8, 1], name="discriminator")
  gan = snt.scenarios.GAN(num_steps=4, batch_size=12, pack=3, n_critic=2,
                          loss=loss, gradient_penalty=1.0, penalty=penalty,
                          latent_size=2, progress=False)
  history = gan(generator, discriminator, keras.optimizers.Adam(1e-3),
                keras.optimizers.Adam(1e-3),
                np.random.default_rng(0).normal(size=(60, 2)))
  assert (3 * 2, 8) in [tuple(v.shape) for v in discriminator.variables]
  for name in ("d_loss", "g_loss", "penalty"):
    assert np.all(np.isfinite(history.train[name])), name


def test_learns_both_modes_of_a_1d_mixture_with_packs_of_two():
  modes, std = np.array([[-1.0], [1.0]], np.float32), 0.1
  rng = np.random.default_rng(0)
  real = (modes[rng.integers(2, size=2_000)] +
          rng.normal(0, std, size=(2_000, 1))).astype(np.float32)
  tf.random.set_seed(0)
  generator = snt.nets.MLP([32, 32, 1], name="generator")
  discriminator = snt.nets.MLP([32, 32, 1], name="discriminator")
  gan = snt.scenarios.GAN(num_steps=1_000, batch_size=64, pack=2,
                          latent_size=4, steps_per_call=100,
                          gradient_penalty=0.1, penalty="r1",
                          generator_ema=0.99, progress=False)
  gan(generator, discriminator, keras.optimizers.Adam(1e-3, beta_1=0.5),
      keras.optimizers.Adam(1e-3, beta_1=0.5), real)
  samples = gan.sample(1_000)
  result = gan_eval.mode_coverage(samples, modes, std)
  assert result["modes"] == 2.0
  assert result["high_quality"] > 50.0
  assert 0.25 < (samples[:, 0] > 0).mean() < 0.75
