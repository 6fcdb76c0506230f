"""Tests of sonnet_like/modules/recurrent/unroll.py."""

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from tests import recurrent_common as rc


def _loop(core, inputs, state, sequence_length=None):
  """A plain Python unroll; past its length a sequence repeats its last
  output (zeros if empty) and keeps its state, as in Sonnet 2."""
  outputs = []
  last_out, last_state = None, state
  for t in range(inputs.shape[0]):
    out, new_state = core(inputs[t], last_state)
    if sequence_length is not None:
      done = np.asarray(t >= np.asarray(sequence_length))
      prev_out = np.zeros_like(out) if last_out is None else last_out
      out = np.where(done[:, None], prev_out, out)
      new_state = tf.nest.map_structure(
          lambda o, n: np.where(done[:, None], o, n), last_state, new_state)
    outputs.append(np.asarray(out))
    last_out, last_state = outputs[-1], new_state
  return np.stack(outputs), last_state


@pytest.fixture(name="lstm")
def _lstm():
  lstm = snt.LSTM(4, b_init=snt.initializers.RandomNormal(seed=0))
  lstm(tf.ones([2, 3]), lstm.initial_state(2))
  return lstm


@pytest.mark.parametrize("unroll", [snt.static_unroll, snt.dynamic_unroll])
def test_matches_python_loop(lstm, unroll):
  x = tf.constant(rc.random([6, 2, 3]))
  expected = _loop(lstm, x, lstm.initial_state(2))
  rc.assert_close(unroll(lstm, x, lstm.initial_state(2)), expected,
                  rtol=1e-5, atol=1e-6)
  compiled = tf.function(lambda x: unroll(lstm, x, lstm.initial_state(2)))
  got = compiled(x)
  rc.assert_close(got, expected, rtol=1e-5, atol=1e-6)
  assert isinstance(got[1], snt.LSTMState)


@pytest.mark.parametrize("unroll", [snt.static_unroll, snt.dynamic_unroll])
def test_sequence_length_masking(lstm, unroll):
  x = tf.constant(rc.random([5, 3, 3]))
  lengths = [5, 2, 0]
  outputs, state = unroll(lstm, x, lstm.initial_state(3),
                          sequence_length=tf.constant(lengths))
  expected_outputs, expected_state = _loop(lstm, x, lstm.initial_state(3),
                                           lengths)
  rc.assert_close(outputs, expected_outputs, rtol=1e-5, atol=1e-6)
  rc.assert_close(tuple(state), tuple(expected_state), rtol=1e-5, atol=1e-6)
  # Row 1 stops after 2 steps: its state is the one after step 1, and its
  # output repeats the last one; row 2 never starts.
  alone, alone_state = unroll(lstm, x[:2, 1:2], lstm.initial_state(1))
  rc.assert_close(state.hidden[1], alone_state.hidden[0], atol=1e-6)
  np.testing.assert_allclose(outputs[2:, 1], np.tile(alone[-1], [3, 1]),
                             atol=1e-6)
  assert not np.any(outputs[:, 2]) and not np.any(state.cell[2])


def test_sequence_length_matches_sonnet():
  snt2 = rc.sonnet()
  theirs, ours = snt2.GRU(4), snt.GRU(4)
  x = tf.constant(rc.random([5, 3, 3]))
  lengths = tf.constant([5, 2, 0])
  theirs(x[0], theirs.initial_state(3))
  ours(x[0], ours.initial_state(3))
  rc.copy_variables(theirs, ours)
  for their_unroll, our_unroll in [(snt2.dynamic_unroll, snt.dynamic_unroll),
                                   (snt2.static_unroll, snt.static_unroll)]:
    expected = their_unroll(theirs, x, theirs.initial_state(3),
                            sequence_length=lengths)
    got = our_unroll(ours, x, ours.initial_state(3), sequence_length=lengths)
    rc.assert_close(got, expected, rtol=1e-6, atol=1e-6)


def test_dynamic_equals_static_gradients(lstm):
  x = tf.constant(rc.random([4, 2, 3]))

  def grads(unroll):
    with tf.GradientTape() as tape:
      outputs, state = unroll(lstm, x, lstm.initial_state(2),
                              sequence_length=[4, 3])
      loss = tf.reduce_sum(outputs ** 2) + tf.reduce_sum(state.cell)
    return tape.gradient(loss, lstm.trainable_variables)

  rc.assert_close(grads(snt.dynamic_unroll), grads(snt.static_unroll),
                  rtol=1e-5, atol=1e-6)


def test_nested_inputs_and_outputs():
  class Adder(snt.RNNCore):
    def __call__(self, inputs, prev_state):
      total = prev_state + inputs["a"] + inputs["b"]
      return {"total": total, "pair": (inputs["a"], total)}, total

    def initial_state(self, batch_size):
      return tf.zeros([batch_size, 2])

  core = Adder()
  x = {"a": tf.ones([3, 4, 2]), "b": 2 * tf.ones([3, 4, 2])}
  for unroll in (snt.static_unroll, snt.dynamic_unroll):
    outputs, state = unroll(core, x, core.initial_state(4))
    np.testing.assert_allclose(outputs["total"][:, 0, 0], [3., 6., 9.])
    assert outputs["pair"][0].shape == (3, 4, 2)
    np.testing.assert_allclose(state, 9 * np.ones([4, 2]))


