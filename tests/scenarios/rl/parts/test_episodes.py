"""EpisodeStats and EpisodeRunner on a tiny in-graph environment."""

import numpy as np
import pytest
import tensorflow as tf

from sonnet_like import envs
from sonnet_like.scenarios.rl.parts import episodes
from tests import rl_toys


def _timestep(reward, done):
  n = len(reward)
  zeros = tf.zeros([n, 1])
  return envs.TimeStep(zeros, tf.constant(reward, tf.float32),
                       tf.constant(done), tf.zeros([n], tf.bool), zeros)


def test_stats_average_completed_episodes_only():
  stats = episodes.EpisodeStats(num_envs=2, window=3)
  assert np.isnan(stats.logs()["episode_return"].numpy())
  stats.update(_timestep([1.0, 2.0], [False, False]))
  stats.update(_timestep([1.0, 2.0], [True, False]))   # env 0: return 2, len 2
  stats.update(_timestep([5.0, 2.0], [True, True]))    # 5 (len 1), 6 (len 3)
  logs = {k: float(v) for k, v in stats.logs().items()}
  assert logs["episode_return"] == pytest.approx((2 + 5 + 6) / 3)
  assert logs["episode_length"] == pytest.approx((2 + 1 + 3) / 3)
  assert logs["episodes"] == 3 and logs["env_steps"] == 6
  stats.update(_timestep([7.0, 0.0], [True, False]))   # Evicts the oldest (2).
  assert float(stats.logs()["episode_return"]) == pytest.approx((5 + 6 + 7) / 3)


def test_stats_update_traced_matches_eager():
  eager, traced = episodes.EpisodeStats(3), episodes.EpisodeStats(3)
  rng = np.random.default_rng(0)
  steps = [_timestep(rng.normal(size=3), rng.random(3) < 0.3)
           for _ in range(20)]
  update = tf.function(traced.update)
  for step in steps:
    eager.update(step)
    update(step)
  for a, b in zip(eager.variables, traced.variables):
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_window_is_at_least_num_envs():
  stats = episodes.EpisodeStats(num_envs=8, window=2)
  stats.update(_timestep(np.arange(8.0), [True] * 8))
  assert float(stats.logs()["episode_return"]) == pytest.approx(3.5)


def test_runner_plays_whole_episodes_reproducibly():
  env = rl_toys.Guess(num_envs=3, length=4)
  best = episodes.EpisodeRunner(
      env, lambda obs: tf.cast(obs[:, 0] > 0, tf.int32), num_episodes=5)
  result = best(seed=1)
  np.testing.assert_array_equal(result["return"], [4.0] * 5)
  np.testing.assert_array_equal(result["length"], [4] * 5)
  worst = episodes.EpisodeRunner(
      env, lambda obs: tf.cast(obs[:, 0] < 0, tf.int32), num_episodes=5)
  assert worst(seed=1)["return"].sum() == 0
  coin = episodes.EpisodeRunner(
      env, lambda obs: tf.zeros([3], tf.int32), num_episodes=30)
  first, again = coin(seed=2), coin(seed=2)
  np.testing.assert_array_equal(first["return"], again["return"])
  assert 0 < first["return"].mean() < 4


def test_runner_reports_episodes_that_never_end():
  env = rl_toys.Guess(num_envs=2, length=50)
  runner = episodes.EpisodeRunner(env, lambda obs: tf.zeros([2], tf.int32),
                                  num_episodes=2, max_steps=10)
  with pytest.raises(RuntimeError, match="0 of 2 episodes ended within "
                     "max_steps=10"):
    runner()


def test_runner_rejects_bad_episode_count():
  with pytest.raises(ValueError, match="num_episodes must be a positive int, "
                     "got 0"):
    episodes.EpisodeRunner(rl_toys.Guess(), lambda o: o, num_episodes=0)
