"""Tests of sonnet_like/modules/recurrent/state_checks.py."""

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.modules.recurrent import state_checks


def test_leaf_paths_follow_flatten_order():
  structure = {"b": (1, snt.LSTMState(2, 3)), "a": [4]}
  paths = state_checks.leaf_paths(structure, "s")
  assert paths == ["s['a'][0]", "s['b'][0]", "s['b'][1].hidden",
                   "s['b'][1].cell"]
  assert tf.nest.flatten(structure) == [4, 1, 2, 3]


def test_describe_structure():
  state = snt.LSTMState(tf.zeros([2, 3]), None)
  assert (state_checks.describe_structure(state) ==
          "LSTMState(hidden=[2, 3], cell=None)")
  expected = {"x": tf.TensorShape([3, None])}
  assert (state_checks.describe_structure(expected, expected=True) ==
          "{'x': [B, 3, ?]}")


def test_check_state_converts_and_checks_unknown_sizes_at_run_time():
  module = snt.LSTM(3, name="checked_core")
  expected = tf.TensorShape([3])

  @tf.function(input_signature=[tf.TensorSpec([None, None])])
  def check(state):
    return state_checks.check_state(module, state, expected, tf.float32)

  assert check(tf.zeros([2, 3])).shape == (2, 3)
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match=r"checked_core.* expects prev_state of shape "
                     r"\[B, 3\], got another size"):
    check(tf.zeros([2, 4]))
  from_numpy = state_checks.check_state(module, np.ones([1, 3], np.float32),
                                       expected, tf.float32)
  assert isinstance(from_numpy, tf.Tensor)


def test_check_state_rejects_non_tensors():
  module = snt.GRU(3, name="tensor_core")
  with pytest.raises(TypeError, match=r"GRU 'tensor_core' expects "
                     r"prev_state to be a tensor, got object"):
    state_checks.check_state(module, object(), tf.TensorShape([3]),
                             tf.float32)
