"""ScaledLearningRate: the schedule reaches Keras and Sonnet-style
optimizers, and optimizers whose rate cannot be set are refused."""

import keras
import numpy as np
import pytest
import tensorflow as tf
import tf_keras

import sonnet_like as snt
from sonnet_like.scenarios.rl import learning_rate
from sonnet_like.scenarios.rl import schedules
from sonnet_like.scenarios.updates import updater as updater_lib

HALVING = schedules.LinearSchedule(1.0, 0.0, steps=2)  # 1, 0.5, 0, 0, ...


def _step_size(optimizer, step):
  """How far one SGD step at `step` moves a weight with gradient 1."""
  w = tf.Variable([0.0])
  scaled = learning_rate.ScaledLearningRate("PPO", optimizer, HALVING)
  apply = updater_lib.Updater(optimizer, updater_lib.Shared("PPO")).apply_now

  @tf.function
  def update(t):
    with scaled.applied(t) as rate:
      apply([tf.ones([1])], [w])
    return rate

  rate = update(tf.constant(step, tf.int64))
  return -float(w[0]), float(rate)


@pytest.mark.parametrize("make", [snt.optimizers.SGD, keras.optimizers.SGD,
                                  tf_keras.optimizers.SGD],
                         ids=["sonnet", "keras", "tf_keras"])
def test_the_rate_is_the_base_times_the_schedule(make):
  for step, factor in ((0, 1.0), (1, 0.5)):
    moved, rate = _step_size(make(0.4), step)
    assert rate == pytest.approx(0.4 * factor)
    assert moved == pytest.approx(0.4 * factor)


def test_a_sonnet_optimizer_gets_its_own_rate_back():
  optimizer = snt.optimizers.SGD(0.4)
  _step_size(optimizer, 1)
  assert optimizer.learning_rate == 0.4


def test_a_sonnet_variable_rate_is_read_at_every_step():
  rate = tf.Variable(0.4)
  optimizer = snt.optimizers.SGD(rate)
  scaled = learning_rate.ScaledLearningRate("PPO", optimizer, HALVING)

  @tf.function
  def current(t):
    with scaled.applied(t) as value:
      return value

  assert float(current(tf.constant(1))) == pytest.approx(0.2)
  rate.assign(0.8)
  assert float(current(tf.constant(1))) == pytest.approx(0.4)
  assert optimizer.learning_rate is rate


def test_a_keras_rate_is_assigned_and_stays():
  optimizer = keras.optimizers.Adam(0.4)
  scaled = learning_rate.ScaledLearningRate("PPO", optimizer, HALVING)
  with scaled.applied(tf.constant(1)):
    pass
  np.testing.assert_allclose(float(optimizer.learning_rate), 0.2)
  assert scaled.base == pytest.approx(0.4)


@pytest.mark.parametrize("optimizer", [
    keras.optimizers.Adam(keras.optimizers.schedules.ExponentialDecay(
        0.1, 10, 0.5)),
    keras.optimizers.Adam(lambda: 0.1),
    tf_keras.optimizers.Adam(tf_keras.optimizers.schedules.ExponentialDecay(
        0.1, 10, 0.5)),
    None,
], ids=["keras_schedule", "keras_callable", "tf_keras_schedule",
        "no_rate"])
def test_an_optimizer_with_its_own_schedule_is_refused(optimizer):
  if optimizer is None:  # A Sonnet-style optimizer without a rate.
    optimizer = type("Bare", (), {"apply": lambda self, g, v: None})()
  with pytest.raises(ValueError, match="PPO: learning_rate_schedule needs an "
                     "optimizer whose learning rate can be set"):
    learning_rate.ScaledLearningRate("PPO", optimizer, HALVING)
