"""Tests of sonnet_like/modules/recurrent/deep_rnn.py."""

import pytest
import tensorflow as tf

import sonnet_like as snt
from tests import recurrent_common as rc


def _cores():
  return [snt.LSTM(4), snt.GRU(5)]


def test_deep_rnn_chains_layers():
  lstm, gru = _cores()
  linear = snt.Linear(3)
  deep = snt.DeepRNN([lstm, tf.nn.relu, gru, linear])
  x = tf.constant(rc.random([2, 6]))
  state = deep.initial_state(2)
  assert len(state) == 2 and isinstance(state[0], snt.LSTMState)
  outputs, next_state = deep(x, state)
  h1, s1 = lstm(x, state[0])
  h2, s2 = gru(tf.nn.relu(h1), state[1])
  rc.assert_close(outputs, linear(h2), rtol=1e-6)
  rc.assert_close(next_state, (s1, s2), rtol=1e-6)


def test_deep_rnn_without_cores_has_empty_state():
  deep = snt.DeepRNN([snt.Linear(2), tf.nn.relu])
  assert deep.initial_state(3) == ()
  outputs, state = deep(tf.ones([3, 4]), ())
  assert outputs.shape == (3, 2) and state == ()


def test_skip_connections():
  lstm, gru = _cores()
  deep = snt.deep_rnn_with_skip_connections([lstm, gru])
  assert deep.name == "deep_rnn_with_skip_connections"
  x = tf.constant(rc.random([2, 6]))
  outputs, (s1, s2) = deep(x, deep.initial_state(2))
  h1, _ = lstm(x, lstm.initial_state(2))
  h2, expected_s2 = gru(tf.concat([x, h1], -1), gru.initial_state(2))
  rc.assert_close(outputs, tf.concat([h1, h2], -1), rtol=1e-6)
  rc.assert_close(s2, expected_s2, rtol=1e-6)
  last_only = snt.deep_rnn_with_skip_connections([lstm, gru],
                                                 concat_final_output=False)
  outputs, _ = last_only(x, last_only.initial_state(2))
  rc.assert_close(outputs, h2, rtol=1e-6)


def test_residual_connections():
  a, b = snt.GRU(3), snt.VanillaRNN(3)
  deep = snt.deep_rnn_with_residual_connections([a, b])
  x = tf.constant(rc.random([2, 3]))
  outputs, _ = deep(x, deep.initial_state(2))
  h1, _ = a(x, a.initial_state(2))
  h2, _ = b(x + h1, b.initial_state(2))
  rc.assert_close(outputs, x + h1 + h2, rtol=1e-6)


def test_deep_rnn_unrolls():
  deep = snt.DeepRNN(_cores())
  x = tf.constant(rc.random([4, 2, 6]))
  static = snt.static_unroll(deep, x, deep.initial_state(2))
  dynamic = snt.dynamic_unroll(deep, x, deep.initial_state(2))
  rc.assert_close(static, dynamic, rtol=1e-5, atol=1e-6)


def test_matches_sonnet_with_shared_weights():
  snt2 = rc.sonnet()
  theirs = snt2.deep_rnn_with_skip_connections([snt2.LSTM(4), snt2.GRU(5)])
  ours = snt.deep_rnn_with_skip_connections(_cores())
  x = tf.constant(rc.random([2, 6]))
  expected = theirs(x, theirs.initial_state(2))
  ours(x, ours.initial_state(2))
  for mine, their in zip(ours._layers, theirs._layers):
    rc.copy_variables(their, mine)
  rc.assert_close(ours(x, ours.initial_state(2)), expected, rtol=1e-6)


def test_wrong_state():
  deep = snt.DeepRNN(_cores(), name="deep_state")
  with pytest.raises(ValueError, match=r"DeepRNN 'deep_state' expects "
                     r"prev_state to be a tuple with one state per recurrent "
                     r"layer \(2\), got \(LSTMState"):
    deep(tf.ones([2, 6]), deep.initial_state(2)[:1])


def test_residual_needs_matching_sizes():
  deep = snt.deep_rnn_with_residual_connections([snt.GRU(4, name="res_gru")])
  with pytest.raises(ValueError, match=r"a residual connection needs outputs "
                     r"of the same shape as the inputs, got inputs \[2, 3\] "
                     r"and outputs \[2, 4\] from GRU 'res_gru'"):
    deep(tf.ones([2, 3]), deep.initial_state(2))


def test_constructor_errors():
  with pytest.raises(ValueError, match="deep_rnn_with_skip_connections "
                     "requires all layers to be instances of RNNCore, got "
                     "layers"):
    snt.deep_rnn_with_skip_connections([snt.LSTM(2), tf.nn.relu])
  with pytest.raises(ValueError, match="deep_rnn_with_residual_connections "
                     "requires all layers to be instances of RNNCore"):
    snt.deep_rnn_with_residual_connections([snt.Linear(2)])
  with pytest.raises(TypeError, match=r"DeepRNN: layers\[1\] must be an "
                     "RNNCore or a callable, got 3"):
    snt.DeepRNN([snt.LSTM(2), 3])
  with pytest.raises(TypeError, match="DeepRNN: layers must be a list"):
    snt.DeepRNN(snt.LSTM(2))


def test_a_short_state_tuple_is_also_an_index_error_as_in_sonnet():
  deep = snt.DeepRNN([snt.LSTM(4), snt.GRU(3)], name="deep")
  with pytest.raises(IndexError, match="deep"):
    deep(tf.ones([2, 3]), (snt.LSTM(4).initial_state(2),))
