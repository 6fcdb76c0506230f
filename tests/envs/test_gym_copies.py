"""`copy.deepcopy` of a `GymEnvironment` makes its environments again (a
population's member gets its own), and the NumPy side a vectorised step
calls is `step`'s."""

import copy

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt

gymnasium = pytest.importorskip("gymnasium")


def test_a_copy_has_environments_of_its_own_that_play_as_the_original():
  env = snt.envs.make("CartPole-v1", num_envs=2, seed=3)
  made = copy.deepcopy(env)
  # pylint: disable-next=protected-access
  assert made is not env and made._batch.envs[0] is not env._batch.envs[0]
  assert made.num_envs == 2 and made.observation_spec == env.observation_spec
  np.testing.assert_array_equal(made.reset(seed=5), env.reset(seed=5))
  for action in ([0, 1], [1, 1], [0, 0]):
    ours = env.step(tf.constant(action))
    theirs = made.python_step(np.array(action))  # The NumPy side.
    for got, want in zip(theirs, ours):
      np.testing.assert_array_equal(got, want.numpy())
  env.step(tf.constant([1, 1]))  # Stepping one leaves the other as it was.
  np.testing.assert_array_equal(made.python_observation(),
                                made.observation().numpy())


def test_a_copy_of_an_env_made_from_an_instance_uses_its_spec():
  env = snt.envs.GymEnvironment(gymnasium.make("CartPole-v1"), seed=1)
  made = copy.deepcopy(env)
  assert made.env_name == "CartPole-v1"
  np.testing.assert_array_equal(made.reset(seed=2), env.reset(seed=2))


def test_a_vector_env_cannot_be_copied_and_says_what_to_pass():
  vector = gymnasium.vector.SyncVectorEnv(
      [lambda: gymnasium.make("CartPole-v1")] * 2,
      autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP)
  env = snt.envs.GymEnvironment(vector)
  with pytest.raises(TypeError, match=r"^GymEnvironment: a copy makes its "
                     r"environments again, which .* cannot be .* pass a "
                     r"gymnasium id or a zero-argument factory instead"):
    copy.deepcopy(env)


def test_copies_stepped_together_play_as_each_steps_its_own():
  """`python_steps_of` (a population's one crossing a step) joins the
  copies' Envs into one batch: the same observations, rewards, ends and
  final observations as each copy's own steps, through episode ends, and
  each copy's observation after."""
  made = [snt.envs.make("CartPole-v1", num_envs=2, seed=s) for s in (0, 1, 2)]
  alone = [copy.deepcopy(env) for env in made]
  together = snt.envs.gym_adapter.python_steps_of(made)
  actions = np.random.default_rng(0).integers(0, 2, [60, 3, 2])
  ended = 0
  for action in actions:
    theirs = [env.python_step(a) for env, a in zip(alone, action)]
    ours = together(action)
    for got, want in zip(ours, zip(*theirs)):
      np.testing.assert_array_equal(got, np.stack(want))
      assert got.dtype == want[0].dtype
    ended += int(ours[2].sum() + ours[3].sum())
  assert ended > 3  # Random CartPole episodes end within 60 steps.
  for env, own in zip(made, alone):
    np.testing.assert_array_equal(env.python_observation(),
                                  own.python_observation())
  with pytest.raises(ValueError, match=r"GymEnvironment\(CartPole-v1\): "
                     r"actions must be in \[0, 2\), got \[2\]"):
    together(np.array([[0, 1], [1, 2], [0, 0]]))
