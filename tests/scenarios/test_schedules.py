"""The warm-up, cosine and step schedules (the linear ones: rl/)."""

import math

import numpy as np
import pytest
import tensorflow as tf

from sonnet_like.scenarios import schedules


def test_warmup_rises_linearly_then_follows_the_next_schedule():
  schedule = schedules.Warmup(4, schedules.LinearSchedule(1.0, 0.0, steps=8))
  values = [float(schedule(t)) for t in range(0, 14, 2)]
  np.testing.assert_allclose(values, [0.0, 0.5, 1.0, 0.75, 0.5, 0.25, 0.0],
                             atol=1e-7)
  traced = tf.function(schedule)
  np.testing.assert_allclose(
      [float(traced(tf.constant(t, tf.int64))) for t in range(0, 14, 2)],
      values, atol=1e-7)


def test_the_named_curves():
  cosine = schedules.warmup_cosine(warmup_steps=2, decay_steps=4, end=0.1)
  expected = [0.0, 0.5, 1.0, 0.1 + 0.9 * (1 + math.cos(math.pi / 4)) / 2,
              0.55, 0.1 + 0.9 * (1 + math.cos(3 * math.pi / 4)) / 2, 0.1, 0.1]
  np.testing.assert_allclose([float(cosine(t)) for t in range(8)], expected,
                             rtol=1e-6)
  step = schedules.warmup_step(warmup_steps=1, every=2, rate=0.5)
  np.testing.assert_allclose([float(step(t)) for t in range(7)],
                             [0.0, 1.0, 1.0, 0.5, 0.5, 0.25, 0.25])
  constant = schedules.warmup_constant(4)
  np.testing.assert_allclose([float(constant(t)) for t in (0, 1, 4, 100)],
                             [0.0, 0.25, 1.0, 1.0])
  linear = schedules.warmup_linear(2, decay_steps=2)
  np.testing.assert_allclose([float(linear(t)) for t in range(5)],
                             [0.0, 0.5, 1.0, 0.5, 0.0])


@pytest.mark.parametrize("make, message", [
    (lambda: schedules.Warmup(0), r"^Warmup: steps must be a positive int"),
    (lambda: schedules.Warmup(3, then=0.5),
     r"^Warmup: then must be a Schedule or None, got 0.5"),
    (lambda: schedules.StepSchedule(1.0, rate=0.0, every=3),
     r"^StepSchedule: rate must be positive, got 0.0"),
    (lambda: schedules.CosineSchedule(1.0, float("nan"), steps=3),
     r"^CosineSchedule: end must be a finite number, got nan"),
])
def test_bad_arguments_are_named(make, message):
  with pytest.raises((ValueError, TypeError), match=message):
    make()
