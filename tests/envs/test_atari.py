"""snt.envs.atari against gymnasium's AtariPreprocessing + FrameStackObservation.

The evaluation variant must equal gymnasium's wrappers built on the same
base game (bitwise observations, rewards, ends) for 1,000 agent steps of a
fixed action sequence. The training variant is checked against the
evaluation variant's raw rewards and lives, stepped in lockstep: its rewards
are their signs, a lost life ends its episode, and its reset after a lost
life continues the same game (action 0, then FIRE and action 2).
"""

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt

gym = pytest.importorskip("gymnasium")
ale_py = pytest.importorskip(
    "ale_py", reason="ale-py (the Atari emulator) is not installed: "
    "pip install sonnet_like[atari]")
pytest.importorskip("cv2", reason="OpenCV is not installed: pip install "
                    "sonnet_like[atari]")
gym.register_envs(ale_py)

NUM_STEPS = 1_000


def _base(game):
  return gym.make(f"ALE/{game}-v5", frameskip=1, repeat_action_probability=0.0)


def _gymnasium_reference(game):
  env = gym.wrappers.AtariPreprocessing(
      _base(game), noop_max=30, frame_skip=4, screen_size=84,
      grayscale_obs=True, terminal_on_life_loss=False)
  return gym.wrappers.FrameStackObservation(env, 4)


def _actions(env, seed):
  return np.random.default_rng(seed).integers(0, env.action_space.n,
                                              NUM_STEPS)


def _channels_last(stack):
  return np.moveaxis(stack, 0, -1)


@pytest.mark.parametrize("game,seed", [("Breakout", 0), ("Pong", 1)])
def test_evaluation_equals_gymnasium_atari_preprocessing(game, seed):
  ours, theirs = snt.envs.atari(_base(game)), _gymnasium_reference(game)
  assert ours.observation_space == gym.spaces.Box(0, 255, (84, 84, 4),
                                                  np.uint8)
  observation, _ = ours.reset(seed=seed)
  expected, _ = theirs.reset(seed=seed)
  np.testing.assert_array_equal(observation, _channels_last(expected))
  games, total = 0, 0.0
  for t, action in enumerate(_actions(ours, seed)):
    observation, reward, terminated, truncated, _ = ours.step(action)
    expected, their_reward, their_terminated, their_truncated, _ = (
        theirs.step(action))
    assert observation.dtype == np.uint8
    np.testing.assert_array_equal(observation, _channels_last(expected),
                                  err_msg=f"step {t}")
    assert (reward, terminated, truncated) == (
        their_reward, their_terminated, their_truncated), f"step {t}"
    total += abs(reward)
    if terminated or truncated:
      games += 1
      observation, _ = ours.reset()
      expected, _ = theirs.reset()
      np.testing.assert_array_equal(observation, _channels_last(expected))
  assert total > 0   # The fixed actions score: rewards were compared.
  if game == "Breakout":
    assert games >= 2  # Ends and the resets after them were compared.


def _fire_start(env):
  """What the training variant's reset adds: FIRE, then action 2."""
  for action in (1, 2):
    observation, _, terminated, truncated, _ = env.step(action)
    assert not (terminated or truncated)
  return observation


def test_training_clips_rewards_and_ends_episodes_at_a_lost_life():
  """Lockstep with the evaluation variant on the same game and seed."""
  game, seed = "SpaceInvaders", 2
  train = snt.envs.atari(_base(game), training=True)
  raw = snt.envs.atari(_base(game))
  observation, _ = train.reset(seed=seed)
  raw.reset(seed=seed)
  expected = _fire_start(raw)
  np.testing.assert_array_equal(observation, expected[..., -1:].repeat(4, -1))
  lives = raw.unwrapped.ale.lives()
  lost_lives, games, rewards = 0, 0, set()
  for t, action in enumerate(_actions(train, seed)):
    observation, reward, terminated, truncated, _ = train.step(action)
    expected, raw_reward, game_over, raw_truncated, info = raw.step(action)
    np.testing.assert_array_equal(observation[..., -1], expected[..., -1],
                                  err_msg=f"step {t}")
    assert reward == np.sign(raw_reward), f"step {t}"
    rewards.add(raw_reward)
    lost = 0 < info["lives"] < lives
    lives = info["lives"]
    assert terminated == (game_over or lost), f"step {t}"
    assert truncated == raw_truncated
    if game_over or raw_truncated:
      games += 1
      observation, _ = train.reset()
      raw.reset()
      expected = _fire_start(raw)
      np.testing.assert_array_equal(observation[..., -1], expected[..., -1])
      lives = raw.unwrapped.ale.lives()
      assert train.unwrapped.ale.lives() == lives
    elif lost:
      lost_lives += 1
      observation, _ = train.reset()   # Not a new game: the same one goes on.
      raw.step(0)
      expected = _fire_start(raw)
      np.testing.assert_array_equal(observation[..., -1], expected[..., -1])
      assert train.unwrapped.ale.lives() == lives
  assert lost_lives >= 2 and games >= 1
  assert max(rewards) > 1   # Clipping was exercised.


def test_training_settings_default_to_training_and_can_be_overridden():
  env = snt.envs.atari(_base("Pong"), training=True, clip_rewards=False,
                       noop_max=0)
  env.reset(seed=0)
  names = []
  while hasattr(env, "env"):
    names.append(type(env).__name__)
    env = env.env
  assert names[:5] == ["StackFrames", "FireReset", "EpisodicLife",
                       "SkipAndPool", "NoopReset"]
  evaluation = snt.envs.atari(_base("Pong"))
  names = []
  while hasattr(evaluation, "env"):
    names.append(type(evaluation).__name__)
    evaluation = evaluation.env
  assert names[:3] == ["StackFrames", "SkipAndPool", "NoopReset"]


def test_refuses_a_game_that_skips_frames_itself():
  env = gym.make("ALE/Pong-v5")   # frameskip=4 by default
  with pytest.raises(ValueError, match=r"needs frameskip=1"):
    snt.envs.atari(env)
  with pytest.raises(ValueError, match=r"atari: noop_max must be an int "
                     r">= 0, got -1"):
    snt.envs.atari("ALE/Pong-v5", noop_max=-1)


def test_runs_through_the_gymnasium_adapter_as_uint8():
  env = snt.envs.make(lambda: snt.envs.atari("ALE/Pong-v5", training=True),
                      num_envs=2, seed=0)
  assert env.observation_spec == tf.TensorSpec([84, 84, 4], tf.uint8)
  assert env.action_space.num_actions == 6
  net = snt.nets.NatureCNN(env.action_space.num_actions)

  @tf.function
  def act_and_step(observation):
    action = tf.argmax(net(observation), axis=-1, output_type=tf.int32)
    return env.step(action)

  observation = env.reset(seed=0)
  assert observation.dtype == tf.uint8 and observation.shape == [2, 84, 84, 4]
  for _ in range(3):
    step = act_and_step(env.observation())
  assert step.observation.dtype == tf.uint8
  assert step.observation.shape == [2, 84, 84, 4]
  assert step.final_observation.dtype == tf.uint8
  env.close()
