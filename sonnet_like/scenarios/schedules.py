"""Schedules: a value (DQN's epsilon, a learning-rate factor) of the step.

A schedule is a pure function of the step counter, so a resumed run (whose
step counter is restored) continues it exactly; it holds no state of its own.
It accepts a Python number or a tensor (traced inside the compiled step) and
returns a float32 tensor. As a scenario's `learning_rate_schedule` it gives
the factor by which every optimizer's own learning rate is multiplied (as
PyTorch's `LambdaLR`); `warmup_constant`, `warmup_linear`, `warmup_cosine`
and `warmup_step` are the usual warm-up curves:

    >>> lr = warmup_cosine(warmup_steps=10, decay_steps=90)
    >>> [round(float(lr(t)), 3) for t in (0, 5, 10, 55, 100, 200)]
    [0.0, 0.5, 1.0, 0.5, 0.0, 0.0]

    >>> from sonnet_like.scenarios import schedules
    >>> epsilon = schedules.LinearSchedule(1.0, 0.1, steps=100)
    >>> [round(float(epsilon(t)), 3) for t in (0, 50, 100, 1_000)]
    [1.0, 0.55, 0.1, 0.1]
"""

import math
from typing import Any

import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import autograph

__all__ = [
    "ConstantSchedule", "CosineSchedule", "ExponentialSchedule",
    "LinearSchedule", "Schedule", "StepSchedule", "Warmup",
    "warmup_constant", "warmup_cosine", "warmup_linear", "warmup_step",
]


def _check_number(owner: str, name: str, value: Any) -> float:
  if isinstance(value, bool) or not isinstance(value, (int, float)) or (
      not math.isfinite(value)):
    raise ValueError(f"{owner}: {name} must be a finite number, got "
                     f"{value!r}.")
  return float(value)


def _check_steps(owner: str, value: Any) -> int:
  arguments.check_positive_int(owner, "steps", value)
  return value


class Schedule:
  """Base class: `schedule(step)` -> float32 scalar tensor."""

  # AutoGraph's mark (`core/tf_private/autograph.py`); see `Module`'s.
  autograph_info__ = autograph.WrittenCall()

  @autograph.as_written
  def __call__(self, step: Any) -> tf.Tensor:
    raise NotImplementedError(
        f"{type(self).__name__} must implement __call__(step).")


class ConstantSchedule(Schedule):
  """The same value at every step."""

  def __init__(self, value: float):
    self.value = _check_number("ConstantSchedule", "value", value)

  @autograph.as_written
  def __call__(self, step: Any) -> tf.Tensor:
    del step
    return tf.constant(self.value, tf.float32)

  def __repr__(self) -> str:
    return f"ConstantSchedule({self.value})"


class LinearSchedule(Schedule):
  """Goes linearly from `start` (step 0) to `end` (at `steps`), then stays.

  Args:
    start: The value at step 0.
    end: The value from step `steps` on.
    steps: How many steps the change takes.
  """

  def __init__(self, start: float, end: float, steps: int):
    owner = type(self).__name__
    self.start = _check_number(owner, "start", start)
    self.end = _check_number(owner, "end", end)
    self.steps = _check_steps(owner, steps)

  @autograph.as_written
  def curve(self, progress: tf.Tensor) -> tf.Tensor:
    """The share of the way from `start` to `end` at `progress` in [0, 1]."""
    return progress

  @autograph.as_written
  def __call__(self, step: Any) -> tf.Tensor:
    step = tf.cast(step, tf.float64)
    progress = tf.minimum(tf.maximum(step / self.steps, 0.0), 1.0)
    value = self.start + (self.end - self.start) * autograph.as_user_code(
        self.curve)(progress)
    return tf.cast(value, tf.float32)

  def __repr__(self) -> str:
    return (f"{type(self).__name__}({self.start}, {self.end}, "
            f"steps={self.steps})")


class ExponentialSchedule(Schedule):
  """Decays from `start` towards `end` by `rate` every `steps` steps.

  `value(t) = end + (start - end) * rate ** (t / steps)`.

  Args:
    start: The value at step 0.
    end: The value approached as the step grows.
    rate: The factor by which `value - end` shrinks every `steps` steps,
      in (0, 1].
    steps: The number of steps one factor of `rate` takes.
  """

  def __init__(self, start: float, end: float, rate: float, steps: int = 1):
    self.start = _check_number("ExponentialSchedule", "start", start)
    self.end = _check_number("ExponentialSchedule", "end", end)
    rate = _check_number("ExponentialSchedule", "rate", rate)
    if not 0.0 < rate <= 1.0:
      raise ValueError(f"ExponentialSchedule: rate must be in (0, 1], got "
                       f"{rate!r}.")
    self.rate = rate
    self.steps = _check_steps("ExponentialSchedule", steps)

  @autograph.as_written
  def __call__(self, step: Any) -> tf.Tensor:
    step = tf.maximum(tf.cast(step, tf.float64), 0.0)
    factor = tf.pow(tf.constant(self.rate, tf.float64), step / self.steps)
    return tf.cast(self.end + (self.start - self.end) * factor, tf.float32)

  def __repr__(self) -> str:
    return (f"ExponentialSchedule({self.start}, {self.end}, rate={self.rate}, "
            f"steps={self.steps})")


class CosineSchedule(LinearSchedule):
  """Half a cosine from `start` (step 0) to `end` (at `steps`), then stays.

  `value(t) = end + (start - end) * (1 + cos(pi * min(t, steps) / steps)) / 2`
  (Loshchilov & Hutter's SGDR without restarts).
  """

  @autograph.as_written
  def curve(self, progress: tf.Tensor) -> tf.Tensor:
    return 0.5 * (1.0 - tf.cos(math.pi * progress))


