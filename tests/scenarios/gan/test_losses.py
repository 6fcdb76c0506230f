"""GAN losses and penalties, each against its formula in NumPy."""

import numpy as np
import pytest
import tensorflow as tf

from sonnet_like.scenarios.gan import losses as gan_losses

_REAL = np.array([-3.0, -0.5, 0.0, 0.7, 4.0], np.float32)
_FAKE = np.array([2.0, -1.5, 0.3, 0.0, -6.0], np.float32)


def _sigmoid(x):
  return 1.0 / (1.0 + np.exp(-x.astype(np.float64)))


@pytest.mark.parametrize("name,d_formula,g_formula", [
    ("minimax",
     lambda r, f: -np.log(_sigmoid(r)) - np.log(1 - _sigmoid(f)),
     lambda f: np.log(1 - _sigmoid(f))),
    ("non_saturating",
     lambda r, f: -np.log(_sigmoid(r)) - np.log(1 - _sigmoid(f)),
     lambda f: -np.log(_sigmoid(f))),
    ("wasserstein", lambda r, f: f - r, lambda f: -f),
    ("hinge", lambda r, f: np.maximum(0, 1 - r) + np.maximum(0, 1 + f),
     lambda f: -f),
    ("least_squares", lambda r, f: 0.5 * ((r - 1) ** 2 + f ** 2),
     lambda f: 0.5 * (f - 1) ** 2),
])
def test_losses_match_their_formulas(name, d_formula, g_formula):
  d_loss, g_loss = gan_losses.get(name)
  np.testing.assert_allclose(d_loss(tf.constant(_REAL), tf.constant(_FAKE)),
                             d_formula(_REAL, _FAKE), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(g_loss(tf.constant(_FAKE)), g_formula(_FAKE),
                             rtol=1e-5, atol=1e-6)
  assert d_loss(tf.constant(_REAL), tf.constant(_FAKE)).shape == [5]


def test_sigmoid_losses_stay_finite_for_huge_logits():
  huge = tf.constant([1e4, -1e4])
  for name in ("minimax", "non_saturating"):
    d_loss, g_loss = gan_losses.get(name)
    assert np.all(np.isfinite(d_loss(huge, -huge)))
    assert np.all(np.isfinite(g_loss(huge)))


def _quadratic_critic(x):
  # C(x) = sum(a * x^2) per example: grad = 2 a x.
  return tf.reduce_sum(tf.constant([1.0, -2.0]) * tf.square(x), axis=1)


def test_wgan_gp_penalty_is_gradient_norm_minus_one_squared_at_interpolates():
  real = np.array([[1.0, 2.0], [0.0, -1.0], [3.0, 0.5]], np.float32)
  fake = np.array([[-1.0, 0.0], [2.0, 2.0], [0.0, 0.0]], np.float32)
  eps = np.array([0.25, 1.0, 0.0], np.float32)
  got = gan_losses.wgan_gp_penalty(_quadratic_critic, tf.constant(real),
                                   tf.constant(fake), tf.constant(eps))
  x_hat = eps[:, None] * real + (1 - eps[:, None]) * fake
  grad = 2 * np.array([1.0, -2.0]) * x_hat
  np.testing.assert_allclose(got, (np.linalg.norm(grad, axis=1) - 1) ** 2,
                             rtol=1e-5)


def test_wgan_gp_penalty_on_images_uses_the_whole_example():
  real = tf.random.stateless_normal([4, 3, 3, 2], seed=[1, 2])
  fake = tf.random.stateless_normal([4, 3, 3, 2], seed=[3, 4])
  # |grad C| = 0.5 * sqrt(18) for every example.
  critic = lambda x: 0.5 * tf.reduce_sum(x, axis=[1, 2, 3])
  got = gan_losses.wgan_gp_penalty(critic, real, fake, tf.fill([4], 0.3))
  np.testing.assert_allclose(got, [(0.5 * np.sqrt(18) - 1) ** 2] * 4,
                             rtol=1e-5)


def test_r1_penalty_is_half_squared_gradient_norm_on_real():
  real = np.array([[1.0, 2.0], [0.5, -1.0]], np.float32)
  got = gan_losses.r1_penalty(_quadratic_critic, tf.constant(real))
  grad = 2 * np.array([1.0, -2.0]) * real
  np.testing.assert_allclose(got, 0.5 * np.sum(grad ** 2, axis=1), rtol=1e-5)


def test_penalty_has_a_gradient_for_the_critic_weights():
  w = tf.Variable([[1.5], [-0.5]])
  critic = lambda x: tf.matmul(x, w)[:, 0]
  real, fake = tf.ones([2, 2]), tf.zeros([2, 2])
  with tf.GradientTape() as tape:
    penalty = tf.reduce_sum(gan_losses.wgan_gp_penalty(critic, real, fake,
                                                       tf.fill([2], 0.5)))
  # penalty = 2 * (|w| - 1)^2; d/dw = 4 (|w| - 1) w / |w|.
  norm = np.sqrt(2.5)
  np.testing.assert_allclose(tape.gradient(penalty, w),
                             4 * (norm - 1) * w.numpy() / norm, rtol=1e-5)


def test_custom_pair_and_unknown_names():
  pair = (lambda r, f: f - r, lambda f: -f)
  assert gan_losses.get(pair) == pair
  with pytest.raises(ValueError, match=r"GAN: loss must be one of .*'wgan'"):
    gan_losses.get("wgan")
  with pytest.raises(ValueError, match="GAN: loss must be one of"):
    gan_losses.get((1, 2))
