"""`population.vectorize`: a member's step vectorised without the copy of
it traced for one member, which `tf.vectorized_map` leaves in the graph."""

import numpy as np
import tensorflow as tf

from sonnet_like.scenarios.population import vectorize


def _branches_left(vectorized_map):
  """The result of a member function whose branch reads a variable (so
  TensorFlow runs any copy of it left in the graph), and the branch ops
  of the compiled function's graph other than the vectorised ones."""
  table = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])

  def member(i):
    return tf.cond(tf.reduce_sum(table) > 0, lambda: tf.gather(table, i),
                   lambda: tf.zeros([2]))

  compiled = tf.function(lambda: vectorized_map(member))
  graph = compiled.get_concrete_function().graph
  copies = [op.name for op in graph.get_operations()
            if op.type in ("If", "StatelessIf") and "pfor" not in op.name]
  return compiled().numpy(), copies


def test_the_step_traced_for_one_member_is_not_left_in_the_graph():
  ours, our_copies = _branches_left(
      lambda fn: vectorize.vectorized_map(fn, tf.range(3), 3))
  theirs, their_copies = _branches_left(
      lambda fn: tf.vectorized_map(fn, tf.range(3)))
  np.testing.assert_array_equal(ours, [[1, 2], [3, 4], [5, 6]])
  np.testing.assert_array_equal(ours, theirs)
  assert their_copies == ["loop_body/cond"]  # Run beside the conversion.
  assert not our_copies
