"""A population on several replicas: each replica trains every member on
its share of that member's batch.

A member's step is traced as on one device (`one_device`: no strategy is
current, so an optimizer updates the templates' tensors as in a
one-device population); only its gradients and losses are summed over
the replicas (`summed`). That sum is an op whose conversion by
`tf.vectorized_map` (`_all_reduced`) all-reduces the stacked values:
one all-reduce for every member, in the replica context around the map.
"""

import contextlib
import threading
from typing import Any, Callable, Iterator

import tensorflow as tf

from sonnet_like.core.tf_private import distribute
from sonnet_like.core.tf_private import pfor

NESTED_ERROR = (
    "{owner}: population= on {replicas} replicas sums each member's "
    "gradients over the replicas in the step itself, not inside a "
    "tf.while_loop or tf.cond of it (an update in a tensor loop or `if` of "
    "train_step); make the updates in the step itself (a Python loop), or "
    "train the population on one device.")

_member = threading.local()  # Per replica thread: the traced member step.


@contextlib.contextmanager
def one_device() -> Iterator[None]:
  """Inside the block no strategy is current (the default one's replica
  context), as in a one-device run."""
  with distribute.default_replica_context():
    yield


@contextlib.contextmanager
def member_step(owner: str, member: tf.Tensor, replicas: int
                ) -> Iterator[None]:
  """The block in which a member's step is traced (by `tf.vectorized_map`,
  `member` its index): on one device, `summed` summing over `replicas`
  (`owner`, the scenario's name, for errors)."""
  saved = getattr(_member, "step", None)
  _member.step = (owner, member, replicas, tf.compat.v1.get_default_graph())
  try:
    with one_device():
      yield
  finally:
    _member.step = saved


def summed(values: list[tf.Tensor]) -> list[tf.Tensor]:
  """`values` summed over the replicas when traced in a member's step on
  several replicas (`member_step`); else `values` themselves."""
  step = getattr(_member, "step", None)
  if step is None or not values:
    return values
  owner, member, replicas, graph = step
  if tf.compat.v1.get_default_graph() is not graph:
    raise ValueError(NESTED_ERROR.format(owner=owner, replicas=replicas))
  # The member index makes the op vary per member, so the map converts it
  # even if no value does (a constant gradient is summed too).
  outputs = tf.identity_n(list(values) + [member])
  pfor.set_converter(outputs[0].op, _all_reduced)
  return outputs[:-1]


def _all_reduced(pfor_input: Any) -> list[pfor.WrappedTensor]:
  """`tf.vectorized_map`'s conversion of `summed`: the stacked values
  all-reduced (SUM) across the replicas; the member index passes."""
  members = pfor.iteration_count(pfor_input)
  stacked = []
  for value, is_stacked, _ in pfor.inputs(pfor_input):
    if not is_stacked:  # The same for every member (a constant gradient).
      value = tf.tile(value[tf.newaxis],
                      tf.concat([members, tf.ones_like(tf.shape(value))], 0))
    stacked.append(value)
  context = tf.distribute.get_replica_context()
  reduced = context.all_reduce(tf.distribute.ReduceOp.SUM, stacked[:-1])
  return [pfor.wrap(value, True) for value in list(reduced) + stacked[-1:]]


def swap_leading(value: tf.Tensor) -> tf.Tensor:
  """`value` with its first two axes swapped."""
  return tf.transpose(value, [1, 0] + list(range(2, value.shape.rank)))


class ReplicaBatches:
  """A population's iterator as a multi-replica strategy cuts it: each
  batch with its batch axis first ([batch, members, ...]), so that every
  replica gets a share of every member's batch; or `whole`, every replica
  the whole batch (for a `next_inputs` that draws for the global batch
  and cuts the shares itself). `step.vectorized` takes them back.

  Args:
    iterator: The population's iterator ([members, batch, ...] batches).
    replicas: The strategy's replica count.
    whole: Give every replica the whole batch.
  """

  def __init__(self, iterator: Any, replicas: int, whole: bool):
    self.iterator, self.replicas, self.whole = iterator, replicas, whole

  def __next__(self) -> Any:
    batch = next(self.iterator)
    if self.whole:
      return tf.nest.map_structure(lambda t: tf.stack([t] * self.replicas),
                                   batch)
    return tf.nest.map_structure(swap_leading, batch)


def replica_share(replica: tf.Tensor, replicas: int
                  ) -> Callable[[Any], Any]:
  """`split_for_replicas` in a member's step: `replica`'s share of each
  of the member's global batches."""

  def share(values):
    def cut(value):
      size = tf.shape(value)[0] // replicas
      return value[replica * size:(replica + 1) * size]
    return tf.nest.map_structure(cut, values)

  return share
