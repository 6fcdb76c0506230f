"""The steps of the Atari preprocessing, one gymnasium wrapper each.

`snt.envs.atari` (in `atari.py`) chains them; its docstring says what each
step does, its default and whom it follows. This module imports gymnasium
and OpenCV, so only `atari()` imports it, when it is called.

Innermost first:

    NoopReset -> SkipAndPool -> [EpisodicLife] -> [FireReset]
              -> [ClipReward] -> StackFrames

(bracketed steps are on for training only, by default).
"""

from typing import Any

import cv2
import gymnasium
import numpy as np


class NoopReset(gymnasium.Wrapper):
  """Starts each episode with 1 to `noop_max` raw frames of action 0.

  The count is drawn from the base environment's generator
  (`env.unwrapped.np_random.integers(1, noop_max + 1)`), so a reset seed fixes
  it. An episode that ends during the no-ops is reset again (with the same
  arguments) and the remaining no-ops continue.
  """

  def __init__(self, env: gymnasium.Env, noop_max: int):
    super().__init__(env)
    self._noop_max = noop_max

  def reset(self, *, seed: int | None = None,
            options: dict[str, Any] | None = None):
    observation, info = self.env.reset(seed=seed, options=options)
    count = (int(self.env.unwrapped.np_random.integers(1, self._noop_max + 1))
             if self._noop_max > 0 else 0)
    for _ in range(count):
      observation, _, terminated, truncated, step_info = self.env.step(0)
      info.update(step_info)
      if terminated or truncated:
        observation, info = self.env.reset(seed=seed, options=options)
    return observation, info


class SkipAndPool(gymnasium.Wrapper):
  """Repeats an action `frame_skip` times; observes the pooled, grey, small screen.

  Rewards of the repeated frames are summed. The observation is the
  pixel-wise maximum of the last two frames' greyscale screens (ALE's own
  luminance, read with `ale.getScreenGrayscale`), resized to
  `screen_size` x `screen_size` with OpenCV's area interpolation, as uint8.
  At reset the observation is the screen after the reset (pooled with
  nothing). An episode that ends inside the repeats stops there; the frames
  it did not reach are not read, so its last observation pools what was
  read with the previous step's pooled screen (as gymnasium's
  `AtariPreprocessing` does).
  """

  def __init__(self, env: gymnasium.Env, frame_skip: int, screen_size: int):
    super().__init__(env)
    self._ale = env.unwrapped.ale
    self._frame_skip = frame_skip
    self._size = (screen_size, screen_size)
    height, width = self._ale.getScreenDims()
    # _screens[0]: the last frame read (pooled in place once observed);
    # _screens[1]: the frame before it.
    self._screens = np.zeros([2, height, width], np.uint8)
    self.observation_space = gymnasium.spaces.Box(
        0, 255, (screen_size, screen_size), np.uint8)

  def _observe(self) -> np.ndarray:
    np.maximum(self._screens[0], self._screens[1], out=self._screens[0])
    return cv2.resize(self._screens[0], self._size,
                      interpolation=cv2.INTER_AREA)

  def reset(self, *, seed: int | None = None,
            options: dict[str, Any] | None = None):
    _, info = self.env.reset(seed=seed, options=options)
    self._ale.getScreenGrayscale(self._screens[0])
    self._screens[1].fill(0)
    return self._observe(), info

  def step(self, action):
    total_reward, terminated, truncated, info = 0.0, False, False, {}
    for t in range(self._frame_skip):
      _, reward, terminated, truncated, info = self.env.step(action)
      total_reward += reward
      if terminated or truncated:
        break
      if t == self._frame_skip - 2:
        self._ale.getScreenGrayscale(self._screens[1])
      elif t == self._frame_skip - 1:
        self._ale.getScreenGrayscale(self._screens[0])
    return self._observe(), total_reward, terminated, truncated, info


class EpisodicLife(gymnasium.Wrapper):
  """A lost life ends the episode for the agent, not for the game.

  `step` reports `terminated=True` when the lives counter drops and is still
  above 0. The `reset` that follows steps action 0 once instead of resetting
  the game (a real reset if that step ends the game); only after the game is
  over (or when a `seed` is given) does `reset` reset the game.
  """

  def __init__(self, env: gymnasium.Env):
    super().__init__(env)
    self._ale = env.unwrapped.ale
    self._lives = 0
    self._game_over = True

  def step(self, action):
    observation, reward, terminated, truncated, info = self.env.step(action)
    self._game_over = terminated or truncated
    lives = self._ale.lives()
    if 0 < lives < self._lives:
      terminated = True
    self._lives = lives
    return observation, reward, terminated, truncated, info

  def reset(self, *, seed: int | None = None,
            options: dict[str, Any] | None = None):
    if self._game_over or seed is not None:
      observation, info = self.env.reset(seed=seed, options=options)
    else:
      observation, _, terminated, truncated, info = self.env.step(0)
      if terminated or truncated:
        observation, info = self.env.reset(seed=seed, options=options)
    self._game_over = False
    self._lives = self._ale.lives()
    return observation, info


class FireReset(gymnasium.Wrapper):
  """After each reset, steps FIRE (action 1) then action 2.

  For games that wait for FIRE to start (Breakout's ball is served by it).
  An episode that ends on one of these steps is reset again.
  """

  def reset(self, *, seed: int | None = None,
            options: dict[str, Any] | None = None):
    self.env.reset(seed=seed, options=options)
    observation, info = None, {}
    for action in (1, 2):
      observation, _, terminated, truncated, info = self.env.step(action)
      if terminated or truncated:
        observation, info = self.env.reset(seed=seed, options=options)
    return observation, info


class ClipReward(gymnasium.RewardWrapper):
  """Rewards become their sign: -1.0, 0.0 or 1.0."""

  def reward(self, reward):
    return float(np.sign(reward))


class StackFrames(gymnasium.Wrapper):
  """Observes the last `num_frames` frames, channels last: `[h, w, n]` uint8.

  Oldest first (index -1 is the newest frame). At reset every slot holds the
  reset frame.
  """

  def __init__(self, env: gymnasium.Env, num_frames: int):
    super().__init__(env)
    shape = env.observation_space.shape
    self._stack = np.zeros([*shape, num_frames], np.uint8)
    self.observation_space = gymnasium.spaces.Box(
        0, 255, self._stack.shape, np.uint8)

  def reset(self, *, seed: int | None = None,
            options: dict[str, Any] | None = None):
    observation, info = self.env.reset(seed=seed, options=options)
    self._stack[...] = observation[..., None]
    return self._stack.copy(), info

  def step(self, action):
    observation, reward, terminated, truncated, info = self.env.step(action)
    self._stack[..., :-1] = self._stack[..., 1:]
    self._stack[..., -1] = observation
    return self._stack.copy(), reward, terminated, truncated, info
