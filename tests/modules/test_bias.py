"""Tests for sonnet_like/modules/bias.py."""

import numpy as np
import pytest
import sonnet as reference
import tensorflow as tf

import sonnet_like as snt

_X = np.random.default_rng(0).normal(size=(2, 3, 4, 5)).astype(np.float32)


@pytest.mark.parametrize("bias_dims", [None, [], [-1], [1], [2], [1, 3],
                                       [-2, -1]])
def test_shape_and_maths_match_sonnet(bias_dims):
  init = snt.initializers.RandomNormal()
  ours = snt.Bias(bias_dims=bias_dims, b_init=init)
  theirs = reference.Bias(bias_dims=bias_dims)
  y = ours(_X)
  theirs(_X)
  assert ours.b.shape == theirs.b.shape
  assert ours.b.name.endswith("/b:0")
  np.testing.assert_allclose(y, _X + ours.b.numpy(), rtol=1e-6)
  theirs.b.assign(ours.b)
  np.testing.assert_allclose(y, theirs(_X), rtol=1e-6)


def test_multiplier_subtracts_the_same_bias():
  bias = snt.Bias(b_init=snt.initializers.Constant(0.5))
  np.testing.assert_allclose(bias(_X, multiplier=-1), _X - 0.5, rtol=1e-6)
  np.testing.assert_allclose(bias(_X, multiplier=tf.constant(2.)), _X + 1.,
                             rtol=1e-6)
  np.testing.assert_allclose(bias(bias(_X, multiplier=-1)), _X, atol=1e-6)


def test_default_init_is_zeros_and_output_size_is_checked():
  bias = snt.Bias(output_size=(3, 4, 5))
  np.testing.assert_array_equal(bias(_X), _X)
  assert bias.input_size == (3, 4, 5)
  with pytest.raises(ValueError, match=r"output_size=\(4,\).*\(2, 5\)"):
    snt.Bias(output_size=4, name="sized")(tf.ones([2, 5]))
  assert snt.Bias(output_size=5)(tf.ones([2, 5])).shape == (2, 5)


def test_later_inputs_are_checked_against_the_built_shape():
  bias = snt.Bias(name="b_check")
  bias(_X)
  with pytest.raises(ValueError, match=r"b_check' was built for size of axis "
                     r"-1 = 5, got 6"):
    bias(tf.ones([2, 3, 4, 6]))
  with pytest.raises(ValueError, match="rank >= 4"):
    bias(tf.ones([2, 5]))
  with pytest.raises(TypeError, match="built for float32 inputs, got float64"):
    bias(tf.ones([2, 3, 4, 5], tf.float64))
  # An axis of size 1 would silently broadcast the output up: also refused.
  with pytest.raises(ValueError, match="axis -3 = 3, got 1"):
    bias(tf.ones([2, 1, 4, 5]))


def test_broadcast_axes_may_change_size():
  bias = snt.Bias(bias_dims=[-1])
  bias(tf.ones([2, 3, 5]))
  assert bias(tf.ones([7, 9, 5])).shape == (7, 9, 5)


def test_unknown_size_checked_at_run_time():
  bias = snt.Bias(name="b_dyn")
  bias(tf.ones([2, 3]))
  f = tf.function(bias, input_signature=[tf.TensorSpec([None, None])])
  np.testing.assert_array_equal(f(tf.ones([4, 3])), np.ones([4, 3]))
  with pytest.raises(tf.errors.InvalidArgumentError, match="b_dyn"):
    f(tf.ones([4, 2]))


@pytest.mark.parametrize("kwargs,match", [
    (dict(bias_dims=[0]), "must not contain 0"),
    (dict(bias_dims=[1.5]), "sequence of ints"),
    (dict(output_size=0), "positive int"),
    (dict(output_size=[3, -1]), "positive int"),
])
def test_bad_constructor_arguments(kwargs, match):
  with pytest.raises(ValueError, match="Bias: .*" + match):
    snt.Bias(**kwargs)


def test_bad_first_inputs():
  with pytest.raises(ValueError, match="rank >= 2"):
    snt.Bias()(tf.ones([3]))
  with pytest.raises(ValueError, match=r"dimension 4 \(bias_dims=\(4,\)\) is out of range for input of rank 2"):
    snt.Bias(bias_dims=[4])(tf.ones([2, 3]))
  with pytest.raises(ValueError, match=r"dimension -2 \(bias_dims=\(-2,\)\) is the batch axis"):
    snt.Bias(bias_dims=[-2])(tf.ones([2, 3]))
  bias = snt.Bias(name="retry")
  with pytest.raises(ValueError):
    tf.function(bias).get_concrete_function(tf.TensorSpec([None, None]))
  assert bias(tf.ones([1, 2])).shape == (1, 2)  # A failed build is undone.


def test_arguments_are_kept_as_given_like_sonnet():
  bias = snt.Bias(output_size=[3, 4, 5], bias_dims=[-1])
  bias(_X)
  assert bias.output_size == [3, 4, 5] and bias.bias_dims == [-1]
  assert bias.b.shape == (5,)
