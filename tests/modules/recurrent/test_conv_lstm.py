"""Tests of sonnet_like/modules/recurrent/conv_lstm.py."""

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from tests import recurrent_common as rc


def _reference(x, h, c, w_i, w_h, b):
  """One ConvLSTM step with raw TensorFlow ops, channels-last."""
  gates = (tf.nn.convolution(x, w_i, padding="SAME") +
           tf.nn.convolution(h, w_h, padding="SAME") + b)
  i, f, g, o = tf.split(gates, 4, axis=-1)
  c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(g)
  return tf.sigmoid(o) * tf.tanh(c), c


@pytest.mark.parametrize("cls, spatial", [
    (snt.Conv1DLSTM, [7]), (snt.Conv2DLSTM, [5, 4]),
    (snt.Conv3DLSTM, [3, 4, 3])])
def test_step_matches_reference(cls, spatial):
  core = cls(input_shape=spatial + [2], output_channels=3, kernel_shape=3,
             b_init=snt.initializers.RandomNormal(seed=1), dtype=tf.float64)
  x = rc.random([2] + spatial + [2], 1, np.float64)
  h = rc.random([2] + spatial + [3], 2, np.float64)
  c = rc.random([2] + spatial + [3], 3, np.float64)
  outputs, state = core(x, snt.LSTMState(h, c))
  expected_h, expected_c = _reference(x, h, c, core.input_to_hidden,
                                      core.hidden_to_hidden, core.b)
  np.testing.assert_allclose(outputs, expected_h, rtol=1e-10)
  np.testing.assert_allclose(state.cell, expected_c, rtol=1e-10)
  assert core.input_to_hidden.shape == [3] * len(spatial) + [2, 12]
  assert core.hidden_to_hidden.shape == [3] * len(spatial) + [3, 12]


def test_variables_names_and_forget_bias():
  core = snt.Conv2DLSTM([4, 4, 2], 3, kernel_shape=(3, 1), forget_bias=2.,
                        name="conv_lstm_vars")
  core(tf.ones([1, 4, 4, 2]), core.initial_state(1))
  assert {v.name: v.shape.as_list() for v in core.variables} == {
      "conv_lstm_vars/b:0": [12],
      "conv_lstm_vars/input_to_hidden/w:0": [3, 1, 2, 12],
      "conv_lstm_vars/hidden_to_hidden/w:0": [3, 1, 3, 12]}
  np.testing.assert_allclose(core.b.numpy()[3:6], 2.)
  assert not np.any(np.delete(core.b.numpy(), [3, 4, 5]))


def test_matches_sonnet():
  snt2 = rc.sonnet()
  theirs = snt2.Conv2DLSTM([5, 5, 2], 3, kernel_shape=3)
  ours = snt.Conv2DLSTM([5, 5, 2], 3, kernel_shape=3)
  rc.assert_steps_match(theirs, ours, [2, 5, 5, 2], theirs.initial_state(2),
                        steps=2, rtol=1e-5)


def test_channels_first_equals_channels_last():
  last = snt.Conv2DLSTM([5, 4, 2], 3, kernel_shape=3,
                        b_init=snt.initializers.RandomNormal(seed=2))
  first = snt.Conv2DLSTM([2, 5, 4], 3, kernel_shape=3, data_format="NCHW")
  x = rc.random([2, 5, 4, 2])
  state = last.initial_state(2)
  last(x, state)
  first_state = first.initial_state(2)
  assert first_state.hidden.shape == (2, 3, 5, 4)
  first(np.transpose(x, [0, 3, 1, 2]), first_state)
  rc.copy_variables(last, first)
  for t in range(2):
    x = rc.random([2, 5, 4, 2], seed=t)
    expected, state = last(x, state)
    got, first_state = first(np.transpose(x, [0, 3, 1, 2]), first_state)
    rc.assert_close(np.transpose(got, [0, 2, 3, 1]), expected, rtol=1e-5,
                    atol=1e-6)


def test_unrolls():
  core = snt.Conv1DLSTM([6, 2], 3, kernel_shape=3)
  x = tf.constant(rc.random([4, 2, 6, 2]))
  rc.assert_close(snt.dynamic_unroll(core, x, core.initial_state(2)),
                  snt.static_unroll(core, x, core.initial_state(2)),
                  rtol=1e-5, atol=1e-6)


def test_bad_input():
  core = snt.Conv2DLSTM([5, 5, 2], 3, kernel_shape=3, name="conv_lstm_bad")
  with pytest.raises(ValueError, match=r"Conv2DLSTM 'conv_lstm_bad' expects "
                     r"a rank-4 input \[N, H, W, C\], got shape \(2, 5, 2\)"):
    core(tf.ones([2, 5, 2]), core.initial_state(2))
  with pytest.raises(ValueError, match=r"was built for input_shape \[5, 5, "
                     r"2\]: axis 2 of size 5, got 6"):
    core(tf.ones([2, 5, 6, 2]), core.initial_state(2))
  with pytest.raises(ValueError, match=r"expects prev_state.cell of shape "
                     r"\[B, 5, 5, 3\], got \[2, 5, 5, 4\]"):
    core(tf.ones([2, 5, 5, 2]),
         snt.LSTMState(tf.zeros([2, 5, 5, 3]), tf.zeros([2, 5, 5, 4])))


def test_constructor_errors():
  with pytest.raises(ValueError, match=r"Conv2DLSTM: input_shape must be 3 "
                     r"positive ints .*, got \[5, 5\]"):
    snt.Conv2DLSTM([5, 5], 3, kernel_shape=3)
  with pytest.raises(ValueError, match="Conv1DLSTM: output_channels must be a "
                     "positive int, got 0"):
    snt.Conv1DLSTM([5, 2], 0, kernel_shape=3)
  with pytest.raises(ValueError, match="Conv3DLSTM: data_format must be one "
                     "of"):
    snt.Conv3DLSTM([2, 2, 2, 1], 2, kernel_shape=3, data_format="NHWC")
