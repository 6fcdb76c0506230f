"""Tests for sonnet_like/modules/reshape.py."""

import numpy as np
import pytest
import sonnet
import tensorflow as tf

import sonnet_like as snt

_B, _H, _W, _C, _D = 2, 3, 4, 5, 6


@pytest.mark.parametrize("output_shape,preserve_dims,expected", [
    ((-1, _D), 1, (_B, _H * _W * _C, _D)),
    ((-1, _D), 2, (_B, _H, _W * _C, _D)),
    ((-1, _D), 3, (_B, _H, _W, _C, _D)),
    ((-1, _D), 4, (_B, _H, _W, _C, 1, _D)),
    ((_W * _C * _D,), 2, (_B, _H, _W * _C * _D)),
    ([-1], 1, (_B, _H * _W * _C * _D)),
    (tf.TensorShape([_H * _W, _C * _D]), 1, (_B, _H * _W, _C * _D)),
    (_H * _W * _C * _D, 1, (_B, _H * _W * _C * _D)),
])
def test_shapes_and_values(output_shape, preserve_dims, expected):
  x = tf.reshape(tf.range(_B * _H * _W * _C * _D, dtype=tf.float32),
                 [_B, _H, _W, _C, _D])
  out = snt.Reshape(output_shape, preserve_dims)(x)
  assert out.shape == expected
  np.testing.assert_array_equal(np.ravel(out), np.ravel(x))


@pytest.mark.parametrize("output_shape,preserve_dims", [
    ((-1, _D), 1), ((-1, _D), 4), ((_C, -1), 3)])
def test_matches_dm_sonnet(output_shape, preserve_dims):
  x = tf.random.normal([_B, _H, _W, _C, _D])
  np.testing.assert_array_equal(
      snt.Reshape(output_shape, preserve_dims)(x),
      sonnet.Reshape(output_shape, preserve_dims)(x))


def test_flatten():
  x = tf.random.normal([2, 3, 4])
  np.testing.assert_array_equal(snt.Flatten()(x), np.reshape(x, [2, 12]))
  assert snt.Flatten(preserve_dims=2)(x).shape == [2, 3, 4]
  assert snt.Flatten()(tf.ones([5])).shape == [5, 1]  # As dm-sonnet.


def test_functions():
  x = tf.ones([2, 3, 4])
  assert snt.flatten(x).shape == [2, 12]
  assert snt.reshape(x, (4, 3)).shape == [2, 4, 3]
  assert snt.reshape(x, (-1,), preserve_dims=2).shape == [2, 3, 4]


def test_unknown_batch_and_trailing_dims_in_tf_function():
  mod = snt.Reshape((-1, 2))
  f = tf.function(mod, input_signature=[tf.TensorSpec([None, None, 4])])
  assert f(tf.ones([3, 5, 4])).shape == [3, 10, 2]
  assert f.get_concrete_function().structured_outputs.shape.as_list() == [
      None, None, 2]


def test_reversed_restores_the_input_shape():
  x = tf.random.normal([2, 3, 4])
  mod = snt.Reshape((-1,), name="to_flat")
  flat = mod(x)
  back = mod.reversed()
  assert back.name == "to_flat_reversed"
  np.testing.assert_array_equal(back(flat), x)


def test_has_no_variables_as_in_sonnet():
  with pytest.raises(ValueError, match="does not currently contain any"):
    snt.Reshape((-1,)).variables  # pylint: disable=pointless-statement
  with pytest.raises(ValueError, match="does not currently contain any"):
    snt.Flatten().trainable_variables  # pylint: disable=pointless-statement


# Errors.


@pytest.mark.parametrize("output_shape", [(-1, -1), (2, -2), ("a",), (None,),
                                          tf.TensorShape([None, 2]), (1.5,)])
def test_bad_output_shape(output_shape):
  with pytest.raises(ValueError, match="Reshape: output_shape must be a "
                     "sequence of sizes >= 0 with at most one -1"):
    snt.Reshape(output_shape)


@pytest.mark.parametrize("preserve_dims", [0, -1, 1.5, True])
def test_bad_preserve_dims(preserve_dims):
  with pytest.raises(ValueError, match="Reshape: preserve_dims must be an int "
                     ">= 1"):
    snt.Reshape((-1,), preserve_dims=preserve_dims)
  with pytest.raises(ValueError, match="Flatten: preserve_dims"):
    snt.Flatten(preserve_dims=preserve_dims)


@pytest.mark.parametrize("output_shape", [(7, -1), (5, 5), (0, -1)])
def test_element_counts_do_not_fit(output_shape):
  with pytest.raises(ValueError, match=r"Reshape 'rs\w*' cannot reshape "
                     r"dimensions \(3, 4\) \(12 elements\) of an input of "
                     r"shape \(2, 3, 4\)"):
    snt.Reshape(output_shape, name="rs")(tf.ones([2, 3, 4]))


def test_element_counts_checked_when_run():
  mod = snt.Reshape((5, -1), name="rs_dyn")
  f = tf.function(mod, input_signature=[tf.TensorSpec([None, None])])
  assert f(tf.ones([2, 10])).shape == [2, 5, 2]
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match=r"rs_dyn\W+ cannot reshape"):
    f(tf.ones([2, 12]))


def test_rank_below_preserve_dims():
  with pytest.raises(ValueError, match=r"Reshape 'rs_rank\w*': Input tensor has 2 "
                     r"dimensions, should have at least as many as "
                     r"preserve_dims=3 \(input shape \(2, 3\)\)"):
    snt.Reshape((-1,), preserve_dims=3, name="rs_rank")(tf.ones([2, 3]))


def test_reversed_before_call():
  with pytest.raises(ValueError, match="must be called once before "
                     r"reversed\(\)"):
    snt.Reshape((-1,)).reversed()
