"""Loops, branches and row storage of a traced step, as its runner needs.

A scenario's traced code (the RL loops, a replay buffer) calls these where
it would call `tf.while_loop`, `tf.cond`, `tf.gather` and a variable's
`scatter_nd_update`. They are TensorFlow's own unless the runner of the
step being traced installed a `Carrier` (`carried_by`): a runner whose
variables hold plain tensors while the step is traced must carry them
through loops and branches itself (the population's runner does,
`population/control_flow.py`). Nothing here knows which runner it serves:

    >>> import tensorflow as tf
    >>> int(while_loop(lambda i: i < 3, lambda i: (i + 1,),
    ...                [tf.constant(0)])[0])
    3
"""

import contextlib
import threading
from typing import Any, Callable, Iterator, Protocol

import tensorflow as tf

_BY_ROWS = "_sonnet_like_by_rows"


class Carrier(Protocol):
  """What a runner installs to carry its state through a traced step."""

  def while_loop(self, cond: Callable[..., Any], body: Callable[..., Any],
                 loop_vars: Any, **kwargs: Any) -> Any: ...

  def cond(self, pred: Any, true_fn: Callable[[], Any],
           false_fn: Callable[[], Any], name: str | None,
           varying: bool) -> Any: ...

  def gather(self, variable: tf.Variable, index: tf.Tensor) -> tf.Tensor: ...

  def scatter(self, variable: tf.Variable, index: tf.Tensor,
              rows: tf.Tensor) -> None: ...


class _Installed(threading.local):
  carrier: Carrier | None = None


_INSTALLED = _Installed()


@contextlib.contextmanager
def carried_by(carrier: Carrier) -> Iterator[None]:
  """Inside the block (a step being traced in this thread) the functions
  below are `carrier`'s."""
  saved, _INSTALLED.carrier = _INSTALLED.carrier, carrier
  try:
    yield
  finally:
    _INSTALLED.carrier = saved


def while_loop(cond: Callable[..., Any], body: Callable[..., Any],
               loop_vars: Any, **kwargs: Any) -> Any:
  """`tf.while_loop` (its arguments, `shape_invariants`,
  `maximum_iterations`, ..., and its result), through the carrier."""
  carrier = _INSTALLED.carrier
  if carrier is None:
    return tf.while_loop(cond, body, loop_vars, **kwargs)
  return carrier.while_loop(cond, body, loop_vars, **kwargs)


def cond(pred: Any, true_fn: Callable[[], Any], false_fn: Callable[[], Any],
         name: str | None = None, varying: bool = False) -> Any:
  """`tf.cond`, through the carrier (the branches' outputs must share one
  structure, as `tf.cond` asks).

  Args:
    pred, true_fn, false_fn, name: `tf.cond`'s.
    varying: `pred` reads state that a runner may hold several copies of
      (a vectorized runner then runs both branches and selects).
  """
  carrier = _INSTALLED.carrier
  if carrier is None:
    return tf.cond(pred, true_fn, false_fn, name=name)
  return carrier.cond(pred, true_fn, false_fn, name, varying)


def by_rows(variable: tf.Variable) -> tf.Variable:
  """Marks `variable` as storage of rows on its leading axis, read with
  `gather` and written with `scatter` only (a replay buffer); returns it."""
  setattr(variable, _BY_ROWS, True)
  return variable


def is_by_rows(variable: Any) -> bool:
  return getattr(variable, _BY_ROWS, False)


def gather(variable: tf.Variable, index: tf.Tensor) -> tf.Tensor:
  """The rows at `index` (any shape) of the leading axis."""
  carrier = _INSTALLED.carrier
  if carrier is None:
    return tf.gather(variable, index)
  return carrier.gather(variable, index)


def scatter(variable: tf.Variable, index: tf.Tensor, rows: tf.Tensor) -> None:
  """Writes `rows` at `index` (`[k]`) of the leading axis."""
  carrier = _INSTALLED.carrier
  if carrier is None:
    variable.scatter_nd_update(index[:, None], rows)
  else:
    carrier.scatter(variable, index, rows)
