"""The NaN guard's verdicts: what failed where, and the per-call rollback.

The guarded update itself (all-reduce, NaN/Inf check, clipping, the
conditional apply) is each optimizer's `Updater` (`updates/updater.py`); its
verdicts go to the traced step's `FiniteRecorder`, so the engine can stop
or skip exactly at the failing step. With the per-call check
(`nonfinite_check="call"`) the updates are applied unconditionally and only
the losses (and clipping norms) are checked per step: `CallRollback` checks
the updated weights and slots once at the end of each compiled call and
undoes the call if any went non-finite. `nonfinite_error` says what failed
where.
"""

from typing import Any, Iterable, Sequence

import tensorflow as tf

from sonnet_like.core import autograph
from sonnet_like.scenarios.compiled import carried
from sonnet_like.scenarios.updates import updater as updater_lib


NONFINITE_ERROR = (
    "{owner}: non-finite loss or gradient at step {step} (0-based; {done} "
    "steps had completed). The update was not applied and nothing was saved "
    "after it{checkpoint}. Lower the learning rate, clip gradients "
    "(clip_norm=...), check the data, or pass on_nonfinite='skip' to drop such "
    "updates.")

NONFINITE_CALL_ERROR = (
    "{owner}: non-finite loss or gradient at step {where} (0-based; {why}). "
    "That compiled call was undone: the models, optimizers and the rest of "
    "the state are as they were after {start} steps, and nothing was saved "
    "after them{checkpoint}. Lower the learning "
    "rate, clip gradients (clip_norm=...), check the data, or pass "
    "on_nonfinite='skip' to drop such updates (nonfinite_check='step' "
    "checks every update before it is applied).")



class NonFiniteError(FloatingPointError):
  """A loss or gradient was NaN/Inf; `step` is the failing step (0-based)."""

  def __init__(self, message: str, step: int):
    super().__init__(message)
    self.step = step


def nonfinite_error(owner: str, latest: str | None, start: int, count: int,
                    failed_at: int | None) -> NonFiniteError:
  """The error of a compiled call of `count` steps from `start` that was
  not finite.

  Args:
    owner: The scenario's name.
    latest: The last good checkpoint, if any.
    start: Steps completed before the call.
    count: Steps the call was to run.
    failed_at: None with the per-step check (the run stopped before step
      `start`); with the per-call check, the step whose loss was not finite,
      or -1 if only the state at the end of the call was not.
  """
  checkpoint = f"; the last good checkpoint is {latest}" if latest else ""
  if failed_at is None:
    return NonFiniteError(NONFINITE_ERROR.format(
        owner=owner, step=start, done=start, checkpoint=checkpoint), start)
  end = start + count - 1
  if failed_at < 0:
    step, where = start, f"{start} to {end}"
    why = "every loss was finite, the state at the end of the call was not"
  else:
    step, where = failed_at, str(failed_at)
    why = "its loss was not finite"
    if failed_at > start:
      why += (f", or step {failed_at - 1}'s update left a non-finite value "
              "under a finite loss")
  return NonFiniteError(NONFINITE_CALL_ERROR.format(
      owner=owner, where=where, why=why, start=start, end=end,
      checkpoint=checkpoint), step)


# Rows a copy between variables by rows moves at a time (`_copy_by_rows`).
_COPY_BYTES = 32 * 2 ** 20


