"""The in-graph Pendulum against gymnasium's Pendulum-v1, and its state."""

import numpy as np
import pytest
import tensorflow as tf

from sonnet_like import envs
from sonnet_like.envs.pendulum import Pendulum
from tests.envs import checkpoints
from tests.envs import gym_reference


def _compare_with_gymnasium(num_envs, num_steps, max_episode_steps, jit):
  """How many episodes were truncated; none may terminate."""
  pytest.importorskip("gymnasium")
  env = Pendulum(num_envs, seed=7, max_episode_steps=max_episode_steps)
  env.reset(seed=7)
  rng = np.random.default_rng(0)

  def policy(unused_obs, unused_state):
    # Torques beyond the bounds too: both must clip them alike.
    return rng.uniform(-3.0, 3.0, (num_envs, 1)).astype(np.float32)

  counts = gym_reference.compare(env, "Pendulum-v1", policy, num_steps, jit)
  assert counts["terminated"] == 0
  return counts["truncated"]


def test_matches_gymnasium_step_by_step():
  assert _compare_with_gymnasium(4, 250, 200, jit=False) == 4


def test_matches_gymnasium_under_xla_with_a_short_time_limit():
  assert _compare_with_gymnasium(3, 60, 25, jit=True) == 6


def test_make_gives_the_in_graph_version():
  env = envs.make("Pendulum-v1", num_envs=3, in_graph=True, seed=2)
  assert isinstance(env, envs.Pendulum) and env.num_envs == 3
  np.testing.assert_array_equal(env.action_space.low, [-2.0])
  np.testing.assert_array_equal(env.action_space.high, [2.0])


def test_reset_is_uniform_in_bounds_and_reproducible():
  env = Pendulum(2000, seed=3)
  env.reset(seed=11)
  state = env.state.numpy()
  assert np.all(np.abs(state[:, 0]) <= np.pi) and np.all(
      np.abs(state[:, 1]) <= 1.0)
  assert state[:, 0].std() == pytest.approx(2 * np.pi / np.sqrt(12), rel=0.05)
  first = env.observation().numpy()
  np.testing.assert_allclose(first[:, 0] ** 2 + first[:, 1] ** 2, 1.0,
                             rtol=1e-6)
  np.testing.assert_array_equal(env.reset(seed=11), first)
  assert not np.array_equal(env.reset(), first)


def test_upright_and_still_costs_nothing_and_hanging_costs_pi_squared():
  env = Pendulum(2)
  env.set_state([[0.0, 0.0], [np.pi, 0.0]])
  timestep = env.step(tf.zeros([2, 1]))
  np.testing.assert_allclose(timestep.reward.numpy(), [0.0, -np.pi**2],
                             rtol=1e-6)


def test_truncates_at_the_time_limit_and_never_terminates():
  env = Pendulum(2, max_episode_steps=5)
  env.set_state([[0.1, 0.0], [0.2, 0.0]], elapsed_steps=[4, 0])
  timestep = env.step(tf.zeros([2, 1]))
  np.testing.assert_array_equal(timestep.truncated, [True, False])
  np.testing.assert_array_equal(timestep.terminated, [False, False])
  np.testing.assert_array_equal(env.elapsed_steps, [0, 1])


def test_checkpoint_restores_state_and_generator(tmp_path):
  checkpoints.assert_restores(
      lambda seed: Pendulum(3, seed=seed, max_episode_steps=7),
      [tf.fill([3, 1], float(a)) for a in np.linspace(-2, 2, 30)], tmp_path)


@pytest.mark.parametrize("action, error", [
    (tf.zeros([2, 1], tf.int32), TypeError),
    (tf.zeros([2]), ValueError),
    (tf.zeros([3, 1]), ValueError)])
def test_bad_actions_are_named(action, error):
  with pytest.raises(error, match="^Pendulum: action must"):
    Pendulum(2).step(action)


def test_bad_arguments_are_named():
  with pytest.raises(ValueError, match="^Pendulum: seed must be an int"):
    Pendulum(2, seed=1.5)
  with pytest.raises(ValueError, match="Pendulum.*num_envs"):
    Pendulum(0)
