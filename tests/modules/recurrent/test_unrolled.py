"""Tests of sonnet_like/modules/recurrent/unrolled.py."""

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from tests import recurrent_common as rc


def _pair(hidden_size=4, input_size=3):
  """An UnrolledLSTM and an LSTM core with the same variables."""
  unrolled = snt.UnrolledLSTM(hidden_size,
                              b_init=snt.initializers.RandomNormal(seed=1))
  core = snt.LSTM(hidden_size)
  unrolled(tf.zeros([1, 2, input_size]), unrolled.initial_state(2))
  core(tf.zeros([2, input_size]), core.initial_state(2))
  rc.copy_variables(unrolled, core)
  return unrolled, core


def test_matches_step_by_step_core():
  unrolled, core = _pair()
  x = rc.random([6, 2, 3])
  state = snt.LSTMState(hidden=rc.random([2, 4], 1), cell=rc.random([2, 4], 2))
  outputs, final = unrolled(x, state)
  expected = []
  for t in range(6):
    out, state = core(x[t], state)
    expected.append(out)
  rc.assert_close(outputs, np.stack(expected), rtol=1e-5, atol=1e-6)
  rc.assert_close(tuple(final), tuple(state), rtol=1e-5, atol=1e-6)
  assert isinstance(final, snt.LSTMState)


def test_matches_numpy_in_float64():
  lstm = snt.UnrolledLSTM(3, dtype=tf.float64)
  x = rc.random([4, 2, 5], dtype=np.float64)
  outputs, final = lstm(x, lstm.initial_state(2))
  h = c = np.zeros([2, 3])
  for t in range(4):
    h, c = rc.np_lstm_step(x[t], h, c, lstm.input_to_hidden.numpy(),
                           lstm.hidden_to_hidden.numpy(), lstm.b.numpy())
    np.testing.assert_allclose(outputs[t], h, rtol=1e-10)
  np.testing.assert_allclose(final.cell, c, rtol=1e-10)


def test_matches_sonnet():
  snt2 = rc.sonnet()
  theirs, ours = snt2.UnrolledLSTM(4), snt.UnrolledLSTM(4)
  x = tf.constant(rc.random([5, 2, 3]))
  expected = theirs(x, theirs.initial_state(2))
  ours(x, ours.initial_state(2))
  rc.copy_variables(theirs, ours)
  rc.assert_close(ours(x, ours.initial_state(2)), expected, rtol=1e-5,
                  atol=1e-6)


def test_variables_and_forget_bias():
  lstm = snt.UnrolledLSTM(2, forget_bias=3., name="unrolled_vars")
  lstm(tf.zeros([1, 1, 5]), lstm.initial_state(1))
  assert {v.name: v.shape.as_list() for v in lstm.variables} == {
      "unrolled_vars/w_i:0": [5, 8], "unrolled_vars/w_h:0": [2, 8],
      "unrolled_vars/b:0": [8]}
  np.testing.assert_allclose(lstm.b.numpy(), [0, 0, 3, 3, 0, 0, 0, 0])


def test_gradients_match_core():
  unrolled, core = _pair()
  x = tf.constant(rc.random([4, 2, 3]))

  def loss_grads(module, run):
    with tf.GradientTape() as tape:
      outputs, _ = run(x)
      loss = tf.reduce_sum(outputs ** 2)
    return tape.gradient(loss, module.trainable_variables)

  got = loss_grads(unrolled, lambda x: unrolled(x, unrolled.initial_state(2)))
  expected = loss_grads(
      core, lambda x: snt.dynamic_unroll(core, x, core.initial_state(2)))
  rc.assert_close(got, expected, rtol=1e-5, atol=1e-6)


def test_bad_input():
  lstm = snt.UnrolledLSTM(4, name="unrolled_bad")
  with pytest.raises(ValueError, match=r"UnrolledLSTM 'unrolled_bad' "
                     r"expects a rank-3 input \[T, B, input_size\], got shape "
                     r"\(2, 3\)"):
    lstm(tf.zeros([2, 3]), lstm.initial_state(2))
  with pytest.raises(ValueError, match=r"expects initial_state.hidden of "
                     r"shape \[B, 4\], got \[2, 3\]"):
    lstm(tf.zeros([5, 2, 3]), snt.LSTMState(tf.zeros([2, 3]),
                                            tf.zeros([2, 4])))
  with pytest.raises(ValueError, match="inputs with batch size 2 but "
                     "initial_state.hidden with batch size 3"):
    lstm(tf.zeros([5, 2, 3]), lstm.initial_state(3))
  with pytest.raises(ValueError, match="dynamic_unroll: input_sequence must "
                     "have at least a single time step"):
    lstm(tf.zeros([0, 2, 3]), lstm.initial_state(2))
  with pytest.raises(ValueError, match="built for input size 3, got 6"):
    lstm(tf.zeros([5, 2, 6]), lstm.initial_state(2))


def test_constructor_errors():
  with pytest.raises(ValueError, match="UnrolledLSTM: hidden_size must be a "
                     "positive int, got -2."):
    snt.UnrolledLSTM(-2)
