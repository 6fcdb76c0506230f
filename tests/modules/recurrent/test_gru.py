"""Tests of sonnet_like/modules/recurrent/gru.py."""

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from tests import recurrent_common as rc


def _np_gru(x, h, w_i, w_h, b):
  size = h.shape[-1]
  z = rc.sigmoid(x @ w_i[:, :size] + h @ w_h[:, :size] + b[:size])
  r = rc.sigmoid(x @ w_i[:, size:2 * size] + h @ w_h[:, size:2 * size] +
                 b[size:2 * size])
  a = np.tanh(x @ w_i[:, 2 * size:] + (r * h) @ w_h[:, 2 * size:] +
              b[2 * size:])
  return (1 - z) * h + z * a


def test_step_matches_numpy():
  gru = snt.GRU(5, b_init=snt.initializers.RandomNormal(seed=2),
                dtype=tf.float64)
  x, h = rc.random([3, 4], 1, np.float64), rc.random([3, 5], 2, np.float64)
  outputs, state = gru(x, h)
  expected = _np_gru(x, h, gru.input_to_hidden.numpy(),
                     gru.hidden_to_hidden.numpy(), gru.b.numpy())
  np.testing.assert_allclose(outputs, expected, rtol=1e-12)
  np.testing.assert_allclose(state, expected, rtol=1e-12)


def test_variables_and_glorot_default():
  tf.random.set_seed(0)
  gru = snt.GRU(32, name="gru_vars")
  gru(tf.ones([1, 64]), gru.initial_state(1))
  assert {v.name: v.shape.as_list() for v in gru.variables} == {
      "gru_vars/w_i:0": [64, 96], "gru_vars/w_h:0": [32, 96],
      "gru_vars/b:0": [96]}
  limit = np.sqrt(6 / (64 + 96))  # Glorot uniform.
  w_i = gru.input_to_hidden.numpy()
  assert np.abs(w_i).max() <= limit
  np.testing.assert_allclose(np.std(w_i), limit / np.sqrt(3), rtol=0.05)


def test_matches_sonnet():
  snt2 = rc.sonnet()
  theirs, ours = snt2.GRU(5), snt.GRU(5)
  rc.assert_steps_match(theirs, ours, [3, 4], theirs.initial_state(3))


def test_state_errors():
  gru = snt.GRU(5, name="gru_state")
  with pytest.raises(ValueError, match=r"GRU 'gru_state' expects prev_state "
                     r"of shape \[B, 5\], got \[3, 6\]"):
    gru(tf.ones([3, 4]), tf.zeros([3, 6]))
  with pytest.raises(ValueError, match="expects prev_state to be"):
    gru(tf.ones([3, 4]), [tf.zeros([3, 5])])
  with pytest.raises(ValueError, match="batch size 3 but prev_state with "
                     "batch size 2"):
    gru(tf.ones([3, 4]), tf.zeros([2, 5]))


def test_input_errors():
  gru = snt.GRU(5, name="gru_input")
  with pytest.raises(ValueError, match="GRU 'gru_input' expects a rank-2"):
    gru(tf.ones([3, 2, 4]), gru.initial_state(3))
  gru(tf.ones([3, 4]), gru.initial_state(3))
  with pytest.raises(ValueError, match="built for input size 4, got 7"):
    gru(tf.ones([3, 7]), gru.initial_state(3))
  with pytest.raises(TypeError, match="constructed with dtype float32: inputs "
                     "must have dtype tf.float32, got tf.int32"):
    gru(tf.ones([3, 4], tf.int32), gru.initial_state(3))


def test_constructor_errors():
  with pytest.raises(ValueError, match="GRU: hidden_size must be a positive "
                     "int, got None."):
    snt.GRU(None)
  with pytest.raises(TypeError, match="GRU: dtype must be a floating-point"):
    snt.GRU(3, dtype="int64")
