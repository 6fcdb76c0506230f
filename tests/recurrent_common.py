"""Shared helpers of the recurrent tests: NumPy step references, Sonnet."""

import numpy as np
import tensorflow as tf


def sigmoid(x):
  return 1. / (1. + np.exp(-x))


def np_lstm_step(x, h, c, w_i, w_h, b, projection=None):
  """One LSTM step in NumPy; gates in the order i, f, g, o."""
  i, f, g, o = np.split(x @ w_i + h @ w_h + b, 4, axis=-1)
  c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
  h = sigmoid(o) * np.tanh(c)
  if projection is not None:
    h = h @ projection
  return h, c


def random(shape, seed=0, dtype=np.float32):
  return np.random.default_rng(seed).normal(size=shape).astype(dtype)


def copy_variables(source, target):
  """Assigns `source`'s variables to `target`'s, matched by relative name.

  Names are compared without the modules' own scope (`lstm/w_i:0` and
  `my_lstm/w_i:0` match), so a Sonnet module can feed one of ours.
  """
  def relative(module, v):
    return v.name[len(module.name) + 1:]
  values = {relative(source, v): v for v in source.variables}
  targets = {relative(target, v): v for v in target.variables}
  assert sorted(values) == sorted(targets), (sorted(values), sorted(targets))
  for name, v in targets.items():
    v.assign(values[name])


def sonnet():
  """dm-sonnet, or a skip if it is not installed."""
  import pytest  # pylint: disable=g-import-not-at-top
  return pytest.importorskip("sonnet")


def assert_close(a, b, **kw):
  tf.nest.map_structure(
      lambda x, y: np.testing.assert_allclose(np.asarray(x), np.asarray(y),
                                              **kw), a, b)


def assert_steps_match(theirs, ours, input_shape, state, steps=3, rtol=1e-6):
  """Builds a Sonnet core and ours, gives ours Sonnet's variables, then
  checks `steps` steps of ours from `state` (outputs and next states)
  against Sonnet's from the same state."""
  x = tf.constant(random(input_shape))
  theirs(x, theirs.initial_state(input_shape[0]))
  ours(x, ours.initial_state(input_shape[0]))
  copy_variables(theirs, ours)
  for t in range(steps):
    x = tf.constant(random(input_shape, seed=t))
    expected, their_state = theirs(x, state)
    got, state = ours(x, state)
    assert_close(got, expected, rtol=rtol, atol=1e-6)
    assert_close(tf.nest.flatten(state), tf.nest.flatten(their_state),
                 rtol=rtol, atol=1e-6)
