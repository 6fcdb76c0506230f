"""Timing shared by the benchmarks, so every contender is measured alike.

Each measurement is (seconds to the first finished call, steady steps per
second between the first and the last finished call).
"""

import time
from typing import Any, Callable

import tensorflow as tf

import sonnet_like as snt


def time_calls(train: Callable[[tf.Tensor], Any], steps: int,
               k: int) -> tuple[float, float]:
  """Times a hand-written compiled loop `train(n)` running `n` steps a call."""
  n = tf.constant(k)
  start = time.perf_counter()
  float(train(n))
  first = time.perf_counter()
  for _ in range(steps // k - 1):
    result = train(n)
  float(result)
  return first - start, (steps - k) / (time.perf_counter() - first)


class StepClock(snt.scenarios.Hook):
  """Records when each of a scenario's compiled calls ends."""

  def __init__(self):
    self.times, self.steps = [], []

  def step_end(self, scenario, step, logs):
    self.times.append(time.perf_counter())
    self.steps.append(step)

  def result(self, start: float) -> tuple[float, float]:
    """The measurement of a run started at `start` (a perf_counter time)."""
    return (self.times[0] - start, (self.steps[-1] - self.steps[0]) /
            (self.times[-1] - self.times[0]))
