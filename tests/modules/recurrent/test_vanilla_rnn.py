"""Tests of sonnet_like/modules/recurrent/vanilla_rnn.py."""

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from tests import recurrent_common as rc


@pytest.mark.parametrize("activation, np_activation", [
    (tf.tanh, np.tanh), (tf.nn.relu, lambda x: np.maximum(x, 0))])
def test_step_matches_numpy(activation, np_activation):
  rnn = snt.VanillaRNN(5, activation=activation, dtype=tf.float64,
                       b_init=snt.initializers.RandomNormal(seed=1))
  x, h = rc.random([3, 4], 1, np.float64), rc.random([3, 5], 2, np.float64)
  outputs, state = rnn(x, h)
  expected = np_activation(x @ rnn.input_to_hidden.numpy() +
                           h @ rnn.hidden_to_hidden.numpy() + rnn._b.numpy())
  np.testing.assert_allclose(outputs, expected, rtol=1e-12)
  assert outputs is state


def test_variables_and_initial_state():
  rnn = snt.VanillaRNN(5, name="vanilla_vars")
  state = rnn.initial_state(3)
  assert state.shape == (3, 5) and not np.any(state.numpy())
  rnn(tf.ones([3, 4]), state)
  assert {v.name: v.shape.as_list() for v in rnn.variables} == {
      "vanilla_vars/b:0": [5],
      "vanilla_vars/input_to_hidden/w:0": [4, 5],
      "vanilla_vars/hidden_to_hidden/w:0": [5, 5]}


def test_matches_sonnet():
  snt2 = rc.sonnet()
  theirs, ours = snt2.VanillaRNN(5), snt.VanillaRNN(5)
  rc.assert_steps_match(theirs, ours, [3, 4], theirs.initial_state(3))


def test_wrong_state_size():
  rnn = snt.VanillaRNN(5, name="vanilla_state")
  with pytest.raises(ValueError, match=r"VanillaRNN 'vanilla_state' expects "
                     r"prev_state of shape \[B, 5\], got \[3, 4\]"):
    rnn(tf.ones([3, 4]), tf.zeros([3, 4]))


def test_state_structure():
  rnn = snt.VanillaRNN(5)
  with pytest.raises(ValueError, match=r"expects prev_state to be \[B, 5\], "
                     r"got \(\[3, 5\],\)"):
    rnn(tf.ones([3, 4]), (tf.zeros([3, 5]),))


def test_input_rank_and_size():
  rnn = snt.VanillaRNN(5)
  with pytest.raises(ValueError, match=r"expects a rank-2 input"):
    rnn(tf.ones([3]), rnn.initial_state(3))
  rnn(tf.ones([3, 4]), rnn.initial_state(3))
  with pytest.raises(ValueError, match="built for input size 4, got 2"):
    rnn(tf.ones([3, 2]), rnn.initial_state(3))


def test_dtype_and_constructor_errors():
  with pytest.raises(TypeError, match="constructed with dtype float32"):
    snt.VanillaRNN(2)(tf.ones([1, 2], tf.float16), tf.zeros([1, 2]))
  with pytest.raises(ValueError, match="VanillaRNN: hidden_size must be a "
                     "positive int, got 2.5."):
    snt.VanillaRNN(2.5)
  with pytest.raises(TypeError, match="VanillaRNN: activation must be "
                     "callable"):
    snt.VanillaRNN(2, activation="tanh")
