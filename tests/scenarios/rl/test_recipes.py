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
  assert (ppo.num_envs, ppo.rollout_length, ppo.num_steps) == (4, 1024, 49)
  assert ppo.learning_rate_schedule is not None and ppo.squash
  assert ppo.normalize_observations and ppo.scale_rewards
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


def test_unknown_tasks_are_refused_with_the_known_ones():
  with pytest.raises(ValueError, match=r"^PPO: no recipe for 'Ant-v4'; "
                     r"recipes exist for \[.*'Pendulum-v1'"):
    snt.scenarios.PPO.recipe("Ant-v4")
