"""Variables by rows in a population (`population.rows`): a member's step
reads its rows from the stacked variable (one gather for every member, no
loop over them), sees the rows it wrote, and its writes land after the
map for the members whose step counts."""

import numpy as np
import pytest
import tensorflow as tf

from sonnet_like.scenarios.population import members as members_lib
from sonnet_like.scenarios.population import rows

MEMBERS, CAPACITY = 3, 5


def _stacked():
  return tf.Variable(tf.reshape(tf.range(MEMBERS * CAPACITY * 2,
                                         dtype=tf.float32),
                                [MEMBERS, CAPACITY, 2]))


def _template():
  with members_lib.member_variables():
    return rows.by_rows(tf.Variable(tf.zeros([CAPACITY, 2])))


def test_a_member_reads_its_own_rows_and_those_it_wrote():
  stacked, template = _stacked(), _template()

  @tf.function
  def step():
    def member_step(member):
      with rows.kept([template], [stacked], member) as written:
        rows.scatter(template, tf.stack([member, 4]),
                     tf.fill([2, 2], -1.0 - tf.cast(member, tf.float32)))
        read = rows.gather(template, tf.constant([[0, 1], [4, 2]]))
        found = [list(w) for w in written]
      return read, found

    return tf.vectorized_map(member_step, tf.range(MEMBERS))

  read, written = step()
  before = stacked.numpy()
  asked = np.array([[0, 1], [4, 2]])
  for m in range(MEMBERS):
    expected = before[m][asked]  # Its own rows, as the step began...
    expected[np.isin(asked, [m, 4])] = -1.0 - m  # ...but those it wrote.
    np.testing.assert_array_equal(read[m], expected)
  [[(index, new)]] = written
  assert index.shape == (MEMBERS, 2) and new.shape == (MEMBERS, 2, 2)
  graph = step.get_concrete_function().graph
  # tf.vectorized_map's own conversion of a gather from a variable loops
  # over the members (a While); ours is one gather of every member's rows.
  assert "While" not in {op.type for op in graph.get_operations()}


def test_writes_land_for_the_members_whose_step_counts():
  stacked = _stacked()
  before = stacked.numpy()
  index = tf.constant([[1], [1], [3]])
  new = -tf.ones([MEMBERS, 1, 2])
  rows.write(stacked, [(index, new)], tf.constant([True, False, True]))
  after = stacked.numpy()
  expected = before.copy()
  expected[0, 1] = expected[2, 3] = -1.0
  np.testing.assert_array_equal(after, expected)


def test_reading_whole_or_writing_in_a_loop_is_refused_by_name():
  stacked, template = _stacked(), _template()

  @tf.function
  def whole():
    with rows.kept([template], [stacked], tf.constant(0)):
      return tf.reduce_sum(template)

  with pytest.raises(ValueError, match="read by rows .* not whole"):
    whole()

  @tf.function
  def in_a_loop():
    with rows.kept([template], [stacked], tf.constant(0)):
      def body(i):
        rows.scatter(template, tf.constant([0]), tf.zeros([1, 2]))
        return (i + 1,)
      return tf.while_loop(lambda i: i < 2, body, [tf.constant(0)])

  with pytest.raises(ValueError, match="written by rows only in the step"):
    in_a_loop()
