"""Tests for sonnet_like/modules/batch_apply.py."""

import numpy as np
import pytest
import sonnet as reference
import tensorflow as tf

import sonnet_like as snt


def test_applies_per_step_like_a_loop():
  layer = snt.Linear(4, name="proj")
  apply = snt.BatchApply(layer, name="apply")
  x = tf.random.normal([5, 2, 3])
  y = apply(x)
  assert y.shape == (5, 2, 4)
  expected = np.stack([layer(x[t]) for t in range(5)])
  np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-6)
  assert apply.submodules == (layer,)


def test_matches_sonnet():
  fn = lambda x, y: (tf.reduce_sum(x, -1, keepdims=True) * y, "tag")
  x = tf.random.normal([2, 3, 4, 5])
  y = tf.random.normal([2, 3, 4, 1])
  for num_dims in (1, 2, 3):
    ours = snt.BatchApply(fn, num_dims=num_dims)(x, y=y)
    theirs = reference.BatchApply(fn, num_dims=num_dims)(x, y=y)
    assert ours[1] == theirs[1] == "tag"
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)


def test_low_rank_and_non_tensor_arguments_pass_unchanged():
  got = {}

  def fn(x, scale, flag):
    got.update(scale=scale, flag=flag)
    return x * scale

  out = snt.BatchApply(fn)(tf.ones([2, 3, 4]), tf.constant(2.), flag=True)
  assert out.shape == (2, 3, 4)
  assert got["scale"].shape == () and got["flag"] is True


def test_example_is_first_tensor_with_enough_axes():
  fn = lambda s, x: x + s
  out = snt.BatchApply(fn)(tf.constant(1.), tf.zeros([2, 3, 4]))
  np.testing.assert_array_equal(out, np.ones([2, 3, 4]))


def test_no_tensor_input_is_an_error():
  with pytest.raises(ValueError, match="BatchApply .ba.*: BatchApply requires at least one tensor input"):
    snt.BatchApply(lambda: 1, name="ba")()


def test_mismatched_leading_axes_is_an_error():
  apply = snt.BatchApply(lambda a, b: a + b, name="ba_mismatch")
  with pytest.raises(ValueError,
                     match=r"BatchApply 'ba_mismatch'.*\(2, 3\).*\(3, 2\)"):
    apply(tf.ones([2, 3, 1]), tf.ones([3, 2, 1]))


def test_mismatched_leading_axes_checked_at_run_time():
  apply = snt.BatchApply(lambda a, b: a + b, name="ba_dyn")
  f = tf.function(apply, input_signature=[tf.TensorSpec([None, 3, 1])] * 2)
  np.testing.assert_array_equal(f(tf.ones([2, 3, 1]), tf.ones([2, 3, 1])),
                                2 * np.ones([2, 3, 1]))
  with pytest.raises(tf.errors.InvalidArgumentError, match="BatchApply"):
    f(tf.ones([2, 3, 1]), tf.ones([4, 3, 1]))


def test_output_that_lost_the_batch_is_an_error():
  apply = snt.BatchApply(lambda x: tf.reduce_sum(x, 0, keepdims=True),
                         name="reducer")
  with pytest.raises(ValueError, match=r"reducer.*shape \(1, 4\).*be 6"):
    apply(tf.ones([2, 3, 4]))
  with pytest.raises(ValueError, match="returned a scalar"):
    snt.BatchApply(tf.reduce_sum)(tf.ones([2, 3, 4]))


def test_unknown_batch_inside_tf_function():
  layer = snt.Linear(2, name="dyn")
  apply = snt.BatchApply(layer)
  f = tf.function(apply, input_signature=[tf.TensorSpec([None, None, 3])])
  x = tf.random.normal([4, 5, 3])
  np.testing.assert_allclose(f(x), apply(x), rtol=1e-6)


@pytest.mark.parametrize("num_dims", [0, -1, 1.5, True])
def test_bad_num_dims(num_dims):
  with pytest.raises(ValueError, match="BatchApply: num_dims must be"):
    snt.BatchApply(tf.identity, num_dims=num_dims)


def test_module_must_be_callable():
  with pytest.raises(TypeError, match="BatchApply: module must be callable"):
    snt.BatchApply(3)
