"""GymEnvironment against gymnasium stepped directly."""

import sys

import numpy as np
import pytest
import tensorflow as tf

from sonnet_like import envs
from sonnet_like.envs import gym_adapter
from sonnet_like.scenarios.rl.parts import episodes

gym = pytest.importorskip("gymnasium")


def _random_actions(env, rng, num_steps):
  space = env.action_space
  if isinstance(space, envs.Discrete):
    return rng.integers(0, space.num_actions, (num_steps, env.num_envs))
  return rng.uniform(space.low, space.high,
                     (num_steps, env.num_envs, *space.shape)).astype(np.float32)


@pytest.mark.parametrize("env_id, num_steps", [
    ("CartPole-v1", 100), ("Acrobot-v1", 505), ("Pendulum-v1", 205)])
def test_matches_gymnasium_stepped_directly(env_id, num_steps):
  env = envs.GymEnvironment(env_id, num_envs=2, seed=5)
  references = [gym.make(env_id) for _ in range(2)]
  first = [reference.reset(seed=5 + i)[0]
           for i, reference in enumerate(references)]
  np.testing.assert_array_equal(env.reset(seed=5), first)
  step = tf.function(env.step)
  ended = 0
  for action in _random_actions(env, np.random.default_rng(0), num_steps):
    timestep = step(tf.constant(action))
    for i, reference in enumerate(references):
      ref_action = int(action[i]) if env_id != "Pendulum-v1" else action[i]
      obs, reward, terminated, truncated, _ = reference.step(ref_action)
      np.testing.assert_array_equal(timestep.final_observation[i], obs)
      assert timestep.reward.numpy()[i] == np.float32(reward)
      assert timestep.terminated.numpy()[i] == terminated
      assert timestep.truncated.numpy()[i] == (truncated and not terminated)
      if terminated or truncated:
        ended += 1
        obs, _ = reference.reset()
      np.testing.assert_array_equal(timestep.observation[i], obs)
  assert ended >= 2
  assert timestep.observation.dtype == tf.float32


def _trajectory(env, actions, seed=3):
  out = [env.reset(seed=seed).numpy()]
  for action in actions:
    timestep = env.step(tf.constant(action))
    out += [t.numpy().astype(np.float32) for t in timestep]
  return out


@pytest.mark.parametrize("mode", ["NEXT_STEP", "SAME_STEP", "DISABLED"])
def test_vector_env_in_any_autoreset_mode_resets_in_the_same_step(mode):
  actions = np.random.default_rng(1).integers(0, 2, (80, 3))
  expected = _trajectory(envs.GymEnvironment("CartPole-v1", 3), actions)
  vector = gym.make_vec("CartPole-v1", num_envs=3, vectorization_mode="sync",
                        vector_kwargs={"autoreset_mode":
                                       gym.vector.AutoresetMode[mode]})
  got = _trajectory(envs.GymEnvironment(vector), actions)
  assert sum(part.sum() for part in expected[3::5]) >= 3   # Episodes ended.
  for got_part, expected_part in zip(got, expected):
    np.testing.assert_array_equal(got_part, expected_part)


class _NoResetMask(gym.vector.VectorWrapper):

  def reset(self, *, seed=None, options=None):
    if options:
      raise TypeError("no options")
    return self.env.reset(seed=seed)


def test_next_step_vector_env_without_reset_mask_is_a_clear_error():
  vector = _NoResetMask(gym.make_vec("CartPole-v1", 2,
                                     vectorization_mode="sync"))
  env = envs.GymEnvironment(vector)
  env.reset(seed=0)
  with pytest.raises(ValueError, match=r"resets ended environments on the "
                     r"next step .*SAME_STEP"):
    for _ in range(100):
      env.step(tf.constant([0, 0]))


def test_runs_inside_a_while_loop_like_eagerly():
  actions = tf.constant(np.random.default_rng(2).integers(0, 2, (60, 2)),
                        tf.int32)

  def run(env):
    def body(t, total, done):
      timestep = env.step(actions[t])
      return (t + 1, total + tf.reduce_sum(timestep.observation),
              done + tf.reduce_sum(tf.cast(timestep.done, tf.int32)))
    return tf.while_loop(lambda t, *_: t < 60, body,
                         (0, tf.constant(0.0), 0))[1:]

  eager = envs.GymEnvironment("CartPole-v1", 2, seed=9)
  traced = envs.GymEnvironment("CartPole-v1", 2, seed=9)
  want, got = run(eager), tf.function(run)(traced)
  assert int(want[1]) >= 2
  assert float(got[0]) == float(want[0]) and int(got[1]) == int(want[1])


def test_seeding_is_reproducible():
  first = envs.GymEnvironment("CartPole-v1", 3, seed=7).observation().numpy()
  env = envs.GymEnvironment("CartPole-v1", 3, seed=7)
  np.testing.assert_array_equal(env.observation(), first)  # Implicit reset.
  np.testing.assert_array_equal(env.reset(seed=7), first)
  assert not np.array_equal(env.reset(), first)            # Stream goes on.
  assert not np.array_equal(env.reset(seed=8), first)


