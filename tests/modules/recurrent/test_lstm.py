"""Tests of sonnet_like/modules/recurrent/lstm.py."""

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from tests import recurrent_common as rc


def _step_and_reference(projection_size=None, dtype=tf.float64):
  lstm = snt.LSTM(5, projection_size=projection_size,
                  b_init=snt.initializers.RandomNormal(seed=3), dtype=dtype)
  x = rc.random([3, 4], seed=1, dtype=dtype.as_numpy_dtype)
  h_size = projection_size or 5
  h = rc.random([3, h_size], seed=2, dtype=dtype.as_numpy_dtype)
  c = rc.random([3, 5], seed=3, dtype=dtype.as_numpy_dtype)
  outputs, state = lstm(x, snt.LSTMState(hidden=h, cell=c))
  projection = None if projection_size is None else lstm.projection.numpy()
  expected = rc.np_lstm_step(x, h, c, lstm.input_to_hidden.numpy(),
                             lstm.hidden_to_hidden.numpy(), lstm.b.numpy(),
                             projection)
  return lstm, outputs, state, expected


@pytest.mark.parametrize("projection_size", [None, 3])
def test_step_matches_numpy(projection_size):
  _, outputs, state, (h, c) = _step_and_reference(projection_size)
  np.testing.assert_allclose(outputs, h, rtol=1e-12)
  np.testing.assert_allclose(state.hidden, h, rtol=1e-12)
  np.testing.assert_allclose(state.cell, c, rtol=1e-12)
  assert isinstance(state, snt.LSTMState)


def test_variables_shapes_and_names():
  lstm = snt.LSTM(5, projection_size=3, name="lstm_shapes")
  lstm(tf.ones([2, 4]), lstm.initial_state(2))
  shapes = {v.name: v.shape.as_list() for v in lstm.variables}
  assert shapes == {"lstm_shapes/w_i:0": [4, 20], "lstm_shapes/w_h:0": [3, 20],
                    "lstm_shapes/b:0": [20], "lstm_shapes/projection:0": [5, 3]}
  assert lstm.input_to_hidden is lstm._w_i
  assert lstm.hidden_to_hidden is lstm._w_h


def test_forget_bias_added_to_forget_gate_only():
  lstm = snt.LSTM(2, forget_bias=2.5, b_init=snt.initializers.Constant(0.5))
  lstm(tf.ones([1, 3]), lstm.initial_state(1))
  np.testing.assert_allclose(lstm.b.numpy(), [.5, .5, 3., 3., .5, .5, .5, .5])


def test_initial_state():
  lstm = snt.LSTM(5, projection_size=2, dtype=tf.float64)
  state = lstm.initial_state(3)
  assert state.hidden.shape == (3, 2) and state.cell.shape == (3, 5)
  assert state.hidden.dtype == tf.float64
  assert not np.any(state.cell.numpy())


@pytest.mark.parametrize("projection_size", [None, 3])
def test_matches_sonnet(projection_size):
  snt2 = rc.sonnet()
  theirs = snt2.LSTM(5, projection_size=projection_size)
  ours = snt.LSTM(5, projection_size=projection_size)
  rc.assert_steps_match(theirs, ours, [3, 4],
                        snt.LSTMState(*theirs.initial_state(3)))


def test_default_initializers_scale_like_sonnet():
  tf.random.set_seed(0)
  lstm = snt.LSTM(64, projection_size=16)
  lstm(tf.ones([1, 256]), lstm.initial_state(1))
  # Normals with stddev 1/sqrt(fan in), truncated at 2 stddevs (which
  # leaves a standard deviation of 0.88 times that).
  for v, fan_in in [(lstm.input_to_hidden, 256), (lstm.hidden_to_hidden, 16),
                    (lstm.projection, 64)]:
    np.testing.assert_allclose(np.std(v.numpy()), .8796 / np.sqrt(fan_in),
                               rtol=0.05)
  assert np.abs(lstm.projection.numpy()).max() <= 2 / 8 + 1e-6


def test_checkpoint_from_sonnet_restores(tmp_path):
  snt2 = rc.sonnet()
  theirs = snt2.LSTM(4, projection_size=2)
  x = tf.constant(rc.random([2, 3]))
  expected, _ = theirs(x, theirs.initial_state(2))
  path = tf.train.Checkpoint(module=theirs).save(str(tmp_path / "ckpt"))
  ours = snt.LSTM(4, projection_size=2)
  status = tf.train.Checkpoint(module=ours).restore(path)
  got, _ = ours(x, ours.initial_state(2))  # Restored when created.
  status.assert_consumed()
  rc.assert_close(got, expected, rtol=1e-6)


