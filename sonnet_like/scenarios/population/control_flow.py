"""Loops and branches that carry a population member's state.

While one member's step is traced (`step.py`), the scenario's objects hold
`MemberVariable`s: a write replaces the tensor a variable holds. A write
inside the body of a `tf.while_loop` or a branch of `tf.cond` would leave
the variable holding a tensor of that inner graph, which means nothing
after the loop. `while_loop` and `cond` here are TensorFlow's, except while
a member's step is traced (`carrying`): then the values of the member's
variables go in as extra loop variables (branch outputs), the body holds
them while it runs, its writes come out with its results, and after the
loop the variables hold what the last iteration (the branch taken) left.

The verdicts of updates made inside (whether each was finite) come out the
same way, as one more loop variable, and join the step's: a member's guard
sees every update of its step, and only its own.

The scenarios' code reaches them through `compiled/carried.py`: a member's
step installs `CARRIER` there, so a solo run calls `tf.while_loop` and
`tf.cond` themselves (its graph does not change) and knows nothing of
members. Outside a member's step they are TensorFlow's too:

    >>> import tensorflow as tf
    >>> int(while_loop(lambda i: i < 3, lambda i: (i + 1,),
    ...                [tf.constant(0)])[0])
    3
"""

import contextlib
import threading
from typing import Any, Callable, Iterator, Sequence

import tensorflow as tf

from sonnet_like.scenarios.population import rows


class _Active(threading.local):
  """What the member step being traced in this thread carries."""

  def __init__(self):
    super().__init__()
    self.variables: list[Any] = []
    self.verdicts: Any = None
    self.depth = 0


_ACTIVE = _Active()


@contextlib.contextmanager
def carrying(variables: Sequence[Any], verdicts: Any = None
             ) -> Iterator[None]:
  """Inside the block, `while_loop` and `cond` carry `variables`' values
  (tensor-valued variables: a member's templates) and the update verdicts
  added to `verdicts` (the traced step's `Verdicts`) inside them."""
  saved = (_ACTIVE.variables, _ACTIVE.verdicts, _ACTIVE.depth)
  _ACTIVE.variables, _ACTIVE.verdicts = list(variables), verdicts
  _ACTIVE.depth += 1
  try:
    yield
  finally:
    _ACTIVE.variables, _ACTIVE.verdicts, _ACTIVE.depth = saved


def active() -> bool:
  """Whether a member's step is being traced (state is carried)."""
  return bool(_ACTIVE.depth and _ACTIVE.variables)


@contextlib.contextmanager
def _held(values: Sequence[tf.Tensor]) -> Iterator[None]:
  """The carried variables hold `values` inside the block, what they held
  before after it."""
  variables = _ACTIVE.variables
  saved = [v.tensor_value for v in variables]
  for variable, value in zip(variables, values):
    variable.tensor_value = value
  try:
    yield
  finally:
    for variable, value in zip(variables, saved):
      variable.tensor_value = value


@contextlib.contextmanager
def _verdicts_of_block() -> Iterator[list[tf.Tensor]]:
  """Collects the verdicts of the updates made inside the block (traced
  into the current, inner graph) instead of the step's."""
  verdicts, found = _ACTIVE.verdicts, []
  if verdicts is None or verdicts.graph is None:
    yield found
    return
  saved = (verdicts.graph, verdicts.flags)
  verdicts.graph, verdicts.flags = tf.compat.v1.get_default_graph(), found
  try:
    yield found
  finally:
    verdicts.graph, verdicts.flags = saved


def _all(flags: Sequence[tf.Tensor]) -> tf.Tensor:
  ok = tf.constant(True)
  for flag in flags:
    ok = tf.logical_and(ok, flag)
  return ok


def _add_verdict(ok: tf.Tensor) -> None:
  verdicts = _ACTIVE.verdicts
  if verdicts is not None and verdicts.graph is not None:
    verdicts.flags.append(ok)


def _values() -> list[tf.Tensor]:
  return [v.tensor_value for v in _ACTIVE.variables]


def _set(values: Sequence[tf.Tensor]) -> None:
  for variable, value in zip(_ACTIVE.variables, values):
    variable.tensor_value = value


