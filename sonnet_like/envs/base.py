"""The environment protocol of the RL scenarios.

An `Environment` is a batch of `num_envs` environments stepped together by
TensorFlow ops, so a rollout can be traced into the same `tf.function` as the
policy and the update:

    observation = env.observation()          # [num_envs, *obs_shape]
    timestep = env.step(action)              # action: [num_envs, *act_shape]

Environments whose episode ends are reset within the same `step` (same-step
auto-reset): `timestep.observation` is then the first observation of the new
episode, and `timestep.final_observation` the one the old episode ended on
(needed to bootstrap a value through a time-limit truncation).

All state that decides an environment's future lives in its variables (and
its `tf.random.Generator`), so checkpointing the environment with the rest of
a run resumes it exactly. `in_graph` says whether `step` is made of pure
TensorFlow ops (compilable with XLA, no Python per step) or calls Python
(gymnasium, through `tf.numpy_function`).
"""

import dataclasses
from typing import NamedTuple

import numpy as np
import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import autograph


@dataclasses.dataclass(frozen=True)
class Discrete:
  """Actions are integers in `[0, num_actions)`, one per environment."""
  num_actions: int

  def __post_init__(self):
    arguments.check_positive_int("Discrete", "num_actions", self.num_actions)

  @property
  def spec(self) -> tf.TensorSpec:
    """One environment's action."""
    return tf.TensorSpec([], tf.int32)


@dataclasses.dataclass(frozen=True, eq=False)
class Box:
  """Actions are float vectors between `low` and `high` (elementwise)."""
  low: np.ndarray
  high: np.ndarray

  def __post_init__(self):
    low = np.asarray(self.low, np.float32)
    high = np.asarray(self.high, np.float32)
    if low.shape != high.shape or not np.all(low < high):
      raise ValueError(f"Box: low and high must have one shape and low < "
                       f"high, got low={low!r}, high={high!r}.")
    object.__setattr__(self, "low", low)
    object.__setattr__(self, "high", high)

  @property
  def shape(self) -> tuple[int, ...]:
    return self.low.shape

  @property
  def spec(self) -> tf.TensorSpec:
    """One environment's action."""
    return tf.TensorSpec(self.low.shape, tf.float32)


ActionSpace = Discrete | Box


class TimeStep(NamedTuple):
  """What one `step` of a batch of environments returns; leading axis envs.

  Attributes:
    observation: The next observation; for an environment whose episode just
      ended, the first observation of its new episode.
    reward: float32 rewards of the step.
    terminated: bool, the episode reached a terminal state (its value is 0).
    truncated: bool, the episode was cut short (by a time limit) in a
      non-terminal state (bootstrap from `final_observation`).
    final_observation: The observation the step reached, before any reset
      (equal to `observation` where the episode goes on).
  """
  observation: tf.Tensor
  reward: tf.Tensor
  terminated: tf.Tensor
  truncated: tf.Tensor
  final_observation: tf.Tensor

  @property
  def done(self) -> tf.Tensor:
    return tf.logical_or(self.terminated, self.truncated)


class Environment(tf.Module):
  """Base class of batched environments (see the module docstring).

  Subclasses set `num_envs`, `observation_spec` (one environment's
  observation, a `tf.TensorSpec`), `action_space` (`Discrete` or `Box`) and
  `in_graph`, and implement `reset`, `observation` and `step`.
  """

  num_envs: int
  observation_spec: tf.TensorSpec
  action_space: ActionSpace
  in_graph: bool = True

  def reset(self, seed: int | None = None) -> tf.Tensor:
    """Starts a new episode in every environment; returns the observations.

    Args:
      seed: Reseeds the environment's randomness first (a Python int), so
        that what follows is reproducible; None keeps the current stream.
    """
    raise NotImplementedError(f"{type(self).__name__} must implement reset().")

  def observation(self) -> tf.Tensor:
    """The current observations, `[num_envs, *observation_spec.shape]`."""
    raise NotImplementedError(
        f"{type(self).__name__} must implement observation().")

  def step(self, action: tf.Tensor) -> TimeStep:
    """Steps every environment with `action` (`[num_envs, ...]`)."""
    raise NotImplementedError(
        f"{type(self).__name__} must implement step(action).")


SHAPE_ERROR = (
    "{owner}{env}: {method} returned {field} of shape {got}; expected "
    "{expected} ([num_envs{rest}] with num_envs={n}).")


@autograph.as_written
def _describe_env(env: Environment) -> str:
  return f"{type(env).__name__} environment {env.name!r}"


@autograph.as_written
def checked(env: Environment, value: tf.Tensor, field: str,
            method: str = "step()", owner: str | None = None) -> tf.Tensor:
  """`value` with the shape `env` promises for `field`, or a clear error.

  `field` is "observation", "final_observation", "reward", "terminated" or
  "truncated". A shape known when tracing is checked then (a `ValueError`
  naming the environment); one known only when the graph runs is asserted
  there with the same message. `owner` (the scenario using `env`) starts the
  message, as "PPO: env: ...".
  """
  value = tf.convert_to_tensor(value)
  observation = field in ("observation", "final_observation")
  rest = env.observation_spec.shape.as_list() if observation else []
  expected = [env.num_envs] + rest
  message = SHAPE_ERROR.format(
      owner=f"{owner}: env: " if owner else "", env=_describe_env(env), method=method, field=field,
      got=value.shape.as_list() if value.shape.rank is not None else "?",
      expected=expected, n=env.num_envs,
      rest=(", *observation_spec.shape" if observation else ""))
  if not value.shape.is_compatible_with(expected):
    raise ValueError(message)
  if value.shape.is_fully_defined():
    return value
  with tf.control_dependencies([tf.debugging.assert_equal(
      tf.shape(value), tf.constant(expected, tf.int32), message=message)]):
    return tf.identity(value)


@autograph.as_written
def checked_timestep(env: Environment, timestep: TimeStep,
                     owner: str | None = None) -> TimeStep:
  """Every field of `env.step`'s result checked with `checked`."""
  return TimeStep(*(checked(env, value, field, owner=owner)
                    for field, value in zip(TimeStep._fields, timestep)))


def check_shapes(env: Environment, owner: str) -> bool:
  """Checks `env`'s observation and step shapes before training.

  Traces (never runs) one `observation()` and one `step()` with a zero
  action, so a wrong shape is a plain `ValueError` starting with `owner`
  before the first step, not an error from inside the compiled loop.

  Returns:
    Whether every shape was fully known when traced (the in-graph
    environments, and gymnasium's through the adapter, which sets them):
    then this check is the whole check, and a loop stepping `env` need not
    check each step again (`checked` would add nothing). False when some
    shape is known only at run time: each step's values are then asserted
    with `checked`.
  """
  spec = env.action_space.spec
  action = tf.zeros([env.num_envs] + spec.shape.as_list(), spec.dtype)
  static = []

  @autograph.as_written  # The environment is rewritten (it may branch).
  def probe():
    user = autograph.as_user_code
    values = (user(env.observation)(),) + tuple(user(env.step)(action))
    static.extend(tf.convert_to_tensor(v).shape.is_fully_defined()
                  for v in values)
    checked(env, values[0], "observation", "observation()", owner)
    checked_timestep(env, TimeStep(*values[1:]), owner)

  tf.function(probe).get_concrete_function()
  return all(static)
