"""Sums of more than two tensors (`AddN`: a gradient's aggregation) in a
population, added in a fixed order.

Grappler's memory optimizer rewrites an `AddN` of more than two inputs
that lies on the graph's peak memory into additions to a temporary
variable in the order its inputs become ready, so the sum rounds
differently from run to run. A ten-member SAC HalfCheetah population's
aggregated gradients are that large (two members' are not): two runs of
it parted at their first update. `convert` makes a vectorised `AddN` the
additions the kernel makes, in its order (`kernel_order`), as `AddV2`s:
the memory optimizer leaves them alone, and a member's sum has the bits
of its solo run's `AddN` (grappler's arithmetic optimizer regroups a
long sum the same way in both).
"""

from typing import Any, Sequence

import tensorflow as tf

from sonnet_like.core.tf_private import pfor


def kernel_order(parts: Sequence[tf.Tensor]) -> tf.Tensor:
  """`tf.add_n(parts)` added as TensorFlow's CPU `AddN` kernel adds: the
  first `n % 8` inputs (8 or 9 when that is 0 or 1) from the left, then
  each further group of 8 summed from the left and added to the total."""
  def from_left(group):
    total = group[0]
    for part in group[1:]:
      total = tf.math.add(total, part)
    return total

  first = {0: 8, 1: 9}.get(len(parts) % 8, len(parts) % 8)
  total = from_left(parts[:first])
  for start in range(first, len(parts), 8):
    total = tf.math.add(total, from_left(parts[start:start + 8]))
  return total


def convert(pfor_input: Any) -> list[pfor.WrappedTensor]:
  """The vectorised `AddN` of `pfor_input`, in `kernel_order`."""
  count = len(pfor.inputs(pfor_input))
  pfor.stack_inputs(pfor_input, list(range(count)))
  return [pfor.wrap(kernel_order(
      [pfor.stacked_input(pfor_input, i) for i in range(count)]), True)]