# --- Bad input. ---


def test_state_tuple_of_one_tensor():
  lstm = snt.LSTM(4, name="lstm_bad_state")
  with pytest.raises(ValueError, match=r"LSTM 'lstm_bad_state' expects "
                     r"prev_state to be LSTMState\(hidden=\[B, 4\], "
                     r"cell=\[B, 4\]\), got \(\[2, 4\],\)"):
    lstm(tf.ones([2, 3]), (tf.zeros([2, 4]),))


def test_state_plain_tuple_is_rejected():
  lstm = snt.LSTM(4)
  with pytest.raises(ValueError, match="expects prev_state to be LSTMState"):
    lstm(tf.ones([2, 3]), (tf.zeros([2, 4]), tf.zeros([2, 4])))


def test_state_wrong_hidden_size():
  lstm = snt.LSTM(4, projection_size=2)
  state = snt.LSTMState(hidden=tf.zeros([2, 4]), cell=tf.zeros([2, 4]))
  with pytest.raises(ValueError, match=r"expects prev_state.hidden of shape "
                     r"\[B, 2\], got \[2, 4\]"):
    lstm(tf.ones([2, 3]), state)


def test_state_wrong_cell_rank():
  lstm = snt.LSTM(4)
  state = snt.LSTMState(hidden=tf.zeros([2, 4]), cell=tf.zeros([2, 1, 4]))
  with pytest.raises(ValueError, match=r"prev_state.cell of shape \[B, 4\]"):
    lstm(tf.ones([2, 3]), state)


def test_state_wrong_dtype():
  lstm = snt.LSTM(4)
  state = lstm.initial_state(2)._replace(cell=tf.zeros([2, 4], tf.float64))
  with pytest.raises(TypeError, match="prev_state.cell of dtype float32, got "
                     "float64"):
    lstm(tf.ones([2, 3]), state)


def test_state_batch_differs_from_inputs():
  lstm = snt.LSTM(4)
  with pytest.raises(ValueError, match="inputs with batch size 2 but "
                     "prev_state.hidden with batch size 1"):
    lstm(tf.ones([2, 3]), lstm.initial_state(1))


def test_state_batch_differs_at_run_time():
  lstm = snt.LSTM(4)
  f = tf.function(lambda x, s: lstm(x, snt.LSTMState(*s)),
                  input_signature=[tf.TensorSpec([None, 3]),
                                   (tf.TensorSpec([None, 4]),) * 2])
  f(tf.ones([2, 3]), tuple(lstm.initial_state(2)))
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match="different batch sizes"):
    f(tf.ones([2, 3]), tuple(lstm.initial_state(1)))


def test_input_wrong_rank():
  lstm = snt.LSTM(4, name="lstm_rank")
  with pytest.raises(ValueError, match=r"LSTM 'lstm_rank' expects a rank-2 "
                     r"input \[B, input_size\], got shape \(2, 5, 3\)"):
    lstm(tf.ones([2, 5, 3]), lstm.initial_state(2))


def test_input_size_changes():
  lstm = snt.LSTM(4)
  lstm(tf.ones([2, 3]), lstm.initial_state(2))
  with pytest.raises(ValueError, match="was built for input size 3, got 5"):
    lstm(tf.ones([2, 5]), lstm.initial_state(2))


def test_input_dtype_differs_from_dtype_argument():
  lstm = snt.LSTM(4)
  with pytest.raises(TypeError, match="constructed with dtype float32: inputs "
                     "must have dtype tf.float32, got tf.float64"):
    lstm(tf.ones([2, 3], tf.float64), lstm.initial_state(2))


@pytest.mark.parametrize("kwargs, match", [
    (dict(hidden_size=0), "LSTM: hidden_size must be a positive int, got 0."),
    (dict(hidden_size=4, projection_size=-1),
     "LSTM: projection_size must be a positive int, got -1."),
    (dict(hidden_size=4, projection_init=snt.initializers.Zeros()),
     "LSTM: projection_init must be None when projection is not used"),
])
def test_constructor_errors(kwargs, match):
  with pytest.raises(ValueError, match=match):
    snt.LSTM(**kwargs)


def test_constructor_rejects_integer_dtype():
  with pytest.raises(TypeError, match="LSTM: dtype must be a floating-point"):
    snt.LSTM(4, dtype=tf.int32)
