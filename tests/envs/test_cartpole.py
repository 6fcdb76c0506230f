"""The in-graph CartPole against gymnasium's CartPole-v1, and its state."""

import numpy as np
import pytest
import tensorflow as tf

from sonnet_like import envs
from sonnet_like.envs.cartpole import CartPole
from sonnet_like.scenarios.rl.parts import episodes
from tests.envs import gym_reference


def _balancing_action(obs):
  """A linear controller that keeps the pole up for 500 steps."""
  x, x_dot, theta, theta_dot = np.moveaxis(np.asarray(obs), -1, 0)
  return (theta + 0.5 * theta_dot + 0.01 * x + 0.1 * x_dot > 0).astype(np.int32)


def _compare_with_gymnasium(num_envs, num_steps, max_episode_steps):
  pytest.importorskip("gymnasium")
  env = CartPole(num_envs, seed=7, max_episode_steps=max_episode_steps)
  env.reset(seed=7)
  rng = np.random.default_rng(0)
  balanced = np.arange(num_envs) % 2 == 0   # Half balance, half act at random.

  def policy(obs, unused_state):
    return np.where(balanced, _balancing_action(obs),
                    rng.integers(0, 2, num_envs)).astype(np.int32)

  counts = gym_reference.compare(env, "CartPole-v1", policy, num_steps,
                                 jit=False)
  # The observation is the state, in float32.
  np.testing.assert_array_equal(env.observation(),
                                env.state.numpy().astype(np.float32))
  return counts


def test_matches_gymnasium_for_500_steps():
  counts = _compare_with_gymnasium(num_envs=6, num_steps=500,
                                   max_episode_steps=500)
  assert counts["terminated"] > 20   # The random envs end many episodes,
  assert counts["truncated"] == 3    # the balanced ones reach the limit.


def test_matches_gymnasium_with_a_short_time_limit():
  counts = _compare_with_gymnasium(num_envs=4, num_steps=120,
                                   max_episode_steps=30)
  assert counts["truncated"] >= 8 and counts["terminated"] >= 2


def test_terminating_on_the_last_step_is_terminated_not_truncated():
  env = CartPole(2, max_episode_steps=10)
  env.set_state([[2.39, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]],
                elapsed_steps=[9, 9])
  timestep = env.step(tf.constant([1, 1]))
  np.testing.assert_array_equal(timestep.terminated, [True, False])
  np.testing.assert_array_equal(timestep.truncated, [False, True])
  np.testing.assert_array_equal(env.elapsed_steps, [0, 0])
  assert timestep.final_observation.numpy()[0, 0] > 2.4


def test_auto_reset_returns_new_start_and_final_observation():
  env = CartPole(3)
  env.set_state([[2.39, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0],
                 [0.0, 0.0, 0.3, 0.0]], elapsed_steps=[5, 5, 5])
  timestep = env.step(tf.constant([0, 0, 0]))
  np.testing.assert_array_equal(timestep.terminated, [True, False, True])
  obs, final = timestep.observation.numpy(), timestep.final_observation.numpy()
  assert np.all(np.abs(obs[[0, 2]]) < 0.05)     # New episodes.
  assert final[0, 0] > 2.4 and final[2, 2] > 0.2
  np.testing.assert_array_equal(obs[1], final[1])
  np.testing.assert_array_equal(env.elapsed_steps, [0, 6, 0])


def test_reset_is_uniform_in_bounds_and_reproducible():
  env = CartPole(500, seed=3)
  first = env.reset(seed=11).numpy()
  assert first.dtype == np.float32 and first.shape == (500, 4)
  assert np.all(first >= -0.05) and np.all(first < 0.05)
  assert abs(first.mean()) < 0.005 and first.std() == pytest.approx(
      0.1 / np.sqrt(12), rel=0.05)
  assert env.state.dtype == tf.float64
  following = env.reset().numpy()
  assert not np.array_equal(first, following)
  np.testing.assert_array_equal(env.reset(seed=11), first)
  np.testing.assert_array_equal(CartPole(500, seed=11).reset(seed=11), first)
  assert not np.array_equal(env.reset(seed=12), first)


def test_checkpoint_restores_state_and_generator(tmp_path):
  env = CartPole(4, seed=5)
  env.reset(seed=5)
  rng = np.random.default_rng(1)
  actions = [tf.constant(rng.integers(0, 2, 4), tf.int32) for _ in range(60)]
  for action in actions[:20]:
    env.step(action)
  path = tf.train.Checkpoint(env=env).write(str(tmp_path / "env"))
  expected = [env.step(action) for action in actions[20:]]

  resumed = CartPole(4, seed=99)
  resumed.reset(seed=99)
  tf.train.Checkpoint(env=resumed).read(path).assert_consumed()
  assert any(t.terminated.numpy().any() for t in expected)  # Uses the rng.
  for action, want in zip(actions[20:], expected):
    got = resumed.step(action)
    for got_part, want_part in zip(got, want):
      np.testing.assert_array_equal(got_part, want_part)
  np.testing.assert_array_equal(resumed.rng.state, env.rng.state)


