"""`RuleOptimizer._step_scalars`: a rule's scalars (hyperparameters cast,
terms of the step count) are made once a step for all parameters of a
dtype, not once a parameter."""

import pytest
import tensorflow as tf

import sonnet_like as snt


def _scalar_ops(make, count):
  """How many `Cast` and `Pow` ops one traced `apply` to `count` float64
  parameters makes (its float32 hyperparameter variables are cast)."""
  optimizer = make()
  ones = tf.ones([2], tf.float64)
  parameters = [tf.Variable(ones) for _ in range(count)]
  optimizer.apply([ones] * count, parameters)  # Slots made.

  @tf.function
  def apply():
    optimizer.apply([ones] * count, parameters)

  graph = apply.get_concrete_function().graph
  return sum(op.type in ("Cast", "Pow") for op in graph.get_operations())


@pytest.mark.parametrize("make", [
    lambda: snt.optimizers.Adam(tf.Variable(0.1)),
    lambda: snt.optimizers.RMSProp(tf.Variable(0.1), momentum=0.5),
    lambda: snt.optimizers.Momentum(tf.Variable(0.1), tf.Variable(0.9))])
def test_scalars_are_made_once_for_all_parameters(make):
  one = _scalar_ops(make, 1)
  assert one > 0  # Where the count is taken.
  assert _scalar_ops(make, 4) == one
