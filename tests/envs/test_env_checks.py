"""An environment whose step returns the wrong shapes is named in one error."""

import keras
import pytest
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.envs import base


class WideReward(snt.envs.Guess):

  def step(self, action):
    timestep = super().step(action)
    return timestep._replace(reward=timestep.reward[:, None])


class ShortObservation(snt.envs.Guess):

  def observation(self):
    return super().observation()[:, :0]


@pytest.mark.parametrize("env, message", [
    (WideReward(4), r"WideReward environment 'guess': step\(\) returned "
     r"reward of shape \[4, 1\]; expected \[4\]"),
    (ShortObservation(4), r"ShortObservation environment 'guess': "
     r"observation\(\) returned observation of shape \[4, 0\]; expected "
     r"\[4, 1\]"),
])
@pytest.mark.parametrize("scenario", ["PPO", "DQN"])
def test_rl_scenarios_name_the_environment_and_field(env, message, scenario):
  if scenario == "PPO":
    run = lambda: snt.scenarios.PPO(num_env_steps=40, num_envs=4,
                                    rollout_length=10, progress=False)(
                                        snt.Linear(2), snt.Linear(1),
                                        keras.optimizers.Adam(0.01), env)
  else:
    run = lambda: snt.scenarios.DQN(num_env_steps=40, learning_starts=8,
                                    batch_size=4, progress=False)(
                                        snt.Linear(2),
                                        keras.optimizers.Adam(0.01), env)
  with pytest.raises(ValueError, match=message) as info:
    run()
  assert str(info.value).startswith(f"{scenario}: env: ")


def test_shapes_known_only_at_run_time_are_asserted_with_the_same_message():
  env = snt.envs.Guess(3)

  @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
  def check(reward):
    return base.checked(env, reward, "reward")

  assert check(tf.zeros([3])).shape == (3,)
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match=r"Guess environment .{1,2}guess.{1,2}: step\(\) returned "
                     r"reward of shape \[None\]; expected \[3\]"):
    check(tf.zeros([5]))


class RunTimeReward(snt.envs.Guess):
  """Its rewards' shape is known only when the graph runs."""

  def step(self, action):
    timestep = super().step(action)
    return timestep._replace(reward=tf.boolean_mask(
        timestep.reward, tf.ones_like(timestep.reward, tf.bool)))


def _asserts_in_rollout(env, check_steps):
  from sonnet_like.scenarios.rl.parts import episodes
  from sonnet_like.scenarios.rl.parts import policies
  from sonnet_like.scenarios.rl.parts import rollout
  env.reset(seed=0)
  policy = policies.Policy("PPO", env.action_space)
  stats, rng = episodes.EpisodeStats(4), tf.random.Generator.from_seed(0)
  collect = tf.function(lambda: rollout.collect(
      env, lambda obs: tf.zeros([4, 2]), policy, stats, rng, length=2,
      check_steps=check_steps))
  graph = collect.get_concrete_function().graph.as_graph_def()
  nodes = list(graph.node) + [node for function in graph.library.function
                              for node in function.node_def]
  return sum(node.op == "Assert" for node in nodes)


def test_steps_are_checked_in_the_rollout_only_when_shapes_are_not_static():
  assert base.check_shapes(snt.envs.Guess(4), "PPO")  # The whole check.
  env = RunTimeReward(4)
  assert not base.check_shapes(env, "PPO")
  assert _asserts_in_rollout(env, check_steps=True) > 0
  assert _asserts_in_rollout(env, check_steps=False) == 0
  ppo = snt.scenarios.PPO(num_env_steps=40, num_envs=4, rollout_length=10,
                          progress=False)
  ppo(snt.Linear(2), snt.Linear(1), keras.optimizers.Adam(0.01), env)
  assert ppo._check_steps  # Build found a shape known only at run time.