def test_state_is_in_python_not_in_variables():
  env = envs.GymEnvironment("CartPole-v1")
  assert not env.in_graph and not env.variables


def test_env_copies_and_factories():
  env = envs.GymEnvironment(gym.make("Pendulum-v1"), num_envs=2)
  assert env.num_envs == 2 and env.action_space.shape == (1,)
  np.testing.assert_array_equal(env.action_space.high, [2.0])
  with pytest.raises(ValueError, match=r"no spec to make them from .* Pass a "
                     r"zero-argument factory"):
    envs.GymEnvironment(gym.make("CartPole-v1").unwrapped.__class__(),
                        num_envs=2)
  made = envs.GymEnvironment(lambda: gym.make("CartPole-v1").unwrapped, 3)
  assert made.num_envs == 3 and len({id(e) for e in made._batch.envs}) == 3


def test_bad_actions_name_the_environment():
  env = envs.GymEnvironment("Acrobot-v1", num_envs=2)
  with pytest.raises(ValueError, match=r"GymEnvironment\(Acrobot-v1\): "
                     r"actions must be in \[0, 3\), got \[3\]\."):
    env.step(tf.constant([0, 3]))
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match=r"GymEnvironment\(Acrobot-v1\): actions must be"):
    tf.function(env.step)(tf.constant([-1, 0]))
  with pytest.raises(TypeError, match=r"action must be an integer tensor"):
    env.step(tf.constant([0.0, 1.0]))
  with pytest.raises(ValueError, match=r"action must have shape \[2\], got "
                     r"\(3,\)"):
    env.step(tf.constant([0, 1, 1]))
  pendulum = envs.GymEnvironment("Pendulum-v1", num_envs=2)
  with pytest.raises(ValueError, match=r"action must have shape \[2, 1\]"):
    pendulum.step(tf.constant([0.0, 1.0]))


class _MultiDiscreteActions(gym.Env):
  observation_space = gym.spaces.Box(-1.0, 1.0, (2,))
  action_space = gym.spaces.MultiDiscrete([2, 2])


def test_unsupported_spaces_and_inputs():
  with pytest.raises(ValueError, match=r"GymEnvironment\(FrozenLake-v1\): the "
                     r"observation space must be a gymnasium Box, got "
                     r"Discrete\(16\)\."):
    envs.GymEnvironment("FrozenLake-v1")
  with pytest.raises(ValueError, match=r"the action space must be a gymnasium "
                     r"Discrete or Box, got MultiDiscrete"):
    envs.GymEnvironment(_MultiDiscreteActions())
  with pytest.raises(TypeError, match=r"env_or_id must be .*, got int: 3\."):
    envs.GymEnvironment(3)
  with pytest.raises(TypeError, match=r"the factory must return .*, got "
                     r"str"):
    envs.GymEnvironment(lambda: "CartPole-v1")
  with pytest.raises(ValueError, match=r"num_envs must be a positive int or "
                     r"None, got -1\."):
    envs.GymEnvironment("CartPole-v1", num_envs=-1)
  vector = gym.make_vec("CartPole-v1", 3, vectorization_mode="sync")
  with pytest.raises(ValueError, match=r"num_envs=4 was asked for, but the "
                     r"VectorEnv has 3"):
    envs.GymEnvironment(vector, num_envs=4)


def test_missing_gymnasium_says_how_to_install(monkeypatch):
  monkeypatch.setitem(sys.modules, "gymnasium", None)
  with pytest.raises(ImportError, match=r"pip install sonnet_like\[rl\]"):
    envs.GymEnvironment("CartPole-v1")


def test_episode_runner_gives_gymnasium_episode_lengths():
  env = envs.GymEnvironment("CartPole-v1", num_envs=2)
  runner = episodes.EpisodeRunner(env, lambda obs: tf.ones([2], tf.int32),
                                  num_episodes=4)
  references = [gym.make("CartPole-v1") for _ in range(2)]
  lengths = np.zeros([2, 2], np.int64)
  for i, reference in enumerate(references):
    reference.reset(seed=11 + i)
    for round_ in range(2):
      done = False
      while not done:
        _, _, terminated, truncated, _ = reference.step(1)
        lengths[round_, i] += 1
        done = terminated or truncated
      reference.reset()
  result = runner(seed=11)
  np.testing.assert_array_equal(result["length"], lengths.reshape(-1))
  np.testing.assert_array_equal(result["return"], lengths.reshape(-1))
  assert gym_adapter.GYMNASIUM_MISSING.startswith("GymEnvironment needs")


def test_without_gymnasium_the_error_names_the_extra(monkeypatch):
  monkeypatch.setitem(sys.modules, "gymnasium", None)  # As if not installed.
  with pytest.raises(ImportError) as info:
    gym_adapter.import_gymnasium()
  assert str(info.value) == gym_adapter.GYMNASIUM_MISSING
