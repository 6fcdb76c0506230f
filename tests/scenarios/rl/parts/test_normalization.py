"""Running observation statistics and reward scaling."""

import numpy as np
import pytest
import tensorflow as tf

from sonnet_like.scenarios.rl.parts import normalization


def test_running_statistics_equal_numpy_over_all_batches():
  rng = np.random.default_rng(0)
  batches = [rng.normal(3.0, 2.0, (n, 2, 3)) for n in (1, 7, 50, 3)]
  stats = normalization.RunningMeanStd([2, 3])
  update = tf.function(stats.update)
  for batch in batches:
    update(tf.constant(batch, tf.float32))
  every = np.concatenate(batches).astype(np.float32).astype(np.float64)
  assert float(stats.count) == 61
  np.testing.assert_allclose(stats.mean.numpy(), every.mean(0), rtol=1e-10)
  np.testing.assert_allclose(stats.variance.numpy(), every.var(0), rtol=1e-9)


def test_observations_are_standardised_and_clipped():
  normalizer = normalization.ObservationNormalizer([2], clip=3.0)
  before = normalizer(tf.constant([[1.0, -2.0]])).numpy()
  np.testing.assert_allclose(before, [[1.0, -2.0]], rtol=1e-6)  # mean 0, var 1
  rng = np.random.default_rng(1)
  data = rng.normal([10.0, -5.0], [2.0, 0.5], (4_000, 2)).astype(np.float32)
  normalizer.update(data)
  out = normalizer(data).numpy()
  assert out.dtype == np.float32
  np.testing.assert_allclose(out.mean(0), [0, 0], atol=1e-3)
  np.testing.assert_allclose(out.std(0), [1, 1], rtol=1e-2)
  np.testing.assert_array_equal(
      normalizer(tf.constant([[1000.0, -1000.0]])).numpy(), [[3.0, -3.0]])
  with pytest.raises(ValueError, match="ObservationNormalizer: clip must"):
    normalization.ObservationNormalizer([2], clip=0)


def test_reward_scaler_divides_by_the_std_of_discounted_returns():
  rewards = np.array([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]], np.float32)
  done = np.array([[False, False], [True, False], [False, False]])
  scaler = normalization.RewardScaler(2, gamma=0.5)
  scaled = scaler(tf.constant(rewards), tf.constant(done)).numpy()
  # Running returns: env 0: 1, 1.5 (ends), 1; env 1: 2, 3, 3.5.
  returns = np.array([1.0, 1.5, 1.0, 2.0, 3.0, 3.5])
  np.testing.assert_allclose(scaler.returns.numpy(), [1.0, 3.5])
  np.testing.assert_allclose(scaled, rewards / np.sqrt(returns.var() + 1e-8),
                             rtol=1e-6)
  # The next rollout continues the running returns.
  scaler(tf.constant(rewards[:1]), tf.constant(done[:1]))
  np.testing.assert_allclose(scaler.returns.numpy(), [1.5, 3.75])


def test_statistics_are_in_a_checkpoint(tmp_path):
  normalizer = normalization.ObservationNormalizer([3])
  scaler = normalization.RewardScaler(2, gamma=0.9)
  normalizer.update(tf.random.normal([20, 3]))
  scaler(tf.random.normal([5, 2]), tf.zeros([5, 2], tf.bool))
  path = tf.train.Checkpoint(n=normalizer, r=scaler).save(str(tmp_path / "c"))
  other_n = normalization.ObservationNormalizer([3])
  other_r = normalization.RewardScaler(2, gamma=0.9)
  tf.train.Checkpoint(n=other_n, r=other_r).restore(path).assert_consumed()
  for a, b in zip(normalizer.variables + scaler.variables,
                  other_n.variables + other_r.variables):
    np.testing.assert_array_equal(a.numpy(), b.numpy())
