"""Tests of sonnet_like/modules/recurrent/trainable_state.py."""

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt


def test_tiles_initial_values():
  state = snt.TrainableState(tf.constant([1., 2.]))
  np.testing.assert_array_equal(state(3), [[1., 2.]] * 3)
  assert [v.name for v in state.variables] == [f"{state.name}/state:0"]


def test_for_core_and_variable_names():
  lstm = snt.LSTM(4, projection_size=2)
  state = snt.TrainableState.for_core(lstm, name="start_names")
  value = state(5)
  assert isinstance(value, snt.LSTMState)
  assert value.hidden.shape == (5, 2) and value.cell.shape == (5, 4)
  assert sorted(v.name for v in state.variables) == [
      "start_names/cell:0", "start_names/hidden:0"]


def test_nested_names_match_sonnet():
  snt2 = pytest.importorskip("sonnet")
  values = {"a": tf.zeros([2]), "b": (tf.zeros([1]), tf.ones([3]))}
  ours = snt.TrainableState(values, name="nested_state")
  theirs = snt2.TrainableState(values, name="nested_state")
  assert (sorted(v.name for v in ours.variables) ==
          sorted(v.name for v in theirs.variables))


def test_gradients_sum_over_the_batch():
  lstm = snt.LSTM(3)
  state = snt.TrainableState.for_core(lstm)
  x = tf.random.stateless_normal([4, 2], seed=[1, 2])
  with tf.GradientTape() as tape:
    outputs, _ = lstm(x, state(4))
    loss = tf.reduce_sum(outputs)
  grads = tape.gradient(loss, state.trainable_variables)
  assert all(g is not None for g in grads)
  # Reference: the gradient with respect to a batch of untied initial states,
  # summed over the batch.
  start = state(4)
  with tf.GradientTape() as tape:
    tape.watch(start)
    outputs, _ = lstm(x, start)
    loss = tf.reduce_sum(outputs)
  per_example = tape.gradient(loss, start)
  by_name = {v.name.split("/")[-1][:-2]: g
             for v, g in zip(state.trainable_variables, grads)}
  np.testing.assert_allclose(by_name["hidden"],
                             tf.reduce_sum(per_example.hidden, 0,
                                           keepdims=True), rtol=1e-6)
  np.testing.assert_allclose(by_name["cell"],
                             tf.reduce_sum(per_example.cell, 0,
                                           keepdims=True), rtol=1e-6)


def test_mask_makes_leaves_non_trainable():
  state = snt.TrainableState.for_core(
      snt.LSTM(3), mask=snt.LSTMState(hidden=True, cell=False))
  assert [v.name.split("/")[-1] for v in state.trainable_variables] == [
      "hidden:0"]
  assert len(state.variables) == 2


def test_tensor_batch_size_in_tf_function():
  state = snt.TrainableState(tf.constant([[1., 2.]]))
  f = tf.function(lambda x: state(tf.shape(x)[0]),
                  input_signature=[tf.TensorSpec([None])])
  assert f(tf.zeros([3])).shape == (3, 1, 2)


def test_errors():
  with pytest.raises(ValueError, match="TrainableState: mask must have the "
                     r"structure of initial_values, \(\[2\], \[2\]\), got "
                     r"\(True,\)"):
    snt.TrainableState((tf.zeros([2]), tf.zeros([2])), mask=(True,))
  with pytest.raises(TypeError, match="mask must hold Python bools"):
    snt.TrainableState(tf.zeros([2]), mask=1)
  with pytest.raises(ValueError, match="initial_values must contain at least "
                     "one tensor"):
    snt.TrainableState(())