def while_loop(cond: Callable[..., Any], body: Callable[..., Any],
               loop_vars: Any, shape_invariants: Any = None,
               parallel_iterations: int = 10,
               maximum_iterations: Any = None,
               name: str | None = None) -> Any:
  """`tf.while_loop`, carrying a member's state inside a population.

  Args and the result are `tf.while_loop`'s (`cond(*loop_vars)`,
  `body(*loop_vars)` for a list or tuple, else with the one variable).
  """
  if not active():
    return tf.while_loop(cond, body, loop_vars,
                         shape_invariants=shape_invariants,
                         parallel_iterations=parallel_iterations,
                         maximum_iterations=maximum_iterations, name=name)
  packed = isinstance(loop_vars, (list, tuple))

  def call(fn, user):
    return fn(*user) if packed else fn(user)

  def carried_cond(user, values, ok):
    del ok
    with _held(values):
      return call(cond, user)

  def carried_body(user, values, ok):
    with _held(values), _verdicts_of_block() as flags:
      out = call(body, user)
      values = _values()
    if packed:  # The loop variables' own structure (a list for a tuple).
      out = tf.nest.pack_sequence_as(loop_vars, tf.nest.flatten(out))
    return out, values, tf.logical_and(ok, _all(flags))

  values = _values()
  invariants = None
  if shape_invariants is not None:
    invariants = (shape_invariants, [v.shape for v in values],
                  tf.TensorShape([]))
  out, values, ok = tf.while_loop(
      carried_cond, carried_body, (loop_vars, values, tf.constant(True)),
      shape_invariants=invariants, parallel_iterations=parallel_iterations,
      maximum_iterations=maximum_iterations, name=name)
  _set(values)
  _add_verdict(ok)
  return out


def cond(pred: Any, true_fn: Callable[[], Any], false_fn: Callable[[], Any],
         name: str | None = None, per_member: bool = False) -> Any:
  """`tf.cond`, carrying a member's state inside a population (the
  branches' outputs must have one structure, as `tf.cond` asks).

  Args:
    pred, true_fn, false_fn, name: `tf.cond`'s.
    per_member: `pred` may differ between members (it reads their state):
      inside a population both branches run and each member's outputs and
      state are selected by its `pred` (`tf.vectorized_map` splits the
      members of a branch taken by some only, and its gradients fail on an
      empty split). Outside a population it changes nothing.
  """
  if not active():
    return tf.cond(pred, true_fn, false_fn, name=name)
  values = _values()
  if per_member:
    return _both_selected(pred, true_fn, false_fn, values)

  try:
    return _carrying_written(pred, true_fn, false_fn, name, values, None)
  except _WrittenByTheOther as other:
    return _carrying_written(pred, true_fn, false_fn, name, values,
                             other.written)


class _WrittenByTheOther(Exception):
  """The branch traced second wrote values the first did not carry out."""

  def __init__(self, written: list[int]):
    super().__init__(written)
    self.written = written


def _carrying_written(pred, true_fn, false_fn, name, values, written):
  """`cond`'s `tf.cond`: the branches carry out the values at `written`
  (indices into `values`), or when None the values the branch traced first
  writes (a branch passes over the others: no switch, merge or identity
  for each of them, which would cost every step as much as the branch's
  ops). The branch traced second raises `_WrittenByTheOther` with both
  branches' writes if it writes one more."""
  retraced = written is not None

  def branch(fn):
    def carried():
      nonlocal written
      with _held(values), _verdicts_of_block() as flags:
        out = fn()
        new = _values()
      mine = [i for i, (a, b) in enumerate(zip(new, values)) if a is not b]
      if written is None:
        written = mine
      elif not set(mine) <= set(written):
        if retraced:  # Tracing again wrote other values: a bug, not a retry.
          raise RuntimeError(
              f"A member's tf.cond branch wrote values {mine} when traced "
              f"again, outside both branches' first writes {written}.")
        raise _WrittenByTheOther(sorted(set(mine) | set(written)))
      return out, [new[i] for i in written], _all(flags)
    return carried

  out, new, ok = tf.cond(pred, branch(true_fn), branch(false_fn), name=name)
  carried = list(values)
  for i, value in zip(written, new):
    carried[i] = value
  _set(carried)
  _add_verdict(ok)
  return out


def _both_selected(pred: Any, true_fn: Callable[[], Any],
                   false_fn: Callable[[], Any],
                   values: Sequence[tf.Tensor]) -> Any:
  """Both branches from `values`; what `pred` chooses of each."""
  results = []
  for fn in (true_fn, false_fn):
    _set(values)
    with _verdicts_of_block() as flags, rows.refused():
      out = fn()
    results.append((out, _values(), _all(flags)))
  (out_t, new_t, ok_t), (out_f, new_f, ok_f) = results
  pred = tf.convert_to_tensor(pred)

  def select(a, b):
    return tf.where(pred, a, b)

  _set([select(a, b) for a, b in zip(new_t, new_f)])
  _add_verdict(select(ok_t, ok_f))
  return tf.nest.map_structure(select, out_t, out_f)


class _MemberCarrier:
  """`carried.Carrier` of a member's step: the loops and branches above,
  and the replay rows of `rows.py`."""

  def while_loop(self, cond_fn, body, loop_vars, **kwargs):
    return while_loop(cond_fn, body, loop_vars, **kwargs)

  def cond(self, pred, true_fn, false_fn, name, varying):
    return cond(pred, true_fn, false_fn, name=name, per_member=varying)

  def gather(self, variable, index):
    return rows.gather(variable, index)

  def scatter(self, variable, index, values):
    rows.scatter(variable, index, values)


CARRIER = _MemberCarrier()
