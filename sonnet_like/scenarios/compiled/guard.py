"""The NaN guard, with its per-call rollback.

`apply_update` is the guarded optimizer step a traced step makes: it
all-reduces gradients across replicas, checks them (and the loss) for
NaN/Inf, clips them by global norm and applies them with either kind of
optimizer. Its finiteness verdict goes to a `FiniteRecorder`, so the engine
can stop or skip exactly at that step. With the per-call check
(`nonfinite_check="call"`) it applies the update unconditionally and checks
only the loss (and the clipping norm), and `CallRollback` checks the updated
weights and slots once at the end of each compiled call and undoes the call
if any went non-finite: no reduction per gradient and no condition between
the backward pass and the update. `nonfinite_error` says what failed
where.
"""

from typing import Any, Iterable, Sequence

import tensorflow as tf

from sonnet_like.core import autograph
from sonnet_like.scenarios.updates import loss_scale as loss_scale_lib

NONFINITE_POLICIES = ("raise", "skip")

NONFINITE_CHECKS = ("auto", "step", "call")

# "auto" checks once per call from this many updates per call on: the copy
# of the state a call keeps costs about as much as checking a few updates.
CALL_CHECK_MIN_UPDATES = 8

UNUSED_POLICIES = ("warn", "raise", "ignore")

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

UNUSED_VARIABLES = (
    "{owner}: no gradient reached {names}; they are not trained. Remove them "
    "from the variables passed to apply_update, make the loss use them, or "
    "pass unused_variables='ignore' (or 'raise' to make this an error).")


NOT_AN_OPTIMIZER_ERROR = (
    "{owner}: optimizer must have apply_gradients(grads_and_vars) (Keras) or "
    "apply(updates, parameters) (sonnet_like / Sonnet), got {value!r}.")




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


@autograph.as_written
def all_finite(tensors: Sequence[tf.Tensor]) -> tf.Tensor:
  """A scalar bool: every element of every (floating) tensor is finite.

  Checked on the sum of all elements, one reduction per non-scalar tensor:
  NaN and Inf propagate into it. A finite sum that overflows float32 (beyond
  ~3e38) also counts as non-finite, which only happens once training has
  diverged. Kept to as few graph ops as possible: it runs every step.
  """
  def total(t):
    if t.dtype in (tf.float16, tf.bfloat16):  # Their sums overflow early.
      t = tf.cast(t, tf.float32)
    return t if t.shape.rank == 0 else tf.reduce_sum(t)

  sums = [total(t) for t in tensors if t is not None and t.dtype.is_floating]
  if not sums:
    return tf.constant(True)
  if len({x.dtype for x in sums}) > 1:
    sums = [tf.cast(x, tf.float64) for x in sums]
  return tf.math.is_finite(sums[0] if len(sums) == 1 else tf.add_n(sums))


def clip_by_global_norm(grads: Sequence[tf.Tensor], clip_norm: float
                        ) -> tuple[list[tf.Tensor], tf.Tensor]:
  """Scales `grads` so that their global L2 norm is at most `clip_norm`.

  Unlike `tf.clip_by_global_norm`, the squares are summed in float32 (float64
  if a gradient is float64), so float16 gradients do not overflow at a norm
  of ~360 and gradients of mixed precisions can be clipped together.

  Returns:
    The clipped gradients and the global norm. The norm is non-finite exactly
    when a gradient is, or when it exceeds ~1.8e19 in float32: the update's
    NaN/Inf check when clipping is on, at no extra cost.
  """
  wide = (tf.float64 if any(g.dtype == tf.float64 for g in grads)
          else tf.float32)
  halves = [tf.nn.l2_loss(g if g.dtype == wide else tf.cast(g, wide))
            for g in grads]
  norm = tf.sqrt(2.0 * (halves[0] if len(halves) == 1 else tf.add_n(halves)))
  scale = clip_norm / tf.maximum(norm, clip_norm)
  return [g * tf.cast(scale, g.dtype) for g in grads], norm



def apply_to_optimizer(optimizer: Any, grads: Sequence[tf.Tensor],
                       variables: Sequence[tf.Variable]) -> None:
  """Applies `grads` with a Keras (`apply_gradients`) or Sonnet optimizer."""
  if hasattr(optimizer, "apply_gradients"):
    optimizer.apply_gradients(zip(grads, variables))
  elif hasattr(optimizer, "apply"):
    optimizer.apply(list(grads), list(variables))
  else:
    raise TypeError(NOT_AN_OPTIMIZER_ERROR.format(owner="Scenario",
                                                  value=optimizer))



