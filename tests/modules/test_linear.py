"""Tests for sonnet_like/modules/linear.py."""

import numpy as np
import pytest
import sonnet as reference
import tensorflow as tf

import sonnet_like as snt


def test_maths_and_variables():
  linear = snt.Linear(3, w_init=snt.initializers.RandomNormal(),
                      b_init=snt.initializers.RandomNormal(), name="maths")
  x = np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32)
  y = linear(x).numpy()
  np.testing.assert_allclose(y, x @ linear.w.numpy() + linear.b.numpy(),
                             rtol=1e-5)
  assert linear.w.shape == (4, 3) and linear.b.shape == (3,)
  assert linear.input_size == 4


def test_matches_sonnet_with_same_seed():
  x = tf.random.normal([2, 7])
  tf.random.set_seed(3)
  ours = snt.Linear(4)
  out = ours(x)
  tf.random.set_seed(3)
  theirs = reference.Linear(4)
  np.testing.assert_allclose(out, theirs(x), rtol=1e-6)
  assert [v.name.split("/")[-1] for v in ours.variables] == [
      v.name.split("/")[-1] for v in theirs.variables]


def test_default_init_stddev():
  linear = snt.Linear(500)
  linear(tf.ones([1, 400]))
  assert abs(np.std(linear.w.numpy()) - 0.05 * 0.8796) < 0.002


def test_higher_rank_inputs():
  linear = snt.Linear(2)
  x = tf.random.normal([3, 4, 5])
  np.testing.assert_allclose(
      linear(x), tf.einsum("btf,fo->bto", x, linear.w) + linear.b, rtol=1e-5)


def test_without_bias():
  linear = snt.Linear(2, with_bias=False)
  linear(tf.ones([1, 3]))
  assert [v.name.split("/")[-1] for v in linear.variables] == ["w:0"]


@pytest.mark.parametrize("make,match", [
    (lambda: snt.Linear(0), "output_size must be a positive int, got 0"),
    (lambda: snt.Linear(2, with_bias=False, b_init=snt.initializers.Ones()),
     "b_init must be None"),
])
def test_bad_constructor_arguments(make, match):
  with pytest.raises(ValueError, match=match):
    make()


def test_wrong_input_size():
  linear = snt.Linear(2, name="encoder")
  linear(tf.ones([1, 4]))
  with pytest.raises(ValueError,
                     match="Linear 'encoder' was built for input size 4, got 5"):
    linear(tf.ones([1, 5]))


def test_wrong_input_size_inside_tf_function_with_unknown_dims():
  linear = snt.Linear(2, name="traced_encoder")
  linear(tf.ones([1, 4]))
  f = tf.function(linear, input_signature=[tf.TensorSpec([None, None])])
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match=r"Linear \W+traced_encoder\W+ was built for input size 4"):
    f(tf.ones([1, 5]))


def test_wrong_rank():
  with pytest.raises(ValueError, match=r"rank >= 2 \[..., input_size\], got "
                     r"shape \(4,\)"):
    snt.Linear(2)(tf.ones([4]))


def test_non_float_input():
  with pytest.raises(TypeError, match="floating-point input. Expected floating point type, got int32"):
    snt.Linear(2)(tf.ones([1, 4], tf.int32))


def test_dtype_different_from_build():
  linear = snt.Linear(2)
  linear(tf.ones([1, 4]))
  with pytest.raises(TypeError, match="built for float32 inputs, got float64"):
    linear(tf.ones([1, 4], tf.float64))


def test_unknown_input_size_at_build_says_how_to_fix():
  linear = snt.Linear(2)
  f = tf.function(linear, input_signature=[tf.TensorSpec([None, None])])
  with pytest.raises(ValueError, match="needs the input size .* Call the "
                     "module once on an example input before tracing"):
    f(tf.ones([1, 4]))
  assert not hasattr(linear, "w")
  assert linear(tf.ones([1, 4])).shape == (1, 2)
