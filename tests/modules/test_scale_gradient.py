"""Tests for sonnet_like/modules/scale_gradient.py."""

import numpy as np
import pytest
import sonnet as reference
import tensorflow as tf

import sonnet_like as snt


@pytest.mark.parametrize("scale", [0., 0.5, -1., 3.])
def test_forward_identity_backward_scaled(scale):
  x = tf.constant([1., -2., 3.])
  with tf.GradientTape(persistent=True) as tape:
    tape.watch(x)
    ours = snt.scale_gradient(x, scale)
    theirs = reference.scale_gradient(x, scale)
    loss_ours = tf.reduce_sum(ours ** 2)
    loss_theirs = tf.reduce_sum(theirs ** 2)
  np.testing.assert_array_equal(ours, x)
  np.testing.assert_allclose(tape.gradient(loss_ours, x), 2 * scale * x)
  np.testing.assert_allclose(tape.gradient(loss_ours, x),
                             tape.gradient(loss_theirs, x))


def test_tensor_scale_and_tf_function_and_float16():
  v = tf.Variable([1., 2.], dtype=tf.float16)

  @tf.function
  def grad(scale):
    with tf.GradientTape() as tape:
      y = tf.reduce_sum(snt.scale_gradient(v, scale) * 3)
    return tape.gradient(y, v)

  np.testing.assert_allclose(grad(tf.constant(2.)), [6., 6.])


def test_scale_variable_gets_no_gradient():
  x, scale = tf.constant(2.), tf.Variable(0.5)
  with tf.GradientTape() as tape:
    tape.watch(x)
    y = snt.scale_gradient(x, scale) * 4
  gx, gs = tape.gradient(y, [x, scale])
  assert float(gx) == 2. and gs is None
