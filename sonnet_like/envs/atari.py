"""`atari`: an Atari game with the standard preprocessing, as a gymnasium Env."""

from typing import Any

from sonnet_like.core import arguments
from sonnet_like.envs import gym_adapter

ATARI_MISSING = (
    "snt.envs.atari needs ale-py (the Atari emulator, ROMs included), "
    "gymnasium and OpenCV, and {missing} is not installed. Install them with "
    "`pip install sonnet_like[atari]` (or `pip install ale-py gymnasium "
    "opencv-python-headless`).")

FRAMESKIP_ERROR = (
    "atari: the given environment repeats each action {frameskip} times "
    "itself; the preprocessing repeats and pools frames on its own and needs "
    "frameskip=1: gymnasium.make({id!r}, frameskip=1, "
    "repeat_action_probability=0.0).")


def _import_atari():
  """Imports ale-py, registers its ids, returns the wrappers module."""
  gym = gym_adapter.import_gymnasium()
  for module in ("ale_py", "cv2"):
    try:
      __import__(module)
    except ImportError as error:
      raise ImportError(ATARI_MISSING.format(
          missing={"ale_py": "ale-py", "cv2": "OpenCV (cv2)"}[module])
                       ) from error
  import ale_py  # pylint: disable=g-import-not-at-top
  gym.register_envs(ale_py)
  from sonnet_like.envs import atari_wrappers  # pylint: disable=g-import-not-at-top
  return gym, atari_wrappers


def _default(value: bool | None, training: bool) -> bool:
  return training if value is None else bool(value)


