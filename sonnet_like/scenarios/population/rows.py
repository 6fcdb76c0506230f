"""Variables read and written by rows (a replay buffer's storage), in a
population.

A population passes each member's values through its step (`step.py`),
and there a write makes a new tensor: one transition added to a replay
buffer would copy the whole buffer every step, and so would reading it
whole once a row was written in place (TensorFlow then copies a variable
on each whole read). A variable marked `by_rows` is neither read whole nor
carried: inside a member's step `gather` reads the member's rows straight
from the stacked variable, with the rows written this step laid over
them, and `scatter` keeps the rows it writes; the step writes them into
the stacked variable after the map, for the members whose step counts
(`write`).

Outside a population they are `tf.gather` and the variable's
`scatter_nd_update`:

    >>> import tensorflow as tf
    >>> v = by_rows(tf.Variable(tf.zeros([4, 2])))
    >>> scatter(v, tf.constant([1]), tf.ones([1, 2]))
    >>> gather(v, tf.constant([1, 0])).numpy().tolist()
    [[1.0, 1.0], [0.0, 0.0]]
"""

import contextlib
import threading
from typing import Any, Iterator, Sequence

import tensorflow as tf

from sonnet_like.core.tf_private import pfor
from sonnet_like.scenarios.compiled import carried

by_rows = carried.by_rows  # The mark is the compiled layer's.
is_by_rows = carried.is_by_rows


class _Kept:
  """A variable by rows in the member step being traced."""

  def __init__(self, stacked: tf.Variable, member: tf.Tensor):
    self.stacked, self.member = stacked, member
    self.written: list[tuple[tf.Tensor, tf.Tensor]] = []


class _Active(threading.local):
  """The member step being traced in this thread: its variables by rows
  (by id of the template) and its graph."""

  def __init__(self):
    super().__init__()
    self.kept: dict[int, _Kept] = {}
    self.graph: Any = None


_ACTIVE = _Active()


@contextlib.contextmanager
def kept(variables: Sequence[Any], stacked: Sequence[tf.Variable],
         member: tf.Tensor) -> Iterator[list[list[tuple]]]:
  """Inside the block (one member's step, traced in `tf.vectorized_map`;
  `member` its index), `gather` on `variables` (templates) reads rows of
  `stacked` (the population's variables) and `scatter` keeps the rows it
  writes; yields, per variable, the list of (index, rows) written. A
  template read whole inside the block raises."""
  saved = (_ACTIVE.kept, _ACTIVE.graph, [v.tensor_value for v in variables])
  _ACTIVE.kept = {id(v): _Kept(s, member) for v, s in zip(variables,
                                                          stacked)}
  _ACTIVE.graph = tf.compat.v1.get_default_graph()
  for variable in variables:
    variable.tensor_value = None  # `MemberVariable` refuses a read.
  try:
    yield [_ACTIVE.kept[id(v)].written for v in variables]
  finally:
    _ACTIVE.kept, _ACTIVE.graph, values = saved
    for variable, value in zip(variables, values):
      variable.tensor_value = value


@contextlib.contextmanager
def refused() -> Iterator[None]:
  """Inside the block `scatter` on a kept variable raises (a branch whose
  writes are chosen per member after it ran)."""
  saved = _ACTIVE.graph
  _ACTIVE.graph = None
  try:
    yield
  finally:
    _ACTIVE.graph = saved


def scatter(variable: tf.Variable, index: tf.Tensor, rows: tf.Tensor) -> None:
  """Writes `rows` at `index` (`[k]`) of the leading axis."""
  held = _ACTIVE.kept.get(id(variable))
  if held is None:
    variable.scatter_nd_update(index[:, None], rows)
    return
  if tf.compat.v1.get_default_graph() is not _ACTIVE.graph:
    raise ValueError(
        f"population: {variable.name} is written by rows only in the step "
        "itself, not inside a tf.while_loop or tf.cond of it (the step's "
        "loops and branches carry only the other variables).")
  held.written.append((index, rows))


def gather(variable: tf.Variable, index: tf.Tensor) -> tf.Tensor:
  """The rows at `index` (any shape) of the leading axis."""
  held = _ACTIVE.kept.get(id(variable))
  if held is None:
    return tf.gather(variable, index)
  member = tf.fill(tf.shape(index), tf.cast(held.member, index.dtype))
  rows = tf.raw_ops.ResourceGatherNd(
      resource=held.stacked.handle, indices=tf.stack([member, index], -1),
      dtype=held.stacked.dtype)
  pfor.set_converter(rows.op, _gather_of_every_member)
  for at, new in held.written:  # In order: a later write wins.
    match = tf.equal(index[..., None], tf.cast(at, index.dtype))
    hit = tf.reduce_any(match, axis=-1)
    which = tf.argmax(tf.cast(match, tf.int32), axis=-1)
    for _ in range(rows.shape.rank - index.shape.rank):
      hit = hit[..., None]
    rows = tf.where(hit, tf.gather(new, which), rows)
  return rows


def _gather_of_every_member(pfor_input: Any) -> Any:
  """`tf.vectorized_map`'s conversion of the gather above: one gather of
  every member's indices (its own would loop over the members)."""
  resource = pfor.unstacked_input(pfor_input, 0)
  pfor.stack_inputs(pfor_input, [1])
  at = pfor.stacked_input(pfor_input, 1)  # (member, row) pairs.
  dtype = pfor.attr(pfor_input, "dtype")
  if not pfor.every_iteration(pfor_input):  # Some members (a branch).
    return pfor.wrap(tf.raw_ops.ResourceGatherNd(
        resource=resource, indices=at, dtype=dtype), True)
  # Every member in order: member m's rows are row m's.
  return pfor.wrap(_rows_of_every_member(resource, at[..., 1], dtype), True)


def _rows_of_every_member(handle: tf.Tensor, index: tf.Tensor,
                          dtype: tf.DType) -> tf.Tensor:
  """Row `index[m, ...]` of member m of the stacked variable behind
  `handle`, for every member m: a gather XLA compiles, unlike
  `tf.gather_nd`'s of a variable."""
  return tf.raw_ops.ResourceGather(resource=handle, indices=index,
                                   batch_dims=1, dtype=dtype)


def write(stacked: tf.Variable, written: Sequence[tuple[tf.Tensor,
                                                        tf.Tensor]],
          counts: tf.Tensor) -> None:
  """Writes the rows every member's step wrote (`written`, stacked on the
  member axis: index `[members, k]`, rows `[members, k, ...]`) into the
  stacked variable, for the members whose step `counts` (`[members]`)."""
  for index, rows in written:
    index = tf.cast(index, tf.int32)
    member = tf.broadcast_to(tf.range(tf.shape(index)[0])[:, None],
                             tf.shape(index))
    keep = tf.reshape(counts, [-1] + [1] * (rows.shape.rank - 1))
    stacked.scatter_nd_update(tf.stack([member, index], axis=-1), tf.where(
        keep, rows, _rows_of_every_member(stacked.handle, index,
                                          stacked.dtype)))
