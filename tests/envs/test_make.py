"""snt.envs.make turns every accepted kind of `env` into an Environment."""

import numpy as np
import pytest
import tensorflow as tf

from sonnet_like import envs
from tests import rl_toys

gym = pytest.importorskip("gymnasium")


def test_in_graph_cartpole_from_its_id():
  env = envs.make("CartPole-v1", num_envs=3, seed=4, in_graph=True)
  assert isinstance(env, envs.CartPole) and env.num_envs == 3
  np.testing.assert_array_equal(env.reset(seed=4),
                                envs.CartPole(3, seed=0).reset(seed=4))
  assert envs.make("CartPole-v1", in_graph=True).num_envs == 1


@pytest.mark.parametrize("gym_id, env_class, limit", [
    ("Acrobot-v1", envs.Acrobot, 500),
    ("CartPole-v1", envs.CartPole, 500),
    ("MountainCar-v0", envs.MountainCar, 200),
    ("MountainCarContinuous-v0", envs.MountainCarContinuous, 999),
    ("Pendulum-v1", envs.Pendulum, 200)])
def test_every_classic_control_id_has_its_in_graph_version(gym_id, env_class,
                                                           limit):
  env = envs.make(gym_id, num_envs=2, in_graph=True)
  assert type(env) is env_class and env.num_envs == 2
  assert env.max_episode_steps == limit == gym.spec(gym_id).max_episode_steps
  reference = gym.make(gym_id)
  assert env.observation_spec.shape == reference.observation_space.shape
  if isinstance(env.action_space, envs.Discrete):
    assert env.action_space.num_actions == reference.action_space.n
  else:
    np.testing.assert_array_equal(env.action_space.low,
                                  reference.action_space.low)
    np.testing.assert_array_equal(env.action_space.high,
                                  reference.action_space.high)


def test_gymnasium_id_gives_a_seeded_gym_environment():
  env = envs.make("Acrobot-v1", num_envs=2, seed=3)
  assert isinstance(env, envs.GymEnvironment) and not env.in_graph
  assert env.num_envs == 2 and env.action_space == envs.Discrete(3)
  reference = gym.make("Acrobot-v1")
  np.testing.assert_array_equal(env.observation()[1],
                                reference.reset(seed=4)[0])


def test_env_vector_env_and_factories():
  single = envs.make(gym.make("CartPole-v1"), num_envs=2)
  assert isinstance(single, envs.GymEnvironment) and single.num_envs == 2
  vector = gym.make_vec("CartPole-v1", num_envs=3, vectorization_mode="sync")
  assert envs.make(vector).num_envs == 3
  calls = []

  def factory():
    calls.append(1)
    return gym.make("Pendulum-v1")

  made = envs.make(factory, num_envs=3)
  assert len(calls) == 3 and made.num_envs == 3
  assert isinstance(made.action_space, envs.Box)
  vector_factory = envs.make(
      lambda: gym.make_vec("CartPole-v1", 2, vectorization_mode="sync"))
  assert vector_factory.num_envs == 2
  toy = envs.make(lambda: rl_toys.Guess(num_envs=5), in_graph=True)
  assert isinstance(toy, rl_toys.Guess)


def test_environment_is_returned_as_is():
  toy = rl_toys.Guess(num_envs=4)
  assert envs.make(toy) is toy
  assert envs.make(toy, num_envs=4, in_graph=True) is toy
  with pytest.raises(ValueError, match=r"make: num_envs=2 was asked for, but "
                     r"the given Guess has num_envs=4\."):
    envs.make(toy, num_envs=2)


def test_in_graph_requests_that_cannot_be_met():
  with pytest.raises(ValueError, match=r"make: in_graph=True needs .* "
                     r"gymnasium's 'FrozenLake-v1' steps in Python"):
    envs.make("FrozenLake-v1", in_graph=True)
  with pytest.raises(ValueError, match=r"the gymnasium CartPoleEnv"):
    envs.make(lambda: gym.make("CartPole-v1").unwrapped, in_graph=True)
  gym_env = envs.make("CartPole-v1")
  with pytest.raises(ValueError, match=r"the given GymEnvironment steps in "
                     r"Python"):
    envs.make(gym_env, in_graph=True)


@pytest.mark.parametrize("bad, name", [(3, "int"), (None, "NoneType"),
                                       (tf.constant(1.0), "EagerTensor")])
def test_type_errors_name_what_was_given(bad, name):
  with pytest.raises(TypeError, match=rf"make: env must be .*, got {name}"):
    envs.make(bad)


def test_factory_returning_something_else():
  with pytest.raises(TypeError, match=r"make: a factory must return .*, got "
                     r"str: 'CartPole-v1'"):
    envs.make(lambda: "CartPole-v1")


def test_num_envs_is_checked():
  with pytest.raises(ValueError, match=r"make: num_envs must be a positive "
                     r"int or None, got 0\."):
    envs.make("CartPole-v1", num_envs=0)
  vector = gym.make_vec("CartPole-v1", num_envs=3, vectorization_mode="sync")
  with pytest.raises(ValueError, match=r"num_envs=2 was asked for, but the "
                     r"VectorEnv has 3"):
    envs.make(vector, num_envs=2)
