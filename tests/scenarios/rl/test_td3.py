"""TD3: learning on a toy task, delayed and smoothed updates, noise, acting,
export, arguments.

Resume, SIGTERM/SIGKILL, the NaN guard and bad data are the TD3 row of
tests/scenario_table.py. Pendulum and MountainCarContinuous at the zoo's
budgets are benchmarks/zoo.py's rows (minutes long)."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt


def _networks(hidden=16):
  return (snt.nets.MLP([hidden, 1], name="actor"),
          snt.nets.MLP([hidden, 1], name="critic"))


def _td3(num_env_steps, **settings):
  settings = dict(dict(num_env_steps=num_env_steps, num_envs=2, batch_size=16,
                       learning_starts=20, eval_every=None, seed=0,
                       progress=False), **settings)
  return snt.scenarios.TD3(**settings)


def test_learns_the_continuous_guessing_game():
  # Reward 1 - (action - sign)^2 / 4 per step, 5 steps: a policy ignoring the
  # observed sign makes at most 3.75, uniform random actions about 3.33.
  tf.random.set_seed(0)
  td3 = snt.scenarios.TD3(num_env_steps=2_000, num_envs=4, learning_starts=200,
                          batch_size=64, steps_per_call=50, eval_every=250,
                          eval_episodes=20, seed=0, progress=False)
  actor = snt.nets.MLP([32, 32, 1], activation=tf.nn.relu, name="actor")
  critic = snt.nets.MLP([32, 32, 1], activation=tf.nn.relu, name="critic")
  td3(actor, critic, snt.optimizers.Adam(3e-3),
      snt.envs.Guess(num_envs=4, continuous=True, seed=0),
      eval_env=snt.envs.Guess(num_envs=20, continuous=True, seed=1))
  assert td3.history.eval["return"][-1] > 4.5, td3.history.eval["return"]
  assert np.all(np.isfinite(td3.history.train["critic_loss"]))


def test_the_actor_and_targets_move_every_policy_delay_updates():
  tf.random.set_seed(0)
  td3 = _td3(2 * 40, policy_delay=3, learning_starts=2 * 10)
  critic_optimizer = keras.optimizers.Adam(1e-3)
  actor_optimizer = keras.optimizers.Adam(1e-3)
  actor, critic = _networks()
  td3(actor, critic, critic_optimizer, snt.envs.Pendulum(2, seed=0),
      actor_optimizer=actor_optimizer)
  updates = 40 - 10 + 1  # Steps 10..40 (1-based) learn, once each.
  assert int(td3._state.updates) == updates  # pylint: disable=protected-access
  assert int(critic_optimizer.iterations) == updates
  assert int(actor_optimizer.iterations) == updates // 3


def test_target_noise_is_clipped():
  # A clip of 0 removes the smoothing noise (its draws still happen), so the
  # run equals one without noise; an unclipped run differs.
  def weights(**settings):
    tf.random.set_seed(0)
    td3 = _td3(2 * 30, **settings)
    actor, critic = _networks()
    td3(actor, critic, snt.optimizers.Adam(1e-2), snt.envs.Pendulum(2, seed=0))
    return [v.numpy() for v in actor.variables + critic.variables]

  no_noise = weights(target_noise=0.0)
  clipped = weights(target_noise=0.5, target_noise_clip=0.0)
  noisy = weights(target_noise=0.5)
  for a, b in zip(no_noise, clipped):
    np.testing.assert_array_equal(a, b)
  assert any(not np.array_equal(a, b) for a, b in zip(no_noise, noisy))


def test_ornstein_uhlenbeck_noise_is_correlated_and_reset_at_episode_ends():
  def noise_after(steps, **settings):
    tf.random.set_seed(0)
    td3 = _td3(2 * steps, learning_starts=10_000, noise_std=0.5, **settings)
    td3(*_networks(), snt.optimizers.Adam(),
        snt.envs.Pendulum(2, seed=0, max_episode_steps=3))
    return td3._state.noise.numpy()  # pylint: disable=protected-access

  two = noise_after(2, exploration_noise="ornstein_uhlenbeck")
  assert np.all(two != 0.0)
  # sigma * sqrt(dt) = 0.05 a step: two steps stay small (Gaussian: ~0.5).
  assert np.all(np.abs(two) < 0.3)
  # Every episode ended at step 3: the noise starts again from 0.
  np.testing.assert_array_equal(
      noise_after(3, exploration_noise="ornstein_uhlenbeck"), 0.0)
  assert np.all(noise_after(3) != 0.0)  # Gaussian noise is not reset.


def test_act_and_export_give_the_greedy_action_in_the_bounds(tmp_path):
  tf.random.set_seed(0)
  td3 = _td3(2 * 50, normalize_observations=True, steps_per_call=10,
             jit_compile=True, export_dir=str(tmp_path / "policy"))
  td3(*_networks(), snt.optimizers.Adam(1e-3), snt.envs.Pendulum(2, seed=0))
  observations = snt.envs.Pendulum(7, seed=4).reset(seed=4)
  actions = td3.act(observations)
  assert actions.shape == [7, 1] and np.all(np.abs(actions) <= 2.0)
  np.testing.assert_allclose(td3.act(observations[0]), actions[0], rtol=1e-5)
  loaded = tf.saved_model.load(str(tmp_path / "policy"))
  exported = loaded.signatures["serving_default"](observation=observations)
  np.testing.assert_allclose(exported["action"], actions, rtol=1e-5,
                             atol=1e-6)
  assert float(td3.normalizer.count) == 100
  assert td3.history.train["actor_loss"][-1] != 0.0


def test_bad_settings_and_networks_are_refused():
  with pytest.raises(ValueError, match=r"^TD3: the environment's actions must "
                     r"be a Box \(continuous\), got Discrete\(2\)"):
    snt.scenarios.TD3(10, progress=False)(
        *_networks(), snt.optimizers.Adam(), snt.envs.CartPole(1),
        eval_env=snt.envs.CartPole(1))
  with pytest.raises(ValueError, match=r"^TD3: exploration_noise must be one "
                     r"of \['gaussian', 'ornstein_uhlenbeck'\], got 'ou'"):
    snt.scenarios.TD3(10, exploration_noise="ou")
  with pytest.raises(ValueError, match=r"^TD3: policy_delay must be a "
                     r"positive int, got 0"):
    snt.scenarios.TD3(10, policy_delay=0)
  with pytest.raises(ValueError, match=r"^TD3: noise_std must be"):
    snt.scenarios.TD3(10, noise_std=-0.1)
  with pytest.raises(ValueError, match="^TD3: no recipe for 'Ant-v4'"):
    snt.scenarios.TD3.recipe("Ant-v4")
  with pytest.raises(ValueError, match=r"^TD3: the actor must output "
                     r"\[batch, 1\]"):
    snt.scenarios.TD3(10, progress=False)(
        snt.nets.MLP([4, 2]), snt.nets.MLP([4, 1]), snt.optimizers.Adam(),
        snt.envs.Pendulum(1))
  critic = snt.nets.MLP([8, 1], name="q")
  with pytest.raises(ValueError, match="^TD3: the actor, the critic and the "
                     "twin critic must not share variables"):
    snt.scenarios.TD3(10, progress=False)(
        snt.nets.MLP([8, 1]), critic, snt.optimizers.Adam(),
        snt.envs.Pendulum(1), twin_critic=critic)
  with pytest.raises(TypeError, match="^TD3: actor_optimizer must have "
                     "apply_gradients"):
    snt.scenarios.TD3(10, progress=False)(
        *_networks(), snt.optimizers.Adam(), snt.envs.Pendulum(1),
        actor_optimizer="adam")
