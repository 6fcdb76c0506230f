"""`ordered_sums`: a population's sums of more than two tensors are
`AddV2`s in the `AddN` kernel's order (which grappler's memory optimizer
cannot reorder), each member's equal to its solo run's `AddN`."""

import numpy as np
import pytest
import tensorflow as tf

from sonnet_like.scenarios.population import lockstep
from sonnet_like.scenarios.population import ordered_sums
from sonnet_like.scenarios.population import vectorize

MEMBERS = 3


def _parts(count):
  """`count` tensors per member whose sum's rounding depends on the order
  (magnitudes 1e-4 to 1e4), `[members, count, 64]`."""
  rng = np.random.default_rng(count)
  return tf.constant(np.stack([
      rng.normal(size=(MEMBERS, 64)) * 10.0 ** rng.uniform(-4, 4)
      for _ in range(count)], axis=1).astype(np.float32))


def _vectorized_sum(parts, marked):
  def member(own):
    total = tf.add_n(tf.unstack(own))
    if marked:
      lockstep.mark_graph(tf.compat.v1.get_default_graph(), "test", None)
    return total

  compiled = tf.function(lambda: vectorize.vectorized_map(member, parts,
                                                          MEMBERS))
  graph = compiled.get_concrete_function().graph.as_graph_def()
  nodes = list(graph.node) + [node for function in graph.library.function
                              for node in function.node_def]
  wide = [node for node in nodes if node.op == "AddN" and len(
      [x for x in node.input if not x.startswith("^")]) > 2]
  return compiled().numpy(), wide


@pytest.mark.parametrize("count", [3, 10, 17, 26])
def test_each_members_sum_is_its_solo_runs_bit_for_bit(count):
  parts = _parts(count)
  values, wide = _vectorized_sum(parts, marked=True)
  assert not wide  # No AddN the memory optimizer could rewrite.
  solo = tf.function(lambda own: tf.add_n(tf.unstack(own)))
  for i in range(MEMBERS):  # Member i's sum is its solo run's.
    np.testing.assert_array_equal(values[i], solo(parts[i]).numpy())


@pytest.mark.parametrize("count", [10, 17, 26])
def test_kernel_order_adds_as_the_kernel_and_the_order_matters(count):
  parts = tf.unstack(_parts(count)[0])  # Eagerly: the kernel itself.
  from_left = parts[0]
  for part in parts[1:]:
    from_left = from_left + part
  kernel = tf.raw_ops.AddN(inputs=parts).numpy()
  assert not np.array_equal(from_left.numpy(), kernel)
  np.testing.assert_array_equal(ordered_sums.kernel_order(parts).numpy(),
                                kernel)


def test_unmarked_the_conversion_keeps_a_wide_add_n():
  _, wide = _vectorized_sum(_parts(3), marked=False)
  assert wide  # pfor's own conversion: what marking replaces.


def test_a_sum_of_lists_keeps_pfors_conversion():
  # pylint: disable-next=g-direct-tensorflow-import
  from tensorflow.python.ops import list_ops
  values = tf.constant(np.arange(12, dtype=np.float32).reshape(MEMBERS, 4))

  def member(own):
    listed = list_ops.tensor_list_from_tensor(own, element_shape=[])
    total = tf.raw_ops.AddN(inputs=[listed] * 3)  # Variants: no AddV2.
    lockstep.mark_graph(tf.compat.v1.get_default_graph(), "test", None)
    return list_ops.tensor_list_stack(total, tf.float32, element_shape=[])

  summed = tf.function(lambda: vectorize.vectorized_map(member, values,
                                                        MEMBERS))()
  np.testing.assert_array_equal(summed.numpy(), 3 * values.numpy())