def atari(env: Any, training: bool = False, *, noop_max: int = 30,
          frame_skip: int = 4, screen_size: int = 84, frame_stack: int = 4,
          episodic_life: bool | None = None, clip_rewards: bool | None = None,
          fire_reset: bool | None = None, **make_kwargs: Any):
  """Returns an Atari game with the standard preprocessing (a gymnasium Env).

  The preprocessing of Mnih et al. 2015 ("Human-level control through deep
  reinforcement learning", Nature; DQN), with the resets of Machado et al.
  2018 and the training-only steps of OpenAI Baselines' `atari_wrappers`.
  Evaluation (`training=False`) equals gymnasium's
  `AtariPreprocessing(noop_max=30, frame_skip=4, screen_size=84,
  grayscale_obs=True, terminal_on_life_loss=False)` followed by
  `FrameStackObservation(4)` (tested bitwise on fixed seeds and actions);
  training adds what Stable-Baselines3's `AtariWrapper` adds. The steps,
  innermost first:

  1. **Base game** (`frameskip=1, repeat_action_probability=0.0`): an id is
     made with `gymnasium.make(env, frameskip=1,
     repeat_action_probability=0.0, **make_kwargs)`: one emulator frame per
     step, no sticky actions (as the `NoFrameskip-v4` ids that SB3 and
     rl-baselines3-zoo train on). Pass `repeat_action_probability=0.25` for
     Machado et al.'s sticky actions. A given Env must have `frameskip=1`.
  2. **No-op reset** (`noop_max=30`; DQN, Nature 2015): each new game starts
     with 1 to `noop_max` frames of action 0, the count drawn from the base
     game's generator (so the reset seed fixes it); 0 turns it off.
  3. **Frame skip and max-pooling** (`frame_skip=4`; DQN): each action is
     repeated `frame_skip` frames, their rewards summed; the observation is
     the pixel-wise maximum of the last two frames (Atari sprites flicker).
  4. **Greyscale, 84x84** (`screen_size=84`; DQN): ALE's greyscale screen,
     resized with OpenCV's area interpolation, uint8 `[84, 84]`, pooled
     before resizing as gymnasium does. (SB3 pools the RGB frames and greys
     afterwards, so its pixels can differ by a grey level or so.)
  5. **Episodic life** (`episodic_life`, default: `training`; Baselines,
     SB3): a lost life reports `terminated=True`; the next `reset` steps
     action 0 instead of restarting the game, and the game restarts only
     when it is over. Value targets then stop at a lost life; evaluation
     must count whole games, hence off for evaluation.
  6. **Fire reset** (`fire_reset`, default: `training` and the game has a
     FIRE action; Baselines, SB3): after each reset (a lost life included)
     step FIRE then action 2, so games like Breakout start moving.
  7. **Reward clipping** (`clip_rewards`, default: `training`; DQN): each
     agent step's reward becomes its sign, -1, 0 or +1, so one learning
     rate fits every game. Off for evaluation, which reports game scores.
  8. **Frame stacking** (`frame_stack=4`; DQN): the observation is the last
     4 processed frames, channels last, uint8 `[84, 84, 4]` (oldest first);
     at reset every slot holds the first frame (gymnasium's padding "reset";
     SB3's `VecFrameStack` pads with zeros). Channels last is what
     `snt.Conv2D` and `snt.nets.NatureCNN` take; keep the uint8 and let the
     network scale it, so observations cross into the compiled step at a
     quarter of float32's size.

  Use it through `snt.envs.make` for the RL scenarios:
  `snt.envs.make(lambda: snt.envs.atari("ALE/Pong-v5", training=True),
  num_envs=8)` gives observations `[8, 84, 84, 4]` uint8.

  Args:
    env: An ALE id (`"ALE/Breakout-v5"`) or a gymnasium ALE Env made with
      `frameskip=1`.
    training: Turns on the training-only steps (5-7) whose argument is None.
    noop_max: Most no-op frames at the start of a game (step 2).
    frame_skip: Frames per agent step (step 3).
    screen_size: Side of the square observation (step 4).
    frame_stack: Frames stacked in an observation (step 8).
    episodic_life: Step 5; None means `training`.
    clip_rewards: Step 7; None means `training`.
    fire_reset: Step 6; None means `training` for games with a FIRE action.
    **make_kwargs: More arguments of `gymnasium.make` for an id.

  Returns:
    The wrapped gymnasium Env: observation space `Box(0, 255, [screen_size,
    screen_size, frame_stack], uint8)`, the game's action space.

  Raises:
    ImportError: ale-py, gymnasium or OpenCV is not installed.
    ValueError: A bad setting, or a given Env that skips frames itself.
  """
  arguments.check_positive_int("atari", "frame_skip", frame_skip)
  arguments.check_positive_int("atari", "screen_size", screen_size)
  arguments.check_positive_int("atari", "frame_stack", frame_stack)
  if (isinstance(noop_max, bool) or not isinstance(noop_max, int)
      or noop_max < 0):
    raise ValueError(f"atari: noop_max must be an int >= 0, got "
                     f"{noop_max!r}.")
  gym, steps = _import_atari()
  if isinstance(env, str):
    settings = {"frameskip": 1, "repeat_action_probability": 0.0,
                **make_kwargs}
    base = gym.make(env, **settings)
  elif isinstance(env, gym.Env):
    base = env
  else:
    raise TypeError(f"atari: env must be an ALE id or a gymnasium Env, got "
                    f"{type(env).__name__}: {env!r}.")
  unwrapped = base.unwrapped
  if not hasattr(unwrapped, "ale"):
    raise ValueError(f"atari: env must be an ALE game, got {base!r}.")
  frameskip = getattr(unwrapped, "_frameskip", 1)
  if frameskip != 1:
    spec = getattr(base, "spec", None)
    raise ValueError(FRAMESKIP_ERROR.format(
        frameskip=frameskip, id=spec.id if spec is not None else env))
  wrapped = steps.NoopReset(base, noop_max)
  wrapped = steps.SkipAndPool(wrapped, frame_skip, screen_size)
  if _default(episodic_life, training):
    wrapped = steps.EpisodicLife(wrapped)
  has_fire = "FIRE" in unwrapped.get_action_meanings()[1:2]
  if fire_reset is None:
    fire_reset = training and has_fire
  if fire_reset:
    if not has_fire:
      raise ValueError(f"atari: fire_reset=True needs a game whose action 1 "
                       f"is FIRE, got {unwrapped.get_action_meanings()}.")
    wrapped = steps.FireReset(wrapped)
  if _default(clip_rewards, training):
    wrapped = steps.ClipReward(wrapped)
  return steps.StackFrames(wrapped, frame_stack)
