"""The in-graph MountainCars against gymnasium's, and their state."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from sonnet_like import envs
from sonnet_like.envs.mountain_car import MountainCar
from sonnet_like.envs.mountain_car import MountainCarContinuous
from tests.envs import checkpoints
from tests.envs import compiled
from tests.envs import gym_reference


def _discrete_policy(seed):
  """Even environments push along the velocity (they reach the goal in
  about 100 steps), odd ones act at random (they reach the time limit)."""
  rng = np.random.default_rng(seed)

  def policy(unused_obs, state):
    push = np.where(state[:, 1] >= 0, 2, 0)
    random = rng.integers(0, 3, len(state))
    return np.where(np.arange(len(state)) % 2 == 0, push,
                    random).astype(np.int32)

  return policy


def _continuous_policy(seed):
  """Even environments push along the velocity with a force of 0.6, 1 or
  1.2 (beyond the bound: clipped), odd ones at random in [-1.5, 1.5]."""
  rng = np.random.default_rng(seed)

  def policy(unused_obs, state):
    n = len(state)
    push = np.where(state[:, 1] >= 0, 1.0, -1.0) * rng.choice([0.6, 1.0, 1.2],
                                                              n)
    random = rng.uniform(-1.5, 1.5, n)
    action = np.where(np.arange(n) % 2 == 0, push, random)
    return action[:, None].astype(np.float32)

  return policy


@pytest.mark.parametrize("jit", [None, False, True],
                         ids=["eager", "function", "xla"])
def test_mountain_car_matches_gymnasium(jit):
  pytest.importorskip("gymnasium")
  env = MountainCar(4, seed=7)
  env.reset(seed=7)
  counts = gym_reference.compare(env, "MountainCar-v0", _discrete_policy(0),
                                 num_steps=250 if jit is None else 450,
                                 jit=jit)
  assert counts["terminated"] >= 2 and counts["truncated"] >= 2


@pytest.mark.parametrize("jit, num_steps, limit", [
    (None, 250, 120), (False, 1000, 999), (True, 1000, 999)],
                         ids=["eager", "function", "xla"])
def test_continuous_matches_gymnasium(jit, num_steps, limit):
  pytest.importorskip("gymnasium")
  env = MountainCarContinuous(4, seed=7, max_episode_steps=limit)
  env.reset(seed=7)
  counts = gym_reference.compare(env, "MountainCarContinuous-v0",
                                 _continuous_policy(0), num_steps=num_steps,
                                 jit=jit)
  assert counts["terminated"] >= 2 and counts["truncated"] >= 2


def test_continuous_first_step_computes_in_float64_later_ones_in_float32():
  # From one state and force, gymnasium's first step of an episode (float64
  # state) and a later one (float32 state) can disagree; ours follows.
  gym = pytest.importorskip("gymnasium")
  rng = np.random.default_rng(3)
  n = 200
  states = np.stack([rng.uniform(-1.0, 0.4, n), rng.uniform(-0.05, 0.05, n)],
                    axis=1).astype(np.float32).astype(np.float64)
  force = rng.uniform(-1.0, 1.0, (n, 1)).astype(np.float32)
  reached = {}
  for elapsed, dtype in ((0, np.float64), (5, np.float32)):
    env = MountainCarContinuous(n)
    env.set_state(states, elapsed_steps=np.full([n], elapsed))
    reached[elapsed] = env.step(tf.constant(force)).final_observation.numpy()
    reference = gym.make("MountainCarContinuous-v0").unwrapped
    reference.reset(seed=0)
    for i in range(n):
      reference.state = states[i].astype(dtype)
      np.testing.assert_array_equal(reached[elapsed][i],
                                    reference.step(force[i])[0])
  assert not np.array_equal(reached[0], reached[5])


def test_the_left_wall_stops_the_car():
  for env, action in ((MountainCar(2), [0, 0]),
                      (MountainCarContinuous(2), [[-1.0], [-1.0]])):
    env.set_state([[-1.19, -0.05], [-0.9, 0.01]], elapsed_steps=[3, 3])
    timestep = env.step(tf.constant(action))
    final = timestep.final_observation.numpy()
    np.testing.assert_array_equal(final[0], np.float32([-1.2, 0.0]))
    assert final[1, 0] > -1.2 and final[1, 1] != 0.0


def test_rewards_and_termination_at_the_goal():
  env = MountainCar(2)
  env.set_state([[0.49, 0.05], [0.49, -0.02]])
  timestep = env.step(tf.constant([2, 2]))
  np.testing.assert_array_equal(timestep.terminated, [True, False])
  np.testing.assert_array_equal(timestep.reward, [-1.0, -1.0])
  continuous = MountainCarContinuous(2)
  continuous.set_state([[0.44, 0.05], [0.0, 0.0]], elapsed_steps=[2, 2])
  timestep = continuous.step(tf.constant([[0.5], [-3.0]]))
  np.testing.assert_array_equal(timestep.terminated, [True, False])
  # 100 at the goal, minus 0.1 * action**2 of the unclipped action.
  np.testing.assert_allclose(timestep.reward, [100.0 - 0.025, -0.9],
                             rtol=1e-6)
  np.testing.assert_array_equal(continuous.elapsed_steps, [0, 3])


def test_defaults_and_specs_are_gymnasiums():
  gym = pytest.importorskip("gymnasium")
  for env, gym_id in ((MountainCar(3), "MountainCar-v0"),
                      (MountainCarContinuous(3), "MountainCarContinuous-v0")):
    assert env.max_episode_steps == gym.spec(gym_id).max_episode_steps
    assert env.observation_spec == tf.TensorSpec([2], tf.float32)
    assert isinstance(env, envs.InGraphEnvironment) and env.in_graph
  assert MountainCar(3).action_space == envs.Discrete(3)
  box = MountainCarContinuous(3).action_space
  np.testing.assert_array_equal([box.low, box.high], [[-1.0], [1.0]])
  assert repr(MountainCarContinuous(3)) == (
      "MountainCarContinuous(num_envs=3, max_episode_steps=999)")


@pytest.mark.parametrize("env_class", [MountainCar, MountainCarContinuous])
def test_reset_is_uniform_at_rest_and_reproducible(env_class):
  env = env_class(2000, seed=3)
  first = env.reset(seed=11).numpy()
  assert np.all(first[:, 0] >= -0.6) and np.all(first[:, 0] < -0.4)
  np.testing.assert_array_equal(first[:, 1], 0.0)
  assert first[:, 0].std() == pytest.approx(0.2 / np.sqrt(12), rel=0.05)
  np.testing.assert_array_equal(env.reset(seed=11), first)
  assert not np.array_equal(env.reset(), first)


@pytest.mark.parametrize("env_class, actions", [
    (MountainCar, lambda t: tf.constant([t % 3, 2, 0])),
    (MountainCarContinuous, lambda t: tf.fill([3, 1], np.sin(t) * 1.2))])
def test_checkpoint_restores_state_and_generator(tmp_path, env_class, actions):
  checkpoints.assert_restores(
      lambda seed: env_class(3, seed=seed, max_episode_steps=7),
      [actions(t) for t in range(30)], tmp_path)


def test_bad_actions_are_named():
  with pytest.raises(ValueError, match=r"^MountainCar: actions must be 0, 1 "
                     r"or 2, got \[3\]\.$"):
    MountainCar(2).step(tf.constant([3, 1]))
  with pytest.raises(TypeError, match=r"^MountainCar: action must be an "
                     r"integer tensor, got dtype float32\.$"):
    MountainCar(2).step(tf.constant([1.0, 1.0]))
  with pytest.raises(TypeError, match=r"^MountainCarContinuous: action must "
                     r"be a float tensor, got dtype int32\.$"):
    MountainCarContinuous(2).step(tf.constant([[1], [1]]))
  with pytest.raises(ValueError, match=r"^MountainCarContinuous: action must "
                     r"have shape \[2, 1\], got \(2,\)\.$"):
    MountainCarContinuous(2).step(tf.constant([1.0, 1.0]))


def test_under_xla_out_of_range_actions_are_clamped():
  observations = []
  for action in ([7, -2], [2, 0]):
    env = MountainCar(2)
    env.set_state([[-0.5, 0.0], [-0.5, 0.0]])
    step = tf.function(env.step, jit_compile=True)
    observations.append(step(tf.constant(action)).observation.numpy())
  np.testing.assert_array_equal(observations[0], observations[1])


def test_bad_arguments_are_named():
  with pytest.raises(ValueError, match=r"^MountainCar: num_envs must be a "
                     r"positive int, got 0\.$"):
    MountainCar(0)
  with pytest.raises(ValueError, match=r"^MountainCarContinuous: seed must be "
                     r"an int, got 0\.5\.$"):
    MountainCarContinuous(2, seed=0.5)
  with pytest.raises(ValueError, match=r"^MountainCar: states must have shape "
                     r"\[2, 2\], got \(2, 3\)\.$"):
    MountainCar(2).set_state(np.zeros([2, 3]))


def test_dqn_runs_on_mountain_car():
  # The protocol fits the scenarios unchanged; learning is not asked for.
  history = snt.scenarios.DQN(num_env_steps=64, num_envs=4, learning_starts=16,
                              batch_size=8, buffer_size=64, progress=False)(
                                  snt.nets.MLP([8, 3]),
                                  keras.optimizers.Adam(1e-3),
                                  snt.envs.MountainCar(4))
  assert len(history.train["loss"]) and np.all(
      np.isfinite(history.train["loss"]))


@pytest.mark.parametrize("env_class, actions", [
    (MountainCar, lambda rng: tf.constant(rng.integers(0, 3, (150, 64)),
                                          tf.int32)),
    (MountainCarContinuous, lambda rng: tf.constant(
        rng.uniform(-1.5, 1.5, (150, 64, 1)), tf.float32))])
def test_eager_function_and_xla_rollouts_agree(env_class, actions):
  # XLA fuses multiply-adds and may keep excess precision; the compiled
  # rollout must still observe what the eager one does.
  eager, function, xla = compiled.three_rollouts(
      lambda: env_class(64, seed=4, max_episode_steps=50),
      actions(np.random.default_rng(1)))
  np.testing.assert_array_equal(function, eager)
  np.testing.assert_array_equal(xla, eager)
