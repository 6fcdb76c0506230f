"""evaluate_policy: the greedy return's mean and std, as the scenarios'
own evaluation measures it, on in-graph and gymnasium environments."""

import keras
import pytest
import tensorflow as tf

import sonnet_like as snt


def _always_right(signs):
  return tf.cast(signs[:, 0] > 0, tf.int32)


def _always_one(observations):
  return tf.ones([tf.shape(observations)[0]], tf.int32)


@pytest.fixture(scope="module", name="trained")
def _trained():
  """A PPO and a DQN trained a few steps on Guess, each with an eval_env."""
  tf.random.set_seed(0)
  ppo = snt.scenarios.PPO(num_env_steps=2 * 4 * 5, num_envs=4,
                          rollout_length=5, num_epochs=1, num_minibatches=1,
                          eval_episodes=6, progress=False)
  ppo(snt.nets.MLP([8, 2]), snt.nets.MLP([8, 1]), keras.optimizers.Adam(0.01),
      snt.envs.Guess(4, seed=5), eval_env=snt.envs.Guess(3, seed=7))
  dqn = snt.scenarios.DQN(num_env_steps=3 * 4, num_envs=4, buffer_size=16,
                          batch_size=4, learning_starts=4, eval_episodes=6,
                          progress=False)
  dqn(snt.nets.MLP([8, 2]), keras.optimizers.Adam(0.01),
      snt.envs.Guess(4, seed=1), eval_env=snt.envs.Guess(3, seed=7))
  return ppo, dqn


def test_a_trained_scenario_scores_as_its_own_evaluation(trained):
  for scenario in trained:
    own = scenario.evaluate_now()  # Seeded with seed + 1 + step.
    mean, std = snt.scenarios.evaluate_policy(
        scenario, snt.envs.Guess(3, seed=0), episodes=6,
        seed=scenario.seed + 1 + scenario.step)
    assert (mean, std) == pytest.approx((own["return"], own["return_std"]),
                                        abs=1e-6), type(scenario).__name__


def test_a_function_on_in_graph_and_gymnasium_environments():
  assert snt.scenarios.evaluate_policy(
      _always_right, snt.envs.Guess(4, length=5), episodes=8) == (5.0, 0.0)
  # Pushing right all the time topples CartPole in about 9 steps.
  for env in ("CartPole-v1", snt.envs.make("CartPole-v1", num_envs=2,
                                           in_graph=True)):
    mean, std = snt.scenarios.evaluate_policy(_always_one, env, episodes=4)
    assert 7 <= mean <= 12 and std < 3, (env, mean, std)


def test_mistakes_are_named():
  with pytest.raises(ValueError, match="^evaluate_policy: episodes must be "
                     "a positive int, got 0"):
    snt.scenarios.evaluate_policy(_always_right, snt.envs.Guess(), episodes=0)
  with pytest.raises(TypeError, match=r"^evaluate_policy: policy must be a "
                     r"trained RL scenario .* got 3\.$"):
    snt.scenarios.evaluate_policy(3, snt.envs.Guess())
  with pytest.raises(ValueError, match="^evaluate_policy: the PPO given has "
                     "not been run yet"):
    snt.scenarios.evaluate_policy(snt.scenarios.PPO(num_env_steps=8),
                                  snt.envs.Guess())


def test_every_recipe_has_the_common_settings():
  from sonnet_like.scenarios.rl import recipes  # pylint: disable=g-import-not-at-top
  for scenario, table in ((snt.scenarios.PPO, recipes.PPO_RECIPES),
                          (snt.scenarios.DQN, recipes.DQN_RECIPES),
                          (snt.scenarios.SAC, recipes.SAC_RECIPES),
                          (snt.scenarios.TD3, recipes.TD3_RECIPES)):
    for task in table:
      settings = scenario.recipe(task).settings
      assert set(recipes.COMMON_SETTINGS) <= set(settings), (scenario, task)
  assert snt.scenarios.DQN.recipe("CartPole-v1").settings["num_envs"] is None
  assert snt.scenarios.PPO.recipe("CartPole-v1").settings["num_envs"] == 8
