"""Rollout collection: shapes, bookkeeping, randomness and compilation."""

import numpy as np
import pytest
import tensorflow as tf

from sonnet_like.scenarios.rl.parts import episodes
from sonnet_like.scenarios.rl.parts import policies
from sonnet_like.scenarios.rl.parts import rollout
from tests import rl_toys


def _collect(env, actor, seed=0, length=7, jit=False):
  policy = policies.Policy("PPO", env.action_space)
  stats = episodes.EpisodeStats(env.num_envs)
  rng = tf.random.Generator.from_seed(seed)
  run = tf.function(lambda: rollout.collect(env, actor, policy, stats, rng,
                                            length), jit_compile=jit)
  return run(), stats, policy


def _always_right(observation):
  return 20.0 * tf.concat([-observation, observation], axis=1)


def test_rollout_records_every_step_time_major():
  env = rl_toys.Guess(num_envs=3, length=4)
  first = env.reset(seed=1).numpy()
  batch, stats, policy = _collect(env, _always_right, length=10)
  assert batch.observations.shape == [10, 3, 1]
  assert batch.actions.shape == [10, 3] and batch.actions.dtype == tf.int32
  np.testing.assert_array_equal(batch.observations[0].numpy(), first)
  # The near-deterministic actor picks the paying action every time.
  np.testing.assert_array_equal(batch.actions.numpy(),
                                (batch.observations[..., 0] > 0).numpy())
  np.testing.assert_array_equal(batch.rewards.numpy(), np.ones([10, 3]))
  want_log_probs = policy.distribution(_always_right(
      rollout.flatten(batch.observations))).log_prob(
          rollout.flatten(batch.actions))
  np.testing.assert_allclose(rollout.flatten(batch.log_probs).numpy(),
                             want_log_probs.numpy(), atol=1e-6)
  # Guess truncates every 4th step; the next observation follows on.
  ended = np.zeros([10, 3], bool)
  ended[[3, 7]] = True
  np.testing.assert_array_equal(batch.truncated.numpy(), ended)
  np.testing.assert_array_equal(batch.terminated.numpy(), np.zeros([10, 3]))
  np.testing.assert_array_equal(batch.final_observations[:-1].numpy(),
                                batch.observations[1:].numpy())
  np.testing.assert_array_equal(batch.last_observation.numpy(),
                                env.observation().numpy())
  logs = stats.logs()
  assert float(logs["env_steps"]) == 30 and float(logs["episodes"]) == 6
  assert float(logs["episode_return"]) == 4


@pytest.mark.parametrize("jit", [False, True])
def test_same_generator_same_rollout(jit):
  # XLA draws other random numbers than the CPU kernels: compare like with
  # like.
  uniform = lambda observation: tf.zeros([tf.shape(observation)[0], 2])
  env = rl_toys.Guess(num_envs=4)
  env.reset(seed=0)
  first, _, _ = _collect(env, uniform, seed=3, jit=jit)
  env.reset(seed=0)
  again, _, _ = _collect(env, uniform, seed=3, jit=jit)
  env.reset(seed=0)
  other, _, _ = _collect(env, uniform, seed=4, jit=jit)
  for a, b in zip(first, again):
    np.testing.assert_array_equal(a.numpy(), b.numpy())
  assert not np.array_equal(first.actions.numpy(), other.actions.numpy())
  # A uniform policy is right about half the time.
  assert 0.25 < float(tf.reduce_mean(first.rewards)) < 0.75


def test_flatten_merges_time_and_environments():
  x = tf.reshape(tf.range(24), [2, 3, 4])
  np.testing.assert_array_equal(rollout.flatten(x).numpy(),
                                np.arange(24).reshape(6, 4))
