"""InGraphEnvironment: a new environment writes only spaces, reset, dynamics."""

import numpy as np
import pytest
import tensorflow as tf

from sonnet_like import envs
from sonnet_like.envs import base
from sonnet_like.envs import in_graph


class Drift(in_graph.InGraphEnvironment):
  """A point pushed along a line; the episode ends beyond +-1."""

  label = "Drift"
  time_limit = 6
  state_names = ("position",)
  observation_spec = tf.TensorSpec([1], tf.float32)
  action_space = base.Box(np.float32([-0.5]), np.float32([0.5]))

  def _draw_states(self):
    return self._uniform(-0.25, 0.25, columns=1)

  def _dynamics(self, state, action):
    reached = state + tf.cast(action, tf.float64)
    return reached, -tf.abs(reached[:, 0]), tf.abs(reached[:, 0]) > 1.0


class Dial(in_graph.InGraphEnvironment):
  """Four discrete actions that set the state; nothing but dynamics."""

  label = "Dial"
  time_limit = 3
  state_names = ("setting",)
  observation_spec = tf.TensorSpec([1], tf.float32)
  action_space = base.Discrete(4)

  def _draw_states(self):
    return tf.zeros([self.num_envs, 1], tf.float64)

  def _dynamics(self, state, action):
    reached = tf.cast(action, tf.float64)[:, None]
    return reached, tf.zeros([self.num_envs]), tf.zeros([self.num_envs],
                                                        tf.bool)


def test_a_new_environment_gets_the_protocol_from_the_base():
  env = Drift(3, seed=1)
  assert isinstance(env, envs.Environment) and env.in_graph
  assert env.name == "drift" and env.max_episode_steps == 6
  assert repr(env) == "Drift(num_envs=3, max_episode_steps=6)"
  assert Drift(3, max_episode_steps=9, name="d").max_episode_steps == 9
  first = env.reset(seed=4).numpy()
  assert first.shape == (3, 1) and np.all(np.abs(first) < 0.25)
  env.set_state([[0.9], [0.0], [-0.2]], elapsed_steps=[1, 5, 1])
  timestep = env.step(tf.constant([[0.5], [0.1], [0.0]]))
  np.testing.assert_array_equal(timestep.terminated, [True, False, False])
  np.testing.assert_array_equal(timestep.truncated, [False, True, False])
  np.testing.assert_allclose(timestep.final_observation[:, 0],
                             [1.4, 0.1, -0.2], rtol=1e-6)
  np.testing.assert_allclose(timestep.reward, [-1.4, -0.1, -0.2], rtol=1e-6)
  assert timestep.reward.dtype == tf.float32
  observation = timestep.observation.numpy()
  assert np.all(np.abs(observation[:2]) < 0.25)   # Both restarted.
  assert observation[2, 0] == np.float32(-0.2)
  np.testing.assert_array_equal(env.elapsed_steps, [0, 0, 2])


def test_the_base_compiles_with_xla_and_matches_eager_stepping():
  actions = tf.constant(np.random.default_rng(0).uniform(-0.5, 0.5,
                                                         (20, 4, 1)),
                        tf.float32)
  results = []
  for jit in (None, True):
    env = Drift(4, seed=2)
    env.reset(seed=2)
    step = env.step if jit is None else tf.function(env.step, jit_compile=True)
    results.append(np.stack([step(a).observation.numpy() for a in actions]))
  np.testing.assert_array_equal(results[0], results[1])


@pytest.mark.parametrize("num_actions, choices", [
    (1, "0"), (2, "0 or 1"), (4, "0, 1, 2 or 3")])
def test_discrete_range_errors_list_the_choices(num_actions, choices):
  assert in_graph._choices(num_actions) == choices


def test_errors_name_the_environment():
  with pytest.raises(ValueError, match=r"^Dial: actions must be 0, 1, 2 or 3, "
                     r"got \[4, -1\]\.$"):
    Dial(3).step(tf.constant([4, 1, -1]))
  with pytest.raises(ValueError, match=r"^Drift: states must have shape "
                     r"\[2, 1\], got \(2, 2\)\.$"):
    Drift(2).set_state(np.zeros([2, 2]))
  with pytest.raises(ValueError, match=r"^Drift: elapsed_steps must have "
                     r"shape \[2\], got \(3,\)\.$"):
    Drift(2).set_state(np.zeros([2, 1]), elapsed_steps=[1, 2, 3])
  with pytest.raises(ValueError, match=r"^Dial: max_episode_steps must be a "
                     r"positive int, got 0\.$"):
    Dial(2, max_episode_steps=0)


def test_a_subclass_without_dynamics_says_what_is_missing():

  class NoDynamics(in_graph.InGraphEnvironment):
    label = "NoDynamics"
    time_limit = 5
    state_names = ("x",)
    observation_spec = tf.TensorSpec([1], tf.float32)
    action_space = base.Discrete(2)

    def _draw_states(self):
      return tf.zeros([self.num_envs, 1], tf.float64)

  with pytest.raises(NotImplementedError, match=r"^NoDynamics must implement "
                     r"_dynamics\(\)\.$"):
    NoDynamics(2).step(tf.constant([0, 1]))
