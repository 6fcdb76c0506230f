"""Tests of sonnet_like/modules/recurrent/recurrent_dropout.py."""

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from tests import recurrent_common as rc


def test_returns_train_core_and_shared_test_core():
  train, test = snt.lstm_with_recurrent_dropout(4, dropout=0.5,
                                                projection_size=2)
  assert isinstance(test, snt.LSTM)
  x = tf.ones([3, 5])
  train(x, train.initial_state(3))
  assert train.trainable_variables == test.trainable_variables


def test_masks_and_masked_step():
  train, test = snt.lstm_with_recurrent_dropout(50, dropout=0.25, seed=1)
  core_state, masks = train.initial_state(8)
  assert masks.cell is None
  values = np.unique(masks.hidden.numpy())
  np.testing.assert_allclose(values, [0., 1 / 0.75], rtol=1e-6)
  assert 0.1 < np.mean(masks.hidden.numpy() == 0) < 0.4
  # The wrapper runs the test core on the masked previous hidden state.
  start = snt.LSTMState(hidden=tf.constant(rc.random([8, 50])),
                        cell=tf.constant(rc.random([8, 50], 1)))
  x = tf.constant(rc.random([8, 3], 2))
  outputs, (next_state, next_masks) = train(x, (start, masks))
  expected, expected_state = test(
      x, start._replace(hidden=start.hidden * masks.hidden))
  rc.assert_close(outputs, expected, rtol=1e-6)
  rc.assert_close(tuple(next_state), tuple(expected_state), rtol=1e-6)
  assert next_masks is masks
  del core_state


@pytest.mark.parametrize("compiled", [False, True])
def test_unrolls_with_none_masks(compiled):
  train, _ = snt.lstm_with_recurrent_dropout(4, dropout=0.5, seed=3)
  x = tf.constant(rc.random([5, 2, 3]))

  def run(x):
    return snt.dynamic_unroll(train, x, train.initial_state(2))

  outputs, (state, masks) = (tf.function(run) if compiled else run)(x)
  assert outputs.shape == (5, 2, 4) and masks.cell is None
  assert state.cell.shape == (2, 4)


def test_bad_dropout_and_state():
  with pytest.raises(ValueError, match=r"lstm_with_recurrent_dropout: "
                     r"dropout must be in the range \[0, 1\), got 1.0."):
    snt.lstm_with_recurrent_dropout(4, dropout=1.0)
  train, test = snt.lstm_with_recurrent_dropout(4)
  with pytest.raises(ValueError, match=r"expects prev_state to be "
                     r"\(core_state, dropout_masks\)"):
    train(tf.ones([2, 3]), test.initial_state(2))
