"""Tests for the Q-learning targets and losses against NumPy."""

import numpy as np
import tensorflow as tf

from sonnet_like.scenarios.rl import q_learning


def test_double_and_plain_dqn_targets_match_numpy():
  rng = np.random.default_rng(0)
  reward = rng.normal(size=6).astype(np.float32)
  terminated = np.array([0, 1, 0, 0, 1, 0], bool)
  next_target = rng.normal(size=(6, 3)).astype(np.float32)
  next_online = rng.normal(size=(6, 3)).astype(np.float32)
  gamma = 0.9
  chosen = next_target[np.arange(6), next_online.argmax(1)]
  expected_double = reward + gamma * (1 - terminated) * chosen
  expected_plain = reward + gamma * (1 - terminated) * next_target.max(1)
  assert not np.allclose(expected_double, expected_plain)
  np.testing.assert_allclose(
      q_learning.td_targets(reward, terminated, next_target, gamma,
                            next_online).numpy(), expected_double, rtol=1e-6)
  np.testing.assert_allclose(
      q_learning.td_targets(reward, terminated, next_target, gamma).numpy(),
      expected_plain, rtol=1e-6)


def test_no_gradient_flows_through_the_targets():
  next_q = tf.Variable([[1.0, 2.0]])
  with tf.GradientTape() as tape:
    targets = q_learning.td_targets(tf.ones([1]), tf.zeros([1], tf.bool),
                                    next_q, 0.5)
  assert tape.gradient(targets, next_q) is None
  np.testing.assert_allclose(targets.numpy(), [2.0])


def test_huber_matches_numpy():
  error = np.array([-3.0, -1.0, -0.5, 0.0, 0.25, 1.0, 2.5], np.float32)
  expected = np.where(np.abs(error) <= 1, 0.5 * error ** 2,
                      np.abs(error) - 0.5)
  np.testing.assert_allclose(q_learning.huber(tf.constant(error)).numpy(),
                             expected)
