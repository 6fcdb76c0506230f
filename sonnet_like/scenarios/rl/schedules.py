"""Schedules: a value (e.g. DQN's epsilon) as a function of the step.

A schedule is a pure function of the step counter, so a resumed run (whose
step counter is restored) continues it exactly; it holds no state of its own.
It accepts a Python number or a tensor (traced inside the compiled step) and
returns a float32 tensor.

    >>> from sonnet_like.scenarios.rl import schedules
    >>> epsilon = schedules.LinearSchedule(1.0, 0.1, steps=100)
    >>> [round(float(epsilon(t)), 3) for t in (0, 50, 100, 1_000)]
    [1.0, 0.55, 0.1, 0.1]
"""

import math
from typing import Any

import tensorflow as tf

from sonnet_like.core import arguments


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

  def __call__(self, step: Any) -> tf.Tensor:
    raise NotImplementedError(
        f"{type(self).__name__} must implement __call__(step).")


class ConstantSchedule(Schedule):
  """The same value at every step."""

  def __init__(self, value: float):
    self.value = _check_number("ConstantSchedule", "value", value)

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
    self.start = _check_number("LinearSchedule", "start", start)
    self.end = _check_number("LinearSchedule", "end", end)
    self.steps = _check_steps("LinearSchedule", steps)

  def __call__(self, step: Any) -> tf.Tensor:
    step = tf.cast(step, tf.float64)
    progress = tf.minimum(tf.maximum(step / self.steps, 0.0), 1.0)
    value = self.start + (self.end - self.start) * progress
    return tf.cast(value, tf.float32)

  def __repr__(self) -> str:
    return f"LinearSchedule({self.start}, {self.end}, steps={self.steps})"


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

  def __call__(self, step: Any) -> tf.Tensor:
    step = tf.maximum(tf.cast(step, tf.float64), 0.0)
    factor = tf.pow(tf.constant(self.rate, tf.float64), step / self.steps)
    return tf.cast(self.end + (self.start - self.end) * factor, tf.float32)

  def __repr__(self) -> str:
    return (f"ExponentialSchedule({self.start}, {self.end}, rate={self.rate}, "
            f"steps={self.steps})")
