"""Tests for sonnet_like/modules/leading_dims.py."""

import numpy as np
import pytest
import sonnet as reference
import tensorflow as tf

import sonnet_like as snt


def test_merge_folds_leading_axes_in_row_major_order():
  x = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
  for num_dims in (1, 2, 3, 4):
    merged = snt.merge_leading_dims(tf.constant(x), num_dims)
    expected = x.reshape((-1,) + x.shape[num_dims:])
    np.testing.assert_array_equal(merged, expected)
    np.testing.assert_array_equal(
        merged, reference.merge_leading_dims(tf.constant(x), num_dims))


def test_split_inverts_merge():
  x = tf.random.normal([2, 3, 4])
  merged = snt.merge_leading_dims(x, 2)
  np.testing.assert_array_equal(snt.split_leading_dim(merged, x, 2), x)


def test_low_rank_and_non_tensors_pass_through():
  x = tf.ones([3])
  assert snt.merge_leading_dims(x, 2) is x
  assert snt.merge_leading_dims("text", 2) == "text"
  assert snt.merge_leading_dims(None, 2) is None
  assert snt.split_leading_dim(None, x, 2) is None
  assert snt.split_leading_dim(3, x, 2) == 3


def test_variables_are_merged():
  v = tf.Variable(tf.ones([2, 3, 4]))
  assert snt.merge_leading_dims(v, 2).shape == (6, 4)


def test_unknown_sizes_inside_tf_function_keep_static_info():
  seen = {}

  @tf.function(input_signature=[tf.TensorSpec([None, 3, 4])])
  def f(x):
    merged = snt.merge_leading_dims(x, 2)
    seen["merged"] = merged.shape.as_list()
    split = snt.split_leading_dim(merged * 2, x, 2)
    seen["split"] = split.shape.as_list()
    return merged, split

  x = tf.random.normal([5, 3, 4])
  merged, split = f(x)
  assert seen == {"merged": [None, 4], "split": [None, 3, 4]}
  np.testing.assert_array_equal(merged, tf.reshape(x, [15, 4]))
  np.testing.assert_array_equal(split, x * 2)


def test_unknown_rank_is_a_clear_error():
  @tf.function(input_signature=[tf.TensorSpec(None)])
  def f(x):
    return snt.merge_leading_dims(x, 2)

  with pytest.raises(ValueError, match="unknown rank"):
    f.get_concrete_function()


@pytest.mark.parametrize("num_dims", [0, -1, 1.5])
def test_num_dims_must_be_a_positive_int(num_dims):
  # A ValueError, and the TypeError Sonnet 2 raises for the same mistake.
  for error in (ValueError, TypeError):
    with pytest.raises(error, match="merge_leading_dims: num_dims must be a "
                       "positive int"):
      snt.merge_leading_dims(tf.ones([2, 3]), num_dims)
