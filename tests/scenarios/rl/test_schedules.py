"""Tests for the step schedules (epsilon of DQN)."""

import numpy as np
import pytest
import tensorflow as tf

from sonnet_like.scenarios.rl import schedules


def test_linear_goes_from_start_to_end_then_stays():
  schedule = schedules.LinearSchedule(1.0, 0.05, steps=40)
  steps = np.array([0, 10, 20, 40, 41, 10_000])
  expected = np.array([1.0, 0.7625, 0.525, 0.05, 0.05, 0.05])
  np.testing.assert_allclose([float(schedule(t)) for t in steps], expected,
                             rtol=1e-6)
  # The same values from an int64 tensor inside a tf.function.
  traced = tf.function(schedule)
  np.testing.assert_allclose(
      [float(traced(tf.constant(t, tf.int64))) for t in steps], expected,
      rtol=1e-6)
  assert schedule(tf.constant(3)).dtype == tf.float32


def test_linear_can_rise():
  schedule = schedules.LinearSchedule(0.0, 2.0, steps=4)
  np.testing.assert_allclose([float(schedule(t)) for t in range(6)],
                             [0.0, 0.5, 1.0, 1.5, 2.0, 2.0])


def test_exponential_decays_towards_end():
  schedule = schedules.ExponentialSchedule(1.0, 0.1, rate=0.5, steps=10)
  values = [float(schedule(t)) for t in (0, 10, 20, 15)]
  np.testing.assert_allclose(values, [1.0, 0.55, 0.325, 0.1 + 0.9 * 0.5**1.5],
                             rtol=1e-6)


def test_constant():
  assert float(schedules.ConstantSchedule(0.3)(tf.constant(7))) == (
      pytest.approx(0.3))


def test_a_schedule_depends_only_on_the_step():
  schedule = schedules.LinearSchedule(1.0, 0.0, steps=100)
  first = [float(schedule(t)) for t in range(0, 120, 7)]
  again = [float(schedule(t)) for t in range(0, 120, 7)]
  assert first == again


def test_errors():
  with pytest.raises(ValueError, match="LinearSchedule: steps must be a "
                     "positive int, got 0"):
    schedules.LinearSchedule(1.0, 0.0, steps=0)
  with pytest.raises(ValueError, match="LinearSchedule: start must be a "
                     "finite number, got 'a'"):
    schedules.LinearSchedule("a", 0.0, steps=3)
  with pytest.raises(ValueError, match=r"ExponentialSchedule: rate must be in "
                     r"\(0, 1\], got 1.5"):
    schedules.ExponentialSchedule(1.0, 0.0, rate=1.5)
  with pytest.raises(ValueError, match="ConstantSchedule: value must be"):
    schedules.ConstantSchedule(float("nan"))