def _rollout(env, actions):
  obs, done = [], []
  for action in tf.unstack(actions):
    timestep = env.step(action)
    obs.append(timestep.observation)
    done.append(timestep.done)
  return tf.stack(obs), tf.stack(done)


def _loop(env, actions):
  def body(t, obs, done):
    timestep = env.step(actions[t])
    return (t + 1, obs.write(t, timestep.observation),
            done.write(t, timestep.done))
  n = tf.shape(actions)[0]
  _, obs, done = tf.while_loop(
      lambda t, *_: t < n, body,
      (0, tf.TensorArray(tf.float32, n), tf.TensorArray(tf.bool, n)))
  return obs.stack(), done.stack()


def test_eager_function_and_xla_agree():
  rng = np.random.default_rng(2)
  actions = tf.constant(rng.integers(0, 2, (150, 5)), tf.int32)
  results = []
  for run in (_rollout, tf.function(_loop), tf.function(_loop,
                                                        jit_compile=True)):
    env = CartPole(5, seed=4)
    env.reset(seed=4)
    results.append([t.numpy() for t in run(env, actions)])
  assert results[0][1].sum() > 10
  for obs, done in results[1:]:
    np.testing.assert_array_equal(done, results[0][1])
    np.testing.assert_array_equal(obs, results[0][0])


def test_bad_actions_raise_errors_naming_cartpole():
  env = CartPole(2)
  with pytest.raises(ValueError, match=r"CartPole: actions must be 0 or 1, "
                     r"got \[2\]"):
    env.step(tf.constant([0, 2]))
  with pytest.raises(ValueError, match=r"CartPole: action must have shape"):
    env.step(tf.constant([0, 1, 1]))
  with pytest.raises(TypeError, match=r"CartPole: action must be an integer"):
    env.step(tf.constant([0.0, 1.0]))
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match="CartPole: actions must be 0 or 1"):
    tf.function(env.step)(tf.constant([-1, 0]))


def test_under_xla_out_of_range_actions_act_as_zero():
  env = CartPole(2)
  env.set_state(np.zeros([2, 4]))
  timestep = tf.function(env.step, jit_compile=True)(tf.constant([5, 0]))
  np.testing.assert_array_equal(timestep.observation[0],
                                timestep.observation[1])


@pytest.mark.parametrize("kwargs, message", [
    (dict(num_envs=0), "CartPole: num_envs must be a positive int, got 0."),
    (dict(num_envs=2, max_episode_steps=1.5),
     "CartPole: max_episode_steps must be a positive int, got 1.5."),
    (dict(num_envs=2, seed="a"), "CartPole: seed must be an int, got 'a'."),
])
def test_constructor_errors(kwargs, message):
  with pytest.raises(ValueError, match=message.replace(".", r"\.")):
    CartPole(**kwargs)


def test_set_state_checks_shape():
  with pytest.raises(ValueError, match=r"CartPole: states must have shape "
                     r"\[2, 4\], got \(3, 4\)"):
    CartPole(2).set_state(np.zeros([3, 4]))


def test_specs_follow_the_protocol():
  env = CartPole(3)
  assert isinstance(env, envs.Environment) and env.in_graph
  assert env.action_space == envs.Discrete(2)
  assert env.observation_spec == tf.TensorSpec([4], tf.float32)
  assert env.observation().shape == (3, 4)


def test_episode_runner_gives_gymnasium_episode_lengths():
  gym = pytest.importorskip("gymnasium")
  env = CartPole(4, seed=0)
  runner = episodes.EpisodeRunner(env, lambda obs: tf.zeros([4], tf.int32),
                                  num_episodes=4)
  starts = CartPole(4)
  starts.reset(seed=3)
  expected = []
  for state in starts.state.numpy():
    reference = gym.make("CartPole-v1")
    reference.reset(seed=0)
    reference.unwrapped.state = state.copy()
    length, done = 0, False
    while not done:
      _, _, terminated, truncated, _ = reference.step(0)
      length, done = length + 1, terminated or truncated
    expected.append(length)
  result = runner(seed=3)
  np.testing.assert_array_equal(result["length"], expected)
  np.testing.assert_array_equal(result["return"], expected)


def test_reset_with_a_seed_inside_tf_function_and_xla():
  env = CartPole(3)
  expected = env.reset(seed=5).numpy()
  env.reset(seed=6)
  np.testing.assert_array_equal(tf.function(lambda: env.reset(seed=5))(),
                                expected)
  env.reset(seed=6)
  np.testing.assert_array_equal(
      tf.function(lambda: env.reset(seed=5), jit_compile=True)(), expected)
