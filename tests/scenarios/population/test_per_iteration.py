"""`core.per_iteration` and `lockstep.unconvertible`: ops pfor cannot vectorise, made once per member
instead of in a `While` over the members."""

import numpy as np
import tensorflow as tf
# pylint: disable-next=g-direct-tensorflow-import
from tensorflow.python.ops.parallel_for import pfor

from sonnet_like.scenarios.population import lockstep
from sonnet_like.scenarios.population import lockstep
from sonnet_like.scenarios.population import vectorize
from sonnet_like.scenarios.updates import updater
from tests.scenarios.population import test_supervised_population


def _penalised(grad):
  """A member's clipped norm and a weight penalty (two `L2Loss` users)."""
  _, norm = updater.clip_by_global_norm([grad, 2.0 * grad], 1.0)
  return norm + 1e-3 * tf.nn.l2_loss(grad)


def _loops_and_values(marked):
  """The loop ops of `_penalised` vectorised over 3 members (its graph
  `marked` as a population's step marks it, or not), and its values."""
  grads = tf.constant(np.arange(3 * 4 * 5, dtype=np.float32).reshape(
      3, 4, 5) / 7.0)

  def member(grad):
    value = _penalised(grad)
    if marked:
      lockstep.mark_graph(tf.compat.v1.get_default_graph(), "test", None)
    return value

  compiled = tf.function(lambda: vectorize.vectorized_map(member, grads, 3))
  graph = compiled.get_concrete_function().graph.as_graph_def()
  ops = list(graph.node) + [node for function in graph.library.function
                            for node in function.node_def]
  loops = [op.op for op in ops if op.op in ("While", "StatelessWhile")]
  assert "L2Loss" in {op.op for op in ops}  # Where the graph was looked at.
  return loops, compiled().numpy(), grads


def test_a_marked_step_runs_no_loop_over_the_members():
  loops, values, grads = _loops_and_values(marked=True)
  assert not loops
  solo = tf.function(_penalised)
  for i in range(3):  # Each member's value is its solo run's, bit for bit.
    assert values[i] == solo(grads[i]).numpy()


def test_tensorflows_own_conversion_would_loop_over_the_members():
  loops, _, _ = _loops_and_values(marked=False)
  assert loops  # pfor's fallback for `L2Loss`: why steps are marked.


def test_only_ops_without_a_conversion_that_change_nothing_are_marked():
  graph = tf.function(lambda x, v: (tf.nn.l2_loss(x), tf.matmul(x, x),
                                    v.assign_add(x))).get_concrete_function(
                                        tf.TensorSpec([2, 2]),
                                        tf.Variable(tf.zeros([2, 2]))).graph
  marked = {op.type for op in graph.get_operations()
            if lockstep.unconvertible(op)}
  assert marked == {"L2Loss"}  # Not MatMul (pfor's own), not the assign.


def test_a_users_weight_penalty_in_a_population_is_not_looped(monkeypatch):
  looped = []
  fallback = pfor._fallback_converter  # pylint: disable=protected-access

  def spy(pfor_input, *args, **kwargs):
    looped.append(pfor_input.op_type)
    return fallback(pfor_input, *args, **kwargs)

  monkeypatch.setattr(pfor, "_fallback_converter", spy)
  # A loss with a weight penalty, and clipping.
  scenario, _ = test_supervised_population._penalised_run(population=2)  # pylint: disable=W0212
  assert not looped, looped  # No op of the step left to pfor's loop.
  losses = scenario.history.train["loss"]
  assert losses[-1] < losses[0]  # It trains.