@autograph.as_written
def _copy_by_rows(source: tf.Variable, target: tf.Variable) -> None:
  """`target` takes `source`'s values, about 32 MB of rows at a time, one
  block after the other, so no tensor of the whole is ever alive."""
  if not source.shape.is_fully_defined():
    target.assign(source)
    return
  rows = int(source.shape[0])
  row_bytes = max(1, source.shape[1:].num_elements() * source.dtype.size)
  block = max(1, _COPY_BYTES // row_bytes)
  done = []
  for start in range(0, rows, block):
    with tf.control_dependencies(done):
      index = tf.range(start, min(start + block, rows))
      done = [target.scatter_nd_update(index[:, None],
                                       tf.gather(source, index))]


@autograph.as_written
def _as_tf_variable(variable: Any) -> Any:
  # A Keras 3 variable wraps a tf.Variable (its `value` on TensorFlow).
  if isinstance(variable, tf.Variable):
    return variable
  inner = getattr(variable, "value", None)
  return inner if isinstance(inner, tf.Variable) else None


@autograph.as_written
def state_variables(objects: Iterable[Any]) -> list[tf.Variable]:
  """Every `tf.Variable` of `objects`, once each, in order.

  An object may be a variable, a `tf.random.Generator`, or anything with
  `variables` (`tf.Module`s, Keras and Sonnet optimizers, Keras models);
  Keras variables are unwrapped. Anything else (an iterator) has none.
  """
  found, seen = [], set()
  for obj in objects:
    if isinstance(obj, tf.random.Generator):
      candidates = [obj.state]
    elif _as_tf_variable(obj) is not None:
      candidates = [obj]
    else:
      try:
        candidates = list(getattr(obj, "variables", ()))
      except ValueError:  # A sonnet_like module with no variables yet.
        candidates = []
    for candidate in candidates:
      variable = _as_tf_variable(candidate)
      if variable is not None and variable.ref() not in seen:
        seen.add(variable.ref())
        found.append(variable)
  return found


def _bytes(variable: tf.Variable) -> int:
  shape = variable.shape
  return (shape.num_elements() * variable.dtype.size
          if shape.is_fully_defined() else 0)


def rows_outweigh_checks(state: Iterable[Any], updates_per_call: int) -> bool:
  """Whether a per-call check would copy more than per-step checks read:
  the storage by rows of `state` (replay buffers, which `CallRollback`
  copies whole each call) against its trainable variables once an update
  (what checking each update reads), over `updates_per_call` updates.

  SAC on HalfCheetah at 100 steps a call, a 1M-row buffer (0.17 GB)
  against 0.9 MB of weights: a learning step took 3.22 ms checked per call
  and 2.28 ms checked per step (RESULTS.md, "Steps per call and the NaN
  check")."""
  variables = state_variables(state)
  rows = sum(_bytes(v) for v in variables if carried.is_by_rows(v))
  weights = sum(_bytes(v) for v in variables if v.trainable)
  return rows > weights * updates_per_call


class CallRollback:
  """Undoes a compiled call in which an update went non-finite.

  The per-call NaN check (`nonfinite_check="call"`). `begin` reads every
  variable of the run's state before the call's first step; while such a
  read is alive TensorFlow gives a variable a new buffer on its first
  write, so the old value survives at the cost of one copy per variable and
  call. A variable read and written by rows (a replay buffer) is copied
  into a backup variable instead, 32 MB of rows at a time: held whole as a
  tensor through the call, a 1M-row buffer put over 205 MB alive in the
  graph, where Grappler's memory optimizer sums a gradient's `AddN` in
  another order, and a run's bits depended on `steps_per_call`. `end`
  checks the steps' verdicts (their losses) and, after the call, the
  variables every update changed (the weights and the optimizers'
  slots; other state may hold Inf or NaN on purpose, as markers). If any is
  not finite, it writes the old values of the whole state back and records
  where it failed in `failed_at`: the failing step when a loss showed it,
  -1 when only the weights did (a gradient went non-finite under a finite
  loss, somewhere in the call).
  """

  def __init__(self, step: tf.Variable):
    self.step = step
    self.failed_at = tf.Variable(-1, dtype=tf.int64, trainable=False,
                                 name="failed_at")
    self.variables: list[tf.Variable] = []
    self._updated: list[Any] = []
    self._backups: dict[Any, tf.Variable] = {}  # By a by-rows one's ref.

  def watch(self, variables: Sequence[Any]) -> None:
    """The state a failed call restores (the step counter with it)."""
    self.variables = state_variables(list(variables) + [self.step])
    self._updated = []
    # A backup each by rows, kept across rebuilds; none for what is gone.
    kept, self._backups = self._backups, {}
    for variable in self.variables:
      ref = variable.ref()
      if carried.is_by_rows(variable):
        self._backups[ref] = kept[ref] if ref in kept else tf.Variable(
            tf.zeros(variable.shape, variable.dtype), trainable=False,
            name="rollback_backup")

  @autograph.as_written
  def updated(self, optimizer: Any, variables: Sequence[Any]) -> None:
    """Traced: an update of `variables` by `optimizer`; `end` checks both."""
    self._updated += [optimizer] + list(variables)

  @autograph.as_written
  def begin(self) -> list[Any]:
    saved = []
    for variable in self.variables:
      backup = self._backups.get(variable.ref())
      if backup is None:
        saved.append(tf.identity(variable))
      else:
        _copy_by_rows(variable, backup)
        saved.append(backup)
    return saved

  @autograph.as_written
  def end(self, saved: Sequence[Any], steps_finite: tf.Tensor
          ) -> tf.Tensor:
    """Whether the call was finite; if not, its changes are undone."""
    checked = [v for v in state_variables(self._updated)
               if v.dtype.is_floating]
    ok = tf.logical_and(steps_finite, updater_lib.all_finite(checked))

    def undo():
      self.failed_at.assign(tf.where(steps_finite, tf.constant(-1, tf.int64),
                                     self.step.read_value()))
      for variable, value in zip(self.variables, saved):
        if variable.ref() in self._backups:  # `value` is its backup.
          _copy_by_rows(value, variable)
        else:
          variable.assign(value)
      return tf.constant(False)

    return tf.cond(ok, lambda: tf.constant(True), undo)


