"""A population's storage by rows (replay buffers), held once.

Each member's build makes its own copy of a variable by rows (`rows.py`)
at full size. Stacking the copies only once every member is built held
each buffer twice: ten SAC members' 1M-row buffers are 1.7 GB, and their
copies 1.7 GB more. Here a copy's rows go into the stacked variable as soon
as its member is built, and the copy gives its storage back: it holds no
rows until its member is asked for (`Members.member(i)` refills it). The
view's copy, which `member_in` loads for every member, keeps its storage.
A copy that is not a plain resource variable (a distributed one) is
stacked with the others, as any other variable.
"""

from typing import Any, Sequence

import tensorflow as tf

from sonnet_like.scenarios.population import rows

MISMATCH_ERROR = (
    "{owner}: member {member}'s build made {name} as {got}, where member "
    "0's made {expected} (storage by rows, a replay buffer's); a population "
    "needs build() to make the same variables for every member.")


def _plain(variable: tf.Variable) -> bool:
  """What `tf.Variable(...)` makes eagerly on one device: not a
  distributed, mixed-precision or tensor-holding variable."""
  return type(variable).__name__ == "ResourceVariable"


def _described(variable: tf.Variable) -> str:
  """Its dtype and shape, and what makes it unlike a plain one by rows."""
  kind = "" if _plain(variable) else f" ({type(variable).__name__})"
  by_rows = "" if rows.is_by_rows(variable) else " not by rows"
  return f"{variable.dtype.name}{variable.shape.as_list()}{kind}{by_rows}"


class RowStacks:
  """The stacked variables by rows, filled member by member.

  Args:
    owner: The scenario's name, for errors.
    size: How many members.
    keep: The member whose copy keeps its storage (the view).
  """

  def __init__(self, owner: str, size: int, keep: int):
    self.owner, self.size, self.keep = owner, size, keep
    self.stacked: dict[int, tf.Variable] = {}  # By position in the state.
    self._released: set[Any] = set()  # `ref()`s of the emptied copies.

  def take(self, member: int, variables: Sequence[tf.Variable]) -> None:
    """Member `member`'s copies (its state, in order): those by rows go
    into their stacked variables, and give their storage back."""
    for j, variable in enumerate(variables):
      if member == 0 and rows.is_by_rows(variable) and _plain(variable):
        self.stacked[j] = tf.Variable(
            tf.zeros([self.size, *variable.shape], variable.dtype),
            trainable=False,
            name=variable.name.split(":")[0].replace("/", "_"))
      stacked = self.stacked.get(j)
      if stacked is None:
        continue
      if not (rows.is_by_rows(variable) and _plain(variable) and
              stacked.shape[1:] == variable.shape and
              stacked.dtype == variable.dtype):
        raise ValueError(MISMATCH_ERROR.format(
            owner=self.owner, member=member, name=variable.name,
            got=_described(variable),
            expected=f"{stacked.dtype.name}{stacked.shape[1:].as_list()}"))
      # By rows: slicing the variable would read it whole, and the held
      # read would make the write copy all members' storage.
      stacked.scatter_nd_update([[member]], variable.read_value()[None])
      if member != self.keep:
        # No rows, the same dtype and rank; the shape is the runtime's
        # only (`refill` writes full rows back).
        tf.raw_ops.AssignVariableOp(
            resource=variable.handle, validate_shape=False,
            value=tf.zeros([0, *variable.shape[1:]], variable.dtype))
        self._released.add(variable.ref())

  def released(self, variable: tf.Variable) -> bool:
    """Whether `variable` (a copy) holds no rows now."""
    return variable.ref() in self._released

  def refill(self, variable: tf.Variable, value: tf.Tensor) -> None:
    """An emptied copy takes `value` (its member's rows) and keeps it."""
    tf.raw_ops.AssignVariableOp(resource=variable.handle, value=value,
                                validate_shape=False)
    self._released.discard(variable.ref())
