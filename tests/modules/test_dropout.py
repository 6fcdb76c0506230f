"""Tests for sonnet_like/modules/dropout.py."""

import numpy as np
import pytest
import sonnet
import tensorflow as tf

import sonnet_like as snt


@pytest.mark.parametrize("is_training", [False, np.bool_(False),
                                         tf.constant(False)])
def test_identity_when_not_training(is_training):
  x = tf.random.normal([4, 5])
  np.testing.assert_array_equal(snt.Dropout(0.9)(x, is_training), x)


def test_inverted_scaling_when_training():
  x = tf.fill([200, 50], 3.)
  out = snt.Dropout(0.25)(x, is_training=True).numpy()
  assert set(np.unique(out)) <= {0., 4.}
  kept = (out != 0).mean()
  assert 0.72 < kept < 0.78  # 10,000 draws of p=0.75.
  assert out.mean() == pytest.approx(3., rel=0.05)


def test_rate_zero_keeps_everything():
  x = tf.random.normal([3, 4])
  np.testing.assert_array_equal(snt.Dropout(0.)(x, is_training=True), x)


def test_noise_shape_drops_whole_columns():
  out = snt.Dropout(0.5, noise_shape=[1, 30])(tf.ones([20, 30]),
                                              is_training=True).numpy()
  assert (out == out[:1]).all()
  assert set(np.unique(out)) == {0., 2.}


def test_seed_with_global_seed_reproduces_dm_sonnet():
  x = tf.ones([6, 7])
  tf.random.set_seed(5)
  ours = snt.Dropout(0.5, seed=3)(x, is_training=True)
  tf.random.set_seed(5)
  theirs = sonnet.Dropout(0.5, seed=3)(x, is_training=True)
  np.testing.assert_array_equal(ours, theirs)


def test_boolean_tensor_is_training_in_tf_function():
  drop = snt.Dropout(0.5)
  f = tf.function(lambda x, t: drop(x, t))
  x = tf.ones([100])
  np.testing.assert_array_equal(f(x, tf.constant(False)), x)
  assert set(np.unique(f(x, tf.constant(True)).numpy())) == {0., 2.}


def test_has_no_variables_as_in_sonnet():
  with pytest.raises(ValueError, match="does not currently contain any"):
    snt.Dropout(0.5).variables  # pylint: disable=pointless-statement
  assert snt.allow_empty_variables(snt.Dropout(0.5)).trainable_variables == ()


# Errors.


@pytest.mark.parametrize("rate", [1., -0.1, 1.5, "0.5", None, True,
                                  tf.constant(2.)])
def test_bad_rate(rate):
  with pytest.raises(ValueError, match=r"Dropout: rate must be a number in "
                     r"\[0, 1\), got"):
    snt.Dropout(rate)


@pytest.mark.parametrize("flag", ["False", None, 0., tf.constant([True])])
def test_bad_is_training(flag):
  with pytest.raises(TypeError, match=r"Dropout 'drop\w*': is_training must "
                     "be a bool, an int or a scalar boolean tensor"):
    snt.Dropout(0.5, name="drop")(tf.ones([2]), flag)


def test_int_is_training_as_in_sonnet():
  x = tf.ones([2, 3])
  np.testing.assert_array_equal(snt.Dropout(0.5)(x, is_training=0), x)
  dropped = snt.Dropout(0.5, seed=1)(tf.ones([100]), is_training=1)
  assert 0 < int(tf.reduce_sum(tf.cast(dropped == 0., tf.int32))) < 100


def test_integer_input_rejected():
  with pytest.raises(TypeError, match="Dropout 'drop_int' expects a "
                     "floating-point input. Expected floating point type, got int32"):
    snt.Dropout(0.5, name="drop_int")(tf.ones([2], tf.int32), True)
