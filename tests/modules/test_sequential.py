"""Tests for sonnet_like/modules/sequential.py."""

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt


def test_applies_layers_in_order():
  seq = snt.Sequential([lambda x: x + 1, lambda x: x * 10, tf.negative])
  assert seq(tf.constant(2.)).numpy() == -30.


def test_first_layer_gets_all_arguments():
  calls = []

  def first(x, a, b=0):
    calls.append((a, b))
    return x + a + b

  seq = snt.Sequential([first, lambda x: x * 2])
  assert seq(1, 2, b=3) == 12
  assert calls == [(2, 3)]


def test_matches_hand_written_network():
  seq = snt.Sequential([snt.Linear(4), tf.nn.relu, snt.Linear(2)],
                       name="seq")
  x = tf.random.normal([3, 5])
  out = seq(x)
  l0, l1 = seq._layers[0], seq._layers[2]  # pylint: disable=protected-access
  expected = tf.nn.relu(x @ l0.w + l0.b) @ l1.w + l1.b
  np.testing.assert_allclose(out, expected, rtol=1e-6)
  assert len(seq.trainable_variables) == 4


def test_empty_is_identity():
  x = tf.ones([2])
  assert snt.Sequential()(x) is x
  assert snt.Sequential([])(x) is x


def test_stateless_layers_have_no_variables_as_in_sonnet():
  # Sonnet 2 raises for every module without variables (allow_empty_variables
  # says that is expected).
  with pytest.raises(ValueError, match="does not currently contain any"):
    snt.Sequential([tf.nn.relu, snt.Flatten()]).variables  # pylint: disable=pointless-statement
  assert snt.allow_empty_variables(snt.Sequential()).trainable_variables == ()


def test_unbuilt_stateful_layer_keeps_the_helpful_error():
  seq = snt.Sequential([snt.Linear(3), tf.nn.relu])
  with pytest.raises(ValueError, match="does not currently contain any variables"):
    seq.variables  # pylint: disable=pointless-statement


def test_accepts_any_iterable():
  seq = snt.Sequential(f for f in [tf.abs, tf.sqrt])
  assert seq(tf.constant(-4.)).numpy() == 2.


def test_non_callable_layer():
  with pytest.raises(TypeError, match="Sequential: layers must all be "
                     "callable, got 3 at index 1."):
    snt.Sequential([tf.nn.relu, 3])
