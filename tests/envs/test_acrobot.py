"""The in-graph Acrobot against gymnasium's Acrobot-v1, and its state."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from sonnet_like import envs
from sonnet_like.envs import acrobot
from sonnet_like.envs.acrobot import Acrobot
from tests.envs import checkpoints
from tests.envs import compiled
from tests.envs import gym_reference


def _policy(seed):
  """Even environments pump energy (they swing up in ~100 steps), odd ones
  act at random."""
  rng = np.random.default_rng(seed)

  def policy(unused_obs, state):
    pump = np.where(state[:, 3] > 0, 2, 0)
    random = rng.integers(0, 3, len(state))
    return np.where(np.arange(len(state)) % 2 == 0, pump,
                    random).astype(np.int32)

  return policy


def _compare(jit, num_steps, max_episode_steps=500, resync=True):
  pytest.importorskip("gymnasium")
  env = Acrobot(4, seed=7, max_episode_steps=max_episode_steps)
  env.reset(seed=7)
  return gym_reference.compare(env, "Acrobot-v1", _policy(0), num_steps,
                               jit=jit, resync=resync)


def test_matches_gymnasium_step_by_step_eagerly():
  counts = _compare(jit=None, num_steps=150)
  assert counts["terminated"] >= 2
  # Eagerly, every operation is gymnasium's in its order: the float64 states
  # are bit for bit equal but for the rare libm pow(x, 2) rounding.
  assert counts["float64_differences"] <= 5


@pytest.mark.parametrize("jit", [False, True], ids=["function", "xla"])
def test_matches_gymnasium_compiled_with_a_short_time_limit(jit):
  counts = _compare(jit=jit, num_steps=250, max_episode_steps=120)
  assert counts["terminated"] >= 2 and counts["truncated"] >= 4


def test_free_running_episodes_match_gymnasium():
  # No resynchronisation: whole swing-up episodes stay equal in float32.
  counts = _compare(jit=None, num_steps=150, resync=False)
  assert counts["terminated"] >= 2


def test_defaults_are_gymnasiums():
  gym = pytest.importorskip("gymnasium")
  env = Acrobot(3)
  assert env.max_episode_steps == gym.spec("Acrobot-v1").max_episode_steps
  assert env.action_space == envs.Discrete(3)
  assert env.observation_spec == tf.TensorSpec([6], tf.float32)
  assert isinstance(env, envs.InGraphEnvironment) and env.in_graph
  assert repr(env) == "Acrobot(num_envs=3, max_episode_steps=500)"


def test_reset_draws_float32_values_uniform_in_bounds():
  env = Acrobot(1000, seed=3)
  env.reset(seed=11)
  state = env.state.numpy()
  assert state.dtype == np.float64
  np.testing.assert_array_equal(state.astype(np.float32), state)
  assert np.all(state >= -0.1) and np.all(state < 0.1)
  assert state.std() == pytest.approx(0.2 / np.sqrt(12), rel=0.05)
  first = env.observation().numpy()
  np.testing.assert_array_equal(env.reset(seed=11), first)
  assert not np.array_equal(env.reset(), first)


def test_swinging_above_the_bar_terminates_with_reward_zero():
  env = Acrobot(2, max_episode_steps=10)
  # The first hangs straight up (terminal), the second hangs down.
  env.set_state([[np.pi, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]],
                elapsed_steps=[3, 9])
  timestep = env.step(tf.constant([1, 1]))
  np.testing.assert_array_equal(timestep.terminated, [True, False])
  np.testing.assert_array_equal(timestep.truncated, [False, True])
  np.testing.assert_array_equal(timestep.reward, [0.0, -1.0])
  np.testing.assert_array_equal(env.elapsed_steps, [0, 0])
  assert np.all(np.abs(env.state.numpy()) < 0.1)   # Both restarted.


def test_angles_wrap_and_speeds_clip_as_in_gymnasium():
  gym = pytest.importorskip("gymnasium")
  states = np.array([[-3.1, -3.0, -12.5, -28.2], [0.2, -3.1, 0.0, -25.0],
                     [3.0, 0.1, 12.5, 5.0], [0.5, 3.0, 1.0, 27.0]])
  actions = [0, 1, 2, 2]
  env = Acrobot(4)
  env.set_state(states, elapsed_steps=[1, 1, 1, 1])
  timestep = env.step(tf.constant(actions))
  assert not timestep.done.numpy().any()
  reached = env.state.numpy()
  for i, action in enumerate(actions):
    reference = gym.make("Acrobot-v1").unwrapped
    reference.reset(seed=0)
    reference.state = states[i].copy()
    obs = reference.step(action)[0]
    np.testing.assert_array_equal(timestep.final_observation[i], obs)
    np.testing.assert_allclose(reached[i], reference.state, rtol=1e-12)
  assert np.all(np.abs(reached[:, :2]) <= np.pi)
  # Angles that left [-pi, pi] came back from the other side.
  assert np.sum(np.sign(reached[:, :2]) != np.sign(states[:, :2])) >= 3
  np.testing.assert_array_equal(np.abs(reached[:, 2]), 4 * np.pi)
  np.testing.assert_array_equal(np.abs(reached[[0, 1, 3], 3]), 9 * np.pi)


def test_checkpoint_restores_state_and_generator(tmp_path):
  checkpoints.assert_restores(
      lambda seed: Acrobot(3, seed=seed, max_episode_steps=7),
      [tf.constant([a % 3, (a + 1) % 3, 2]) for a in range(30)], tmp_path)


def test_bad_actions_raise_errors_naming_acrobot():
  env = Acrobot(2)
  with pytest.raises(ValueError, match=r"^Acrobot: actions must be 0, 1 or "
                     r"2, got \[3\]\.$"):
    env.step(tf.constant([0, 3]))
  with pytest.raises(TypeError, match=r"^Acrobot: action must be an integer"):
    env.step(tf.constant([0.0, 1.0]))
  with pytest.raises(ValueError, match=r"^Acrobot: action must have shape "
                     r"\[2\], got \(3,\)"):
    env.step(tf.constant([0, 1, 2]))
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match="Acrobot: actions must be 0, 1 or 2"):
    tf.function(env.step)(tf.constant([-1, 0]))


def test_under_xla_out_of_range_actions_are_clamped():
  observations = []
  for action in ([5, -3], [2, 0]):
    env = Acrobot(2)
    env.set_state(np.full([2, 4], 0.05))
    step = tf.function(env.step, jit_compile=True)
    observations.append(step(tf.constant(action)).observation.numpy())
  np.testing.assert_array_equal(observations[0], observations[1])
  assert not np.array_equal(observations[1][0], observations[1][1])


def test_make_gives_the_in_graph_version():
  env = envs.make("Acrobot-v1", num_envs=3, in_graph=True, seed=2)
  assert isinstance(env, envs.Acrobot) and env.num_envs == 3


def test_ppo_runs_on_it_compiled_with_xla():
  # The protocol fits the scenarios unchanged; learning is not asked for.
  history = snt.scenarios.PPO(
      num_env_steps=8 * 16, num_envs=8, rollout_length=16, num_epochs=1,
      num_minibatches=2, jit_compile=True, progress=False)(
          snt.nets.MLP([8, 3]), snt.nets.MLP([8, 1]),
          keras.optimizers.Adam(1e-3), snt.envs.Acrobot(8))
  assert np.all(np.isfinite(history.train["loss"]))


@pytest.mark.parametrize("jit", [None, True], ids=["eager", "xla"])
def test_wrapping_turns_as_often_as_gymnasiums_wrap(jit):
  gym_acrobot = pytest.importorskip("gymnasium.envs.classic_control.acrobot")
  values = np.array([0.5, np.pi, -np.pi, 3.2, -3.2, 7.0, -10.0, 21.9, -40.0])
  wrap = acrobot._wrap if jit is None else tf.function(acrobot._wrap,
                                                       jit_compile=True)
  wrapped = wrap(tf.constant(values)).numpy()
  expected = [gym_acrobot.wrap(v, -np.pi, np.pi) for v in values]
  np.testing.assert_array_equal(wrapped, expected)


def test_eager_function_and_xla_rollouts_agree():
  # Within a short horizon the float64 differences of grappler and XLA
  # (module docstring) stay below float32's resolution.
  actions = tf.constant(np.random.default_rng(1).integers(0, 3, (25, 32)),
                        tf.int32)
  eager, function, xla = compiled.three_rollouts(
      lambda: Acrobot(32, seed=4, max_episode_steps=15), actions)
  np.testing.assert_array_equal(function, eager)
  np.testing.assert_array_equal(xla, eager)
