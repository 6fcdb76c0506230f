"""`population.row_stacks`: a replay buffer's copies stacked as their
members are built, then emptied until a member is asked for."""

import numpy as np
import pytest
import tensorflow as tf

from sonnet_like.scenarios.population import row_stacks
from sonnet_like.scenarios.population import rows


def _buffer(rows_, width, value, dtype=tf.float32):
  return rows.by_rows(tf.Variable(tf.fill([rows_, width],
                                          tf.cast(value, dtype))))


def test_copies_are_stacked_then_emptied_except_the_kept_one():
  stacks = row_stacks.RowStacks("SAC", size=3, keep=0)
  weights = tf.Variable(tf.ones([2]))  # Not by rows: left to the caller.
  copies = []
  for member in range(3):
    copies.append([weights, _buffer(4, 2, member + 1)])
    stacks.take(member, copies[-1])
  assert list(stacks.stacked) == [1]
  np.testing.assert_array_equal(
      stacks.stacked[1].numpy(),
      np.stack([np.full([4, 2], k + 1, np.float32) for k in range(3)]))
  held = [int(tf.shape(c[1].read_value())[0]) for c in copies]
  assert held == [4, 0, 0]
  assert [stacks.released(c[1]) for c in copies] == [False, True, True]
  stacks.refill(copies[2][1], stacks.stacked[1][2])
  assert not stacks.released(copies[2][1])
  np.testing.assert_array_equal(copies[2][1].numpy(), np.full([4, 2], 3.0))


@pytest.mark.parametrize("other", [
    lambda: _buffer(4, 3, 0.0),  # Another shape.
    lambda: _buffer(4, 2, 0, tf.int32),  # Another dtype.
    lambda: tf.Variable(tf.zeros([4, 2])),  # Not by rows.
])
def test_a_member_whose_buffer_differs_is_refused_by_name(other):
  stacks = row_stacks.RowStacks("DQN", size=2, keep=0)
  stacks.take(0, [_buffer(4, 2, 0.0)])
  with pytest.raises(ValueError, match=r"DQN: member 1's build made .* "
                     r"where member 0's made float32\[4, 2\]"):
    stacks.take(1, [other()])
