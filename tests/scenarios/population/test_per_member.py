"""`core.per_member`: ops pfor cannot vectorise, made once per member
instead of in a `While` over the members."""

import numpy as np
import tensorflow as tf

from sonnet_like.scenarios.updates import updater


def _loops_and_norms(clip):
  """The loop ops in the graph of `clip` vectorised over 3 members'
  gradients, and each member's norm from it."""
  grads = tf.constant(np.arange(3 * 4 * 5, dtype=np.float32).reshape(
      3, 4, 5) / 7.0)

  def member(grad):
    return clip([grad, 2.0 * grad], 1.0)[1]

  compiled = tf.function(lambda: tf.vectorized_map(member, grads))
  graph = compiled.get_concrete_function().graph
  loops = [op.type for op in graph.get_operations()
           if op.type in ("While", "StatelessWhile")]
  return loops, compiled().numpy(), grads


def test_clipping_in_a_population_runs_no_loop_over_the_members():
  loops, norms, grads = _loops_and_norms(updater.clip_by_global_norm)
  assert not loops
  for i in range(3):  # Each member's norm is its solo run's, bit for bit.
    solo = tf.function(lambda g: updater.clip_by_global_norm(
        [g, 2.0 * g], 1.0)[1])(grads[i])
    assert norms[i] == solo.numpy()


def test_tensorflows_l2_loss_alone_would_loop_over_the_members():
  def unmarked(grads, clip_norm):
    norm = tf.sqrt(2.0 * tf.add_n([tf.nn.l2_loss(g) for g in grads]))
    return grads, norm * clip_norm

  loops, _, _ = _loops_and_norms(unmarked)
  assert loops  # pfor's fallback: why `clip_by_global_norm` marks its ops.
