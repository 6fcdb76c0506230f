"""scenarios/losses.py: what a loss or metric may be, and in which order."""

import keras
import numpy as np
import tensorflow as tf

from sonnet_like.scenarios import losses


def test_plain_callable_keeps_outputs_then_targets():
  fn = losses.as_per_example("Supervised", "loss_fn",
                             lambda outputs, targets: outputs - targets)
  np.testing.assert_allclose(fn(tf.constant([3.0]), tf.constant([1.0])), [2.0])


def test_keras_function_gets_targets_first():
  fn = losses.as_per_example("Supervised", "loss_fn",
                             keras.losses.mean_squared_error)
  got = fn(tf.constant([[0.0, 2.0]]), tf.constant([[0.0, 0.0]]))
  np.testing.assert_allclose(got, [2.0])


def test_function_without_a_module_is_a_plain_callable():
  namespace = {}  # exec() without __name__: the function's __module__ is None.
  exec("def loss(outputs, targets):\n  return outputs - targets", namespace)  # pylint: disable=exec-used
  assert namespace["loss"].__module__ is None
  fn = losses.as_per_example("Supervised", "loss_fn", namespace["loss"])
  np.testing.assert_allclose(fn(tf.constant([3.0]), tf.constant([1.0])), [2.0])