def test_dynamic_unknown_number_of_steps(lstm):
  f = tf.function(lambda x: snt.dynamic_unroll(lstm, x, lstm.initial_state(2)),
                  input_signature=[tf.TensorSpec([None, 2, 3])])
  for steps in (1, 3):
    x = tf.constant(rc.random([steps, 2, 3]))
    rc.assert_close(f(x), _loop(lstm, x, lstm.initial_state(2)), rtol=1e-5,
                    atol=1e-6)
  # The check must come before any read of the empty inputs, every time:
  # without that ordering about 1 call in 100 failed with TensorFlow's
  # "Trying to access element 0 in a list with 0 elements" instead.
  for _ in range(200):
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="at least a single time step"):
      f(tf.zeros([0, 2, 3]))


def test_dynamic_under_xla(lstm):
  x = tf.constant(rc.random([5, 2, 3]))
  f = tf.function(lambda x: snt.dynamic_unroll(lstm, x, lstm.initial_state(2),
                                               sequence_length=[5, 1]),
                  jit_compile=True)
  expected = snt.dynamic_unroll(lstm, x, lstm.initial_state(2),
                                sequence_length=[5, 1])
  rc.assert_close(f(x), expected, rtol=1e-5, atol=1e-6)


def test_static_needs_known_number_of_steps(lstm):
  f = tf.function(lambda x: snt.static_unroll(lstm, x, lstm.initial_state(2)),
                  input_signature=[tf.TensorSpec([None, 2, 3])])
  with pytest.raises(ValueError, match=r"static_unroll: input_sequence must have a "
                     r"statically known number of time steps .* got shape "
                     r"\[None, 2, 3\]. Use dynamic_unroll"):
    f.get_concrete_function()


# --- Bad input. ---


@pytest.mark.parametrize("unroll", [snt.static_unroll, snt.dynamic_unroll])
def test_zero_time_steps(lstm, unroll):
  with pytest.raises(ValueError, match=f"{unroll.__name__}: input_sequence "
                     "must have at least a single time step, got 0"):
    unroll(lstm, tf.zeros([0, 2, 3]), lstm.initial_state(2))


@pytest.mark.parametrize("unroll", [snt.static_unroll, snt.dynamic_unroll])
def test_inconsistent_time_steps(unroll):
  core = snt.VanillaRNN(2)
  x = (tf.zeros([3, 2, 1]), tf.zeros([4, 2, 1]))
  with pytest.raises(ValueError, match=r"tensors must have consistent number "
                     r"of time steps \(axis 0\), got input_sequence\[0\]: 3, input_sequence\[1\]: "
                     "4"):
    unroll(lambda x, s: core(tf.concat(x, -1), s), x, core.initial_state(2))


def test_inconsistent_time_steps_at_run_time():
  core = snt.VanillaRNN(2)
  f = tf.function(
      lambda a, b: snt.dynamic_unroll(lambda x, s: core(tf.concat(x, -1), s),
                                      (a, b), core.initial_state(2)),
      input_signature=[tf.TensorSpec([None, 2, 1])] * 2)
  f(tf.zeros([3, 2, 1]), tf.zeros([3, 2, 1]))
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match=r"input_sequence\[1\] has a different number of "
                     "time steps"):
    f(tf.zeros([3, 2, 1]), tf.zeros([4, 2, 1]))


@pytest.mark.parametrize("unroll", [snt.static_unroll, snt.dynamic_unroll])
def test_inputs_without_batch_axis(lstm, unroll):
  with pytest.raises(ValueError, match=r"input_sequence must have shape "
                     r"\[T, B, \.\.\.\] \(time-major\), got \[5\]"):
    unroll(lstm, tf.zeros([5]), lstm.initial_state(2))


def test_empty_input_sequence(lstm):
  with pytest.raises(ValueError, match="must contain at least one tensor"):
    snt.dynamic_unroll(lstm, (), lstm.initial_state(2))


def test_core_returning_another_state_structure():
  def core(inputs, prev_state):
    return inputs, (prev_state, prev_state)

  with pytest.raises(ValueError, match=r"dynamic_unroll: the core returned "
                     r"a next_state of structure \(\[2, 3\], \[2, 3\]\), but "
                     r"its prev_state was \[2, 3\]"):
    snt.dynamic_unroll(core, tf.zeros([4, 2, 3]), tf.zeros([2, 3]))


def test_bad_sequence_length(lstm):
  x = tf.zeros([4, 2, 3])
  with pytest.raises(ValueError, match="sequence_length has 3 entries but "
                     "the batch size"):
    snt.dynamic_unroll(lstm, x, lstm.initial_state(2), sequence_length=[1, 2,
                                                                        3])
  with pytest.raises(ValueError, match=r"sequence_length must be a \[B\] "
                     "integer tensor"):
    snt.static_unroll(lstm, x, lstm.initial_state(2),
                      sequence_length=[1., 2.])


def test_wrong_initial_state_is_reported_by_the_core(lstm):
  with pytest.raises(ValueError, match=r"LSTM '.*' expects prev_state to be "
                     "LSTMState"):
    snt.dynamic_unroll(lstm, tf.zeros([4, 2, 3]), tf.zeros([2, 4]))
