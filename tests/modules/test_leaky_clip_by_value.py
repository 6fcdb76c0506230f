"""Tests for sonnet_like/modules/leaky_clip_by_value.py."""

import numpy as np
import pytest
import sonnet as reference
import tensorflow as tf

import sonnet_like as snt


def _value_and_grad(fn, t, lo, hi, upstream):
  with tf.GradientTape() as tape:
    tape.watch(t)
    y = fn(t, lo, hi)
    loss = tf.reduce_sum(y * upstream)
  return y.numpy(), tape.gradient(loss, t).numpy()


def test_gradient_rule_against_numpy_and_sonnet():
  rng = np.random.default_rng(0)
  t = tf.constant(rng.normal(size=200) * 2, tf.float32)
  upstream = tf.constant(rng.normal(size=200), tf.float32)
  y, g = _value_and_grad(snt.leaky_clip_by_value, t, -1., 1., upstream)
  t_np, dy = t.numpy(), upstream.numpy()
  np.testing.assert_array_equal(y, np.clip(t_np, -1, 1))
  blocked = ((t_np < -1) & (dy > 0)) | ((t_np > 1) & (dy < 0))
  np.testing.assert_array_equal(g, np.where(blocked, 0, dy))
  assert blocked.any() and (~blocked & (np.abs(t_np) > 1)).any()
  y_ref, g_ref = _value_and_grad(reference.leaky_clip_by_value, t, -1., 1.,
                                 upstream)
  np.testing.assert_array_equal(y, y_ref)
  np.testing.assert_array_equal(g, g_ref)


def test_elementwise_bounds_and_tf_function():
  t = tf.constant([0., 5., -5.])
  lo, hi = tf.constant([1., 0., -6.]), tf.constant([2., 4., -5.5])

  @tf.function
  def f():
    with tf.GradientTape() as tape:
      tape.watch(t)
      y = snt.leaky_clip_by_value(t, lo, hi)
      loss = tf.reduce_sum(y * tf.constant([-1., -1., 1.]))
    return y, tape.gradient(loss, t)

  y, g = f()
  np.testing.assert_array_equal(y, [1., 4., -5.5])
  # Below the range and pulled up: kept. Above and pushed up (dy < 0 means
  # descent raises it): blocked. Above and pulled down: kept.
  np.testing.assert_array_equal(g, [-1., 0., 1.])


def test_variable_bounds_get_no_gradient():
  t, lo = tf.constant([0., 2.]), tf.Variable(-1.)
  with tf.GradientTape() as tape:
    tape.watch(t)
    y = tf.reduce_sum(snt.leaky_clip_by_value(t, lo, 1.))
  gt, glo = tape.gradient(y, [t, lo])
  np.testing.assert_array_equal(gt, [1., 1.])
  assert glo is None


def test_bounds_that_broadcast_the_input_are_an_error():
  with pytest.raises(ValueError):
    snt.leaky_clip_by_value(tf.ones([2]), tf.zeros([3, 2]), 1.)
