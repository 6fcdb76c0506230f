"""Recipes: the settings, networks and optimizer they make (the learning
they promise takes minutes: examples/pendulum_{ppo,sac}.py and
benchmarks/bench_pendulum.py measure it; BUILD_NOTES has the figures)."""

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt


def test_ppo_pendulum_recipe_makes_what_it_says():
  recipe = snt.scenarios.PPO.recipe("Pendulum-v1")
  ppo = recipe.scenario(seed=3, progress=False)
  assert isinstance(ppo, snt.scenarios.PPO)
  # The zoo's budget, 100k steps; gSDE exploration resampled every 4 steps.
  assert (ppo.num_envs, ppo.rollout_length, ppo.num_steps) == (4, 1024, 25)
  assert ppo.sde_sample_freq == 4 and ppo.guard.clip_norm == 0.5
  assert not (ppo.squash or ppo.normalize_observations or ppo.scale_rewards)
  assert recipe.scenario(num_envs=2).num_envs == 2  # Overrides win.
  optimizer = recipe.optimizer()
  assert optimizer.learning_rate == pytest.approx(1e-3)


def test_orthogonal_networks_start_near_the_middle_action():
  tf.random.set_seed(0)
  actor, critic = snt.scenarios.PPO.recipe("Pendulum-v1").networks()
  observations = tf.random.normal([256, 3])
  means, values = actor(observations), critic(observations)
  assert means.shape == [256, 1] and values.shape == [256, 1]
  # Output gains 0.01 (actor) and 1 (critic).
  assert float(tf.math.reduce_std(means)) < 0.05
  assert float(tf.math.reduce_std(values)) > 0.2
  w = actor.trainable_variables
  kernels = [v for v in w if v.shape.rank == 2]
  first = kernels[0].numpy()  # Orthogonal rows, scaled by sqrt(2).
  np.testing.assert_allclose(first @ first.T, 2.0 * np.eye(3), atol=1e-5)
  assert len({v.name for v in actor.variables + critic.variables}) == 12


def test_the_ppo_recipe_trains_a_rollout_and_acts_in_bounds():
  recipe = snt.scenarios.PPO.recipe("Pendulum-v1")
  tf.random.set_seed(0)
  ppo = recipe.scenario(num_env_steps=2 * 256, num_envs=2, rollout_length=256,
                        num_epochs=1, num_minibatches=4, seed=0,
                        progress=False)
  actor, critic = recipe.networks()
  history = ppo(actor, critic, recipe.optimizer(),
                snt.envs.make("Pendulum-v1", num_envs=2, in_graph=True))
  assert ppo.step == 1 and np.isfinite(history.train["loss"][-1])
  action = ppo.act(np.array([1.0, 0.0, 8.0], np.float32))
  assert action.shape == [1] and abs(float(action[0])) <= 2.0


@pytest.mark.parametrize("task", ["CartPole-v1", "Acrobot-v1",
                                  "MountainCar-v0",
                                  "MountainCarContinuous-v0", "Pendulum-v1"])
def test_every_ppo_recipe_runs_a_rollout_on_its_in_graph_task(task):
  recipe = snt.scenarios.PPO.recipe(task)
  tf.random.set_seed(0)
  ppo = recipe.scenario(num_env_steps=2 * 16, num_envs=2, rollout_length=16,
                        num_epochs=1, num_minibatches=2, seed=0,
                        progress=False)
  env = snt.envs.make(task, num_envs=2, in_graph=True)
  history = ppo(*recipe.networks(), recipe.optimizer(), env)
  assert ppo.step == 1 and np.isfinite(history.train["loss"][-1])
  # The zoo's budgets (rl-baselines3-zoo benchmark.md).
  assert recipe.num_env_steps == {
      "CartPole-v1": 100_000, "Acrobot-v1": 1_000_000,
      "MountainCar-v0": 1_000_000, "MountainCarContinuous-v0": 20_000,
      "Pendulum-v1": 100_000}[task]


def test_unknown_tasks_are_refused_with_the_known_ones():
  with pytest.raises(ValueError, match=r"^PPO: no recipe for 'Ant-v4'; "
                     r"recipes exist for \[.*'Pendulum-v1'"):
    snt.scenarios.PPO.recipe("Ant-v4")


def test_the_sac_mountain_car_recipe_explores_with_gsde():
  recipe = snt.scenarios.SAC.recipe("MountainCarContinuous-v0")
  sac = recipe.scenario(progress=False)
  # The zoo's gSDE (use_sde), resampled once per round of 32 steps.
  assert (sac.sde_sample_freq, sac.train_every, sac.gradient_steps) == (
      32, 32, 32)
  # The temperature is learned, from the zoo's fixed 0.1.
  assert (sac.alpha, sac.alpha_init) == ("auto", 0.1)
  assert recipe.actor_outputs == 1  # Means only.
  actor, _ = recipe.networks()
  assert actor(tf.zeros([3, 2])).shape == [3, 1]


@pytest.mark.parametrize("task", ["CartPole-v1", "Acrobot-v1",
                                  "MountainCar-v0"])
def test_every_dqn_recipe_runs_on_its_in_graph_task(task):
  recipe = snt.scenarios.DQN.recipe(task)
  tf.random.set_seed(0)
  dqn = recipe.scenario(num_env_steps=40, learning_starts=0, train_every=4,
                        gradient_steps=2, batch_size=8, seed=0,
                        progress=False)
  env = snt.envs.make(task, num_envs=1, in_graph=True)
  history = dqn(recipe.q_network(), recipe.optimizer(), env)
  assert dqn.step == 40 and np.isfinite(history.train["loss"][-1])
  # The zoo's budgets (rl-baselines3-zoo benchmark.md).
  assert recipe.num_env_steps == {"CartPole-v1": 50_000, "Acrobot-v1": 100_000,
                                  "MountainCar-v0": 120_000}[task]


def test_the_td3_mountain_car_recipe_pushes_with_correlated_noise():
  recipe = snt.scenarios.TD3.recipe("MountainCarContinuous-v0")
  td3 = recipe.scenario(progress=False)
  # Ornstein-Uhlenbeck noise varying 5x faster than SB3's default dt, a
  # third of the zoo's 300k steps, rounds of 32 updates.
  assert (td3.exploration_noise, td3.noise_std, td3.ou_dt) == (
      "ornstein_uhlenbeck", 0.5, 0.05)
  assert recipe.num_env_steps == 100_000 and td3.gamma == 0.999
  assert (td3.train_every, td3.gradient_steps) == (32, 32)
  actor, critic = recipe.networks()
  assert actor(tf.zeros([3, 2])).shape == [3, 1]
  assert critic(tf.zeros([3, 3])).shape == [3, 1]