class StepSchedule(Schedule):
  """`start` times `rate` once every `every` steps: a staircase.

  `value(t) = start * rate ** floor(t / every)`.
  """

  def __init__(self, start: float, rate: float, every: int):
    self.start = _check_number("StepSchedule", "start", start)
    self.rate = _check_number("StepSchedule", "rate", rate)
    if not 0.0 < self.rate:
      raise ValueError(f"StepSchedule: rate must be positive, got {rate!r}.")
    arguments.check_positive_int("StepSchedule", "every", every)
    self.every = every

  @autograph.as_written
  def __call__(self, step: Any) -> tf.Tensor:
    step = tf.maximum(tf.cast(step, tf.int64), 0)
    drops = tf.cast(step // self.every, tf.float64)
    value = self.start * tf.pow(tf.constant(self.rate, tf.float64), drops)
    return tf.cast(value, tf.float32)

  def __repr__(self) -> str:
    return (f"StepSchedule({self.start}, rate={self.rate}, "
            f"every={self.every})")


class Warmup(Schedule):
  """A linear warm-up over `steps` steps, then `then` (shifted by `steps`).

  The value rises linearly from `start` at step 0 to `then(0)` at step
  `steps` (Goyal et al. 2017's gradual warm-up), and is `then(t - steps)`
  from there on.

  Args:
    steps: Length of the warm-up.
    then: The schedule after the warm-up (its step 0 is the end of the
      warm-up); a constant 1 if None.
    start: The value at step 0.
  """

  def __init__(self, steps: int, then: Schedule | None = None,
               start: float = 0.0):
    self.steps = _check_steps("Warmup", steps)
    if then is None:
      then = ConstantSchedule(1.0)
    if not isinstance(then, Schedule):
      raise TypeError(f"Warmup: then must be a Schedule or None, got "
                      f"{then!r}.")
    self.then = then
    self.start = _check_number("Warmup", "start", start)

  @autograph.as_written
  def __call__(self, step: Any) -> tf.Tensor:
    step = tf.cast(step, tf.int64)
    then = autograph.as_user_code(self.then)  # May be a user's schedule.
    after = then(tf.maximum(step - self.steps, 0))
    progress = tf.cast(tf.maximum(step, 0), tf.float32) / self.steps
    rising = self.start + (after - self.start) * progress
    return tf.where(step < self.steps, rising, after)

  def __repr__(self) -> str:
    return f"Warmup({self.steps}, then={self.then!r}, start={self.start})"


def warmup_constant(warmup_steps: int) -> Warmup:
  """A factor rising from 0 to 1 over `warmup_steps` steps, then 1."""
  return Warmup(warmup_steps)


def warmup_linear(warmup_steps: int, decay_steps: int,
                  end: float = 0.0) -> Warmup:
  """Warm-up to 1, then linearly to `end` over `decay_steps` steps."""
  return Warmup(warmup_steps, LinearSchedule(1.0, end, decay_steps))


def warmup_cosine(warmup_steps: int, decay_steps: int,
                  end: float = 0.0) -> Warmup:
  """Warm-up to 1, then half a cosine to `end` over `decay_steps` steps."""
  return Warmup(warmup_steps, CosineSchedule(1.0, end, decay_steps))


def warmup_step(warmup_steps: int, every: int, rate: float = 0.1) -> Warmup:
  """Warm-up to 1, then times `rate` every `every` steps."""
  return Warmup(warmup_steps, StepSchedule(1.0, rate, every))


FACTOR_SCHEDULE_ERROR = (
    "{owner}: {argument} must be None, \"linear\" or a "
    "schedules.Schedule of the step ({steps}) giving a factor of "
    "{factor_of}, got {value!r}.")


def factor_schedule(owner: str, argument: str, factor_of: str, value: Any,
                    num_steps: int, steps: str = "steps done"
                    ) -> Schedule | None:
  """A scenario's schedule of a factor (of a learning rate, PPO's clip
  ratio): None or a `Schedule` as given, or "linear", falling from 1 at
  the first step to 0 after step `num_steps` (Stable-Baselines3's "lin_"
  values). Anything else is refused naming `owner`, `argument`, what the
  factor multiplies (`factor_of`) and what a step is (`steps`)."""
  if value is None or isinstance(value, Schedule):
    return value
  if isinstance(value, str) and value == "linear":
    return LinearSchedule(1.0, 0.0, steps=num_steps)
  raise ValueError(FACTOR_SCHEDULE_ERROR.format(
      owner=owner, argument=argument, steps=steps, factor_of=factor_of,
      value=value))


def factor_at(schedule: Schedule, step: Any) -> tf.Tensor:
  """`schedule(step)` for a step counter (a variable, also a mirrored
  one), called as written: AutoGraph, which converts the replica function
  of a strategy, does not rewrite the schedule."""
  if hasattr(step, "read_value"):
    step = step.read_value()
  return tf.autograph.experimental.do_not_convert(schedule.__call__)(step)


def learning_rate_factor(owner: str, value: Any, num_steps: int,
                         steps: str = "steps done") -> Schedule | None:
  """An RL scenario's `learning_rate_schedule` (see `factor_schedule`)."""
  return factor_schedule(owner, "learning_rate_schedule",
                         "the optimizer's learning rate", value, num_steps,
                         steps)
