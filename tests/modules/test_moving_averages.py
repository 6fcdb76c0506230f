"""Tests for sonnet_like/modules/moving_averages.py."""

import numpy as np
import pytest
import sonnet
import tensorflow as tf

import sonnet_like as snt


def _reference(values, decay):
  """Debiased EMA by the formula, in float64."""
  hidden, out = 0., []
  for t, v in enumerate(values, start=1):
    hidden = decay * hidden + (1 - decay) * v
    out.append(hidden / (1 - decay**t))
  return out


def test_matches_debiased_formula():
  values = np.random.default_rng(0).normal(size=(6, 3)).astype(np.float32)
  ema = snt.ExponentialMovingAverage(0.8)
  got = [ema(v).numpy() for v in values]
  np.testing.assert_allclose(got, _reference(values, 0.8), rtol=1e-5)
  assert ema.counter.numpy() == 6


def test_first_update_is_the_value():
  ema = snt.ExponentialMovingAverage(0.999)
  ema.update(tf.constant([3., -2.]))
  # float32 rounding of 1 - 0.999 (the same in dm-sonnet).
  np.testing.assert_allclose(ema.value, [3., -2.], rtol=2e-5)


def test_matches_dm_sonnet_and_same_variable_names():
  values = np.random.default_rng(1).normal(size=(5, 2, 2)).astype(np.float32)
  ours = snt.ExponentialMovingAverage(0.9, name="ema_cmp")
  theirs = sonnet.ExponentialMovingAverage(0.9, name="ema_cmp")
  for v in values:
    np.testing.assert_array_equal(ours(v), theirs(v))
  assert ([v.name for v in ours.variables] ==
          [v.name for v in theirs.variables])


def test_reset_returns_to_start():
  ema = snt.ExponentialMovingAverage(0.5)
  ema.update(tf.constant(4.))
  ema.update(tf.constant(8.))
  ema.reset()
  assert ema.counter.numpy() == 0
  assert ema.value.numpy() == 0.
  ema.update(tf.constant(1.))
  assert ema.value.numpy() == pytest.approx(1.)


def test_reset_before_first_update_is_harmless():
  ema = snt.ExponentialMovingAverage(0.5)
  ema.reset()
  assert ema.counter.numpy() == 0


def test_initialize_creates_zero_average_without_counting():
  ema = snt.ExponentialMovingAverage(0.5)
  ema.initialize(tf.ones([2]))
  np.testing.assert_array_equal(ema.value, [0., 0.])
  assert ema.counter.numpy() == 0


def test_inside_tf_function_first_call():
  ema = snt.ExponentialMovingAverage(0.5)
  step = tf.function(ema)
  step(tf.constant([2.]))
  out = step(tf.constant([4.]))
  np.testing.assert_allclose(out, _reference([2., 4.], 0.5)[-1:], rtol=1e-6)


def test_is_a_metric():
  assert isinstance(snt.ExponentialMovingAverage(0.5), snt.Metric)


@pytest.mark.parametrize("decay", [-0.1, 1.0, 1.5, "0.9", True])
def test_bad_decay(decay):
  with pytest.raises(ValueError, match=r"ExponentialMovingAverage: decay must "
                     r"be in range \[0, 1\)"):
    snt.ExponentialMovingAverage(decay)


def test_value_before_update_is_a_clear_error():
  ema = snt.ExponentialMovingAverage(0.5, name="early")
  with pytest.raises(ValueError, match="'early' has no value yet"):
    ema.value  # pylint: disable=pointless-statement


def test_shape_change_is_a_clear_error():
  ema = snt.ExponentialMovingAverage(0.5, name="shaped")
  ema.update(tf.ones([3]))
  with pytest.raises(ValueError, match=r"'shaped' was built for values of "
                     r"shape \(3,\), got \(4,\)"):
    ema.update(tf.ones([4]))


def test_dtype_change_is_a_clear_error():
  ema = snt.ExponentialMovingAverage(0.5, name="typed")
  ema.update(tf.ones([3]))
  with pytest.raises(TypeError, match="'typed' was built for float32 values, "
                     "got float64"):
    ema.update(tf.ones([3], tf.float64))


def test_integer_values_rejected():
  with pytest.raises(TypeError, match="floating-point"):
    snt.ExponentialMovingAverage(0.5).update(tf.constant([1, 2]))


def test_unknown_shape_at_creation_is_a_clear_error():
  ema = snt.ExponentialMovingAverage(0.5, name="partial")
  f = tf.function(ema.update,
                  input_signature=[tf.TensorSpec([None], tf.float32)])
  with pytest.raises(ValueError, match="'partial' needs a value of fully"):
    f(tf.ones([2]))


def test_float64_values_with_a_python_decay_inside_tf_function():
  ema = snt.ExponentialMovingAverage(0.5, name="ema64")
  update = tf.function(ema.update)
  update(tf.constant([2.0], tf.float64))
  update(tf.constant([4.0], tf.float64))
  # hidden: 1, then 2.5; debiased by 1 - 0.5**2.
  np.testing.assert_allclose(ema.value.numpy(), [2.5 / 0.75])
  assert ema.value.dtype == tf.float64