def apply_update(optimizer: Any, grads: Sequence[tf.Tensor | None],
                 variables: Sequence[tf.Variable], *,
                 loss: tf.Tensor | None = None,
                 clip_norm: float | None = None,
                 recorder: Any = None,
                 loss_scale: "loss_scale_lib.DynamicLossScale | None" = None,
                 scale: tf.Tensor | None = None,
                 deferred: bool = False) -> tf.Tensor:
  """Guarded optimizer step, to be called in replica context.

  Args:
    optimizer: A Keras optimizer or a sonnet_like/Sonnet optimizer.
    grads: Gradients of this replica's (globally scaled) loss; None entries
      are dropped with their variables.
    variables: The variables the gradients belong to.
    loss: This replica's loss, included in the NaN/Inf check.
    clip_norm: Clip the (all-reduced) gradients to this global norm.
    recorder: Where to record the finiteness verdict (a
      `step.FiniteRecorder`), if anywhere.
    loss_scale: With `scale`: the gradients are of `loss * scale`. They are
      unscaled (before clipping); an update whose gradients overflow while
      the loss is finite is skipped and `loss_scale` adjusted, and it does
      not count as non-finite unless the scale is already 1.
    scale: The scale the gradients were computed with.
    deferred: Apply the update whatever its values and check only the loss
      (and the clipping norm, which is computed anyway): the gradients are
      checked through the state they leave, by `CallRollback` at the end of
      the compiled call. Not with `loss_scale`.

  Returns:
    A scalar bool tensor, True when the update was finite (or an overflow
    handled by the loss scale).
  """
  pairs = [(g, v) for g, v in zip(grads, variables) if g is not None]
  if not pairs:
    raise ValueError("Scenario: no variable received a gradient; check that "
                     "the loss depends on the variables passed to the update.")
  grads = [tf.convert_to_tensor(g) for g, _ in pairs]
  variables = [v for _, v in pairs]
  strategy = tf.distribute.get_strategy()
  replicas = strategy.num_replicas_in_sync
  losses = [] if loss is None else [loss]
  if replicas > 1:
    context = tf.distribute.get_replica_context()
    grads = context.all_reduce(tf.distribute.ReduceOp.SUM, grads)
    losses = [context.all_reduce(tf.distribute.ReduceOp.SUM, x)
              for x in losses]
  if loss_scale is None:
    if clip_norm is None:
      # Deferred: the gradients are checked through the state they leave.
      ok = all_finite(losses if deferred else list(grads) + losses)
    else:  # The global norm doubles as the check: no reduction of its own.
      grads, norm = clip_by_global_norm(grads, clip_norm)
      ok = all_finite([norm] + losses)
    verdict = ok
  else:
    # Unscaled before clipping. The loss is checked apart: an overflow is
    # the scale's business (skip, halve), a non-finite loss the NaN guard's.
    grads = [g * tf.cast(1.0 / scale, g.dtype) for g in grads]
    if clip_norm is None:
      grads_finite = all_finite(grads)
    else:
      grads, norm = clip_by_global_norm(grads, clip_norm)
      grads_finite = all_finite([norm])
    loss_finite = all_finite(losses)
    ok = tf.logical_and(grads_finite, loss_finite)
    overflow = loss_scale.update(grads_finite, loss_finite)
    verdict = tf.logical_or(ok, tf.logical_and(overflow, scale > 1.0))
  if recorder is not None:
    recorder.record(verdict, loss)

  if replicas > 1 and not deferred:
    # The optimizer synchronises (merge_call) inside its update, which cannot
    # sit inside tf.cond: a non-finite update is zeroed instead of dropped.
    grads = [tf.where(ok, g, tf.zeros_like(g)) for g in grads]
  if replicas > 1 and hasattr(optimizer, "apply_gradients"):
    # Keras sums the gradients over replicas again: hand it each share.
    grads = [g / replicas for g in grads]
  if deferred or replicas > 1:
    apply_to_optimizer(optimizer, grads, variables)
    return verdict

  def apply():
    apply_to_optimizer(optimizer, grads, variables)
    return tf.constant(True)

  tf.cond(ok, apply, lambda: tf.constant(False))
  return verdict


class CallRollback:
  """Undoes a compiled call in which an update went non-finite.

  The per-call NaN check (`nonfinite_check="call"`). `begin` reads every
  variable of the run's state before the call's first step; while such a
  read is alive TensorFlow gives a variable a new buffer on its first
  write, so the old value survives at the cost of one copy per variable and
  call. `end` checks the steps' verdicts (their losses) and, after the call,
  the variables every update changed (the weights and the optimizers'
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

  def watch(self, variables: Sequence[Any]) -> None:
    """The state a failed call restores (the step counter with it)."""
    self.variables = state_variables(list(variables) + [self.step])
    self._updated = []

  @autograph.as_written
  def updated(self, optimizer: Any, variables: Sequence[Any]) -> None:
    """Traced: an update of `variables` by `optimizer`; `end` checks both."""
    self._updated += [optimizer] + list(variables)

  @autograph.as_written
  def begin(self) -> list[tf.Tensor]:
    return [tf.identity(v) for v in self.variables]

  @autograph.as_written
  def end(self, saved: Sequence[tf.Tensor], steps_finite: tf.Tensor
          ) -> tf.Tensor:
    """Whether the call was finite; if not, its changes are undone."""
    checked = [v for v in state_variables(self._updated)
               if v.dtype.is_floating]
    ok = tf.logical_and(steps_finite, all_finite(checked))

    def undo():
      self.failed_at.assign(tf.where(steps_finite, tf.constant(-1, tf.int64),
                                     self.step.read_value()))
      for variable, value in zip(self.variables, saved):
        variable.assign(value)
      return tf.constant(False)

    return tf.cond(ok, lambda: tf.constant(True), undo)


