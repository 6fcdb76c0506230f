"""The traced side of the engine, all in one place.

`apply_update` is what a train step calls to change weights: it all-reduces
gradients across replicas, checks them (and the loss) for NaN/Inf, clips them
by global norm and applies them with either kind of optimizer. Its finiteness
verdict is recorded so the engine can stop or skip exactly at that step.
With the per-call check (`nonfinite_check="call"`) it applies the update
unconditionally and checks only the loss (and the clipping norm), and
`CallRollback` checks the updated weights and slots once at the end of each
compiled call and undoes the call if any went non-finite: no reduction per
gradient and no condition between the backward pass and the update.
`TracedLoop` owns the step and skip counters and compiles a scenario's
`next_inputs` + `train_step` into one `tf.function` (`make_train_function`)
that runs up to K steps per call in a `tf.while_loop`. Under
`precision="mixed_float16"` it also owns the `DynamicLossScale`: `gradients`
scales the loss (by seeding the backward pass with the scale) and
`apply_update` unscales, skips an overflowed update and adjusts the scale.
"""

from typing import Any, Callable, Iterable, Sequence

import tensorflow as tf

NOT_AN_OPTIMIZER_ERROR = (
    "{owner}: optimizer must have apply_gradients(grads_and_vars) (Keras) or "
    "apply(updates, parameters) (sonnet_like / Sonnet), got {value!r}.")


UNSCALED_GRADIENTS_ERROR = (
    "{owner}: under precision='mixed_float16' the loss is scaled: compute "
    "the gradients with self.gradients(tape, loss, variables) and pass them "
    "to apply_update unchanged (apply_update unscales them and handles "
    "overflow). Gradients from tape.gradient, or changed after "
    "self.gradients, cannot be told apart from scaled ones.")


def _ref(tensor: Any) -> Any:
  return tensor.ref() if hasattr(tensor, "ref") else id(tensor)


def _as_tf_variable(variable: Any) -> Any:
  # A Keras 3 variable wraps a tf.Variable (its `value` on TensorFlow).
  if isinstance(variable, tf.Variable):
    return variable
  inner = getattr(variable, "value", None)
  return inner if isinstance(inner, tf.Variable) else None


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


class FiniteRecorder:
  """Collects, inside a traced step, whether this replica's updates were finite.

  Verdicts made directly in the step's graph are kept as tensors (free).
  Those made inside a nested graph (a `tf.range` loop or `tf.cond` branch of
  the step, e.g. a GAN's critic loop) cannot leave it, so they are counted in
  a variable instead.
  """

  def __init__(self):
    self._count: tf.Variable | None = None
    self._flags: list[tf.Tensor] = []
    self._losses: list[tf.Tensor] = []
    self._graph: Any = None
    self._counted = False

  def create(self) -> None:
    """Creates the counter; call in the strategy scope."""
    self._count = tf.Variable(
        0.0, trainable=False, name="nonfinite_updates",
        synchronization=tf.VariableSynchronization.ON_READ,
        aggregation=tf.VariableAggregation.SUM)

  def start(self) -> None:
    self._flags, self._losses, self._counted = [], [], False
    self._graph = tf.compat.v1.get_default_graph()

  def record(self, ok: tf.Tensor, loss: tf.Tensor | None = None) -> None:
    """Records a verdict, and the loss tensor it covered (if any)."""
    if self._graph is None:
      return
    if tf.compat.v1.get_default_graph() is self._graph:
      self._flags.append(ok)
      if loss is not None:
        self._losses.append(loss)
      return
    if self._count is None:
      raise RuntimeError("FiniteRecorder.create() was not called.")
    self._counted = True
    self._count.assign_add(1.0 - tf.cast(ok, tf.float32))

  def checked(self, tensor: tf.Tensor) -> bool:
    """Whether `tensor` itself was covered by a verdict of this step."""
    return any(tensor is loss for loss in self._losses)

  def finish(self) -> tf.Tensor:
    ok = self._flags[0] if self._flags else tf.constant(True)
    for flag in self._flags[1:]:
      ok = tf.logical_and(ok, flag)
    if self._counted:
      # Read, then zero it for the next step.
      ok = tf.logical_and(ok, tf.equal(self._count.read_value(), 0.0))
      with tf.control_dependencies([ok]):
        self._count.assign(0.0)
    self._flags, self._losses, self._graph = [], [], None
    return ok


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


class DynamicLossScale(tf.Module):
  """The loss scale of mixed_float16 training, updated in the compiled step.

  Gradients are computed from `loss * scale`, so that small ones survive the
  float16 backward pass, and divided by `scale` before they are applied. An
  update whose gradients overflow (finite loss, non-finite gradients) is
  skipped, counted in `overflows` and halves the scale (not below 1);
  `growth_interval` finite updates in a row double it. Its variables are in
  the checkpoint, so a resumed run scales exactly as an uninterrupted one.
  Assignments are arithmetic (no `tf.cond`), so the update also runs in
  replica context under a multi-replica strategy.
  """

  MAX_SCALE = 2.0 ** 40

  def __init__(self, initial_scale: float, growth_interval: int):
    super().__init__(name="loss_scale")
    kwargs = dict(trainable=False,
                  synchronization=tf.VariableSynchronization.ON_WRITE,
                  aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
    self.scale = tf.Variable(float(initial_scale), dtype=tf.float32,
                             name="scale", **kwargs)
    self.good_updates = tf.Variable(0, dtype=tf.int64, name="good_updates",
                                    **kwargs)
    self.overflows = tf.Variable(0, dtype=tf.int64, name="overflows",
                                 **kwargs)
    self.growth_interval = int(growth_interval)

  def update(self, grads_finite: tf.Tensor, loss_finite: tf.Tensor
             ) -> tf.Tensor:
    """Adjusts the scale after an update; returns whether it overflowed."""
    scale = self.scale.read_value()
    overflow = tf.logical_and(loss_finite, tf.logical_not(grads_finite))
    good = tf.logical_and(loss_finite, grads_finite)
    count = tf.where(good, self.good_updates.read_value() + 1,
                     tf.zeros([], tf.int64))
    grow = count >= self.growth_interval
    new_scale = tf.where(
        overflow, tf.maximum(scale / 2.0, 1.0),
        tf.where(grow, tf.minimum(scale * 2.0, self.MAX_SCALE), scale))
    self.scale.assign(new_scale)
    self.good_updates.assign(tf.where(grow, tf.zeros([], tf.int64), count))
    self.overflows.assign_add(tf.cast(overflow, tf.int64))
    return overflow


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


def _optimizer_variables(optimizer: Any) -> list[tf.Variable]:
  try:
    return list(getattr(optimizer, "variables", ()))
  except ValueError:  # A sonnet_like module with no variables yet.
    return []


def build_optimizer(optimizer: Any, variables: Sequence[tf.Variable]) -> None:
  """Creates an optimizer's slot variables now (eagerly), changing nothing.

  Keras optimizers have `build`. A Sonnet-style optimizer creates its slots
  on its first `apply`: inside the compiled step, that would make
  `tf.function` trace the step twice (once to create them), and under a
  multi-replica strategy it is refused (mirrored variables cannot be created
  there). So `apply` is run once here with zero updates, then every variable
  it touched is put back: parameters and old optimizer variables to their
  values, new slots to zero (the initial value of every Sonnet optimizer's
  slots).
  """
  variables = list(variables)
  if hasattr(optimizer, "apply_gradients"):
    if hasattr(optimizer, "build") and not getattr(optimizer, "built", True):
      optimizer.build(variables)
    return
  before = _optimizer_variables(optimizer)
  saved = [(v, tf.identity(v)) for v in variables + before]
  known = {v.ref() for v in before}
  optimizer.apply([tf.zeros(v.shape, v.dtype) for v in variables], variables)
  for variable, value in saved:
    variable.assign(value)
  for variable in _optimizer_variables(optimizer):
    if variable.ref() not in known:
      variable.assign(tf.zeros(variable.shape, variable.dtype))


def apply_update(optimizer: Any, grads: Sequence[tf.Tensor | None],
                 variables: Sequence[tf.Variable], *,
                 loss: tf.Tensor | None = None,
                 clip_norm: float | None = None,
                 recorder: FiniteRecorder | None = None,
                 loss_scale: DynamicLossScale | None = None,
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
    recorder: Where to record the finiteness verdict.
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

  def updated(self, optimizer: Any, variables: Sequence[Any]) -> None:
    """Traced: an update of `variables` by `optimizer`; `end` checks both."""
    self._updated += [optimizer] + list(variables)

  def begin(self) -> list[tf.Tensor]:
    return [tf.identity(v) for v in self.variables]

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


class TracedLoop:
  """The traced side of a scenario: the guarded step, the step and skip
  counters, and the compiled call of up to K steps.

  A scenario's `train_step` changes weights through `apply_update`, whose
  finiteness verdicts are recorded; `compile` wraps `train_step` (per
  replica) and `next_inputs` (cross-replica) into one `tf.function`. The
  Python side (the engine's loop) reads only the call's logs and verdict.
  """

  def __init__(self):
    self.recorder = FiniteRecorder()
    self.step: tf.Variable | None = None
    self.skipped: tf.Variable | None = None
    self.loss_scale: DynamicLossScale | None = None
    self.rollback: CallRollback | None = None
    self._scales: dict[Any, tf.Tensor] = {}  # Gradient ref -> its scale.
    self._scale_read: tuple[Any, tf.Tensor] | None = None

  def create(self, precision: Any = None, per_call: bool = False) -> None:
    """The counters (and the loss scale if `precision` scales the loss, the
    rollback if the NaN check is `per_call`); call in the strategy scope,
    before restoring."""
    self.step = tf.Variable(0, dtype=tf.int64, trainable=False, name="step")
    self.skipped = tf.Variable(0, dtype=tf.int64, trainable=False,
                               name="skipped")
    self.recorder.create()
    self.rollback = CallRollback(self.step) if per_call else None
    self.loss_scale = None
    if precision is not None and precision.scales_loss:
      self.loss_scale = DynamicLossScale(precision.initial_scale,
                                         precision.growth_interval)

  def gradients(self, tape: tf.GradientTape, loss: tf.Tensor,
                variables: Sequence[tf.Variable]) -> list[tf.Tensor | None]:
    """`tape.gradient(loss, variables)`, of the scaled loss under loss
    scaling: the backward pass is seeded with the scale (so the loss need
    not be multiplied inside the tape); `apply_update` unscales them."""
    if self.loss_scale is None:
      return tape.gradient(loss, variables)
    # One read per graph: gradients of several losses (SAC's actor, critics
    # and temperature) share it, so one apply_update can unscale them all.
    graph = tf.compat.v1.get_default_graph()
    if self._scale_read is None or self._scale_read[0] is not graph:
      self._scale_read = (graph, self.loss_scale.scale.read_value())
    scale = self._scale_read[1]
    grads = tape.gradient(loss, variables,
                          output_gradients=tf.cast(scale, loss.dtype))
    for g in grads:
      if g is not None:
        self._scales[_ref(g)] = scale
    return grads

  def apply_update(self, optimizer: Any, grads: Sequence[tf.Tensor | None],
                   variables: Sequence[tf.Variable],
                   loss: tf.Tensor | None, clip_norm: float | None,
                   owner: str = "Scenario") -> tf.Tensor:
    """`apply_update` with this loop's recorder (and loss scale)."""
    scale = None
    if self.loss_scale is not None:
      scales = [self._scales.get(_ref(g)) for g in grads if g is not None]
      if any(x is None for x in scales) or len({id(x) for x in scales}) > 1:
        raise ValueError(UNSCALED_GRADIENTS_ERROR.format(owner=owner))
      scale = scales[0] if scales else None
    if self.rollback is not None:
      self.rollback.updated(optimizer, variables)
    return apply_update(optimizer, grads, variables, loss=loss,
                        clip_norm=clip_norm, recorder=self.recorder,
                        loss_scale=self.loss_scale if scale is not None
                        else None, scale=scale,
                        deferred=self.rollback is not None)

  def compile(self, scenario: Any, state: Sequence[tf.Variable] = ()
              ) -> Callable[[tf.Tensor], Any]:
    """`train_function(n)` running `n` steps of `scenario` (see
    `make_train_function`), with its settings: strategy, on_nonfinite,
    jit_compile and steps_per_call. With the per-call check, a failed call
    restores `state` (every variable the steps may change)."""
    strategy = scenario.strategy
    replicas = strategy.num_replicas_in_sync
    skip = scenario.on_nonfinite == "skip"

    def guarded_step(*inputs):
      self.recorder.start()
      self._scales, self._scale_read = {}, None
      scenario._forward.active = True  # Models compute in the precision.
      try:
        logs = dict(scenario.train_step(*inputs))
      finally:
        scenario._forward.active = False
        self._scales, self._scale_read = {}, None
      if self.loss_scale is not None:
        logs["loss_scale"] = self.loss_scale.scale.read_value()
      loss = logs.get("loss")
      checked = loss is not None and self.recorder.checked(loss)
      finite = self.recorder.finish()
      if loss is not None and not checked:
        finite = tf.logical_and(finite, all_finite([loss]))
      if replicas > 1:  # Summed across replicas.
        return logs, 1.0 - tf.cast(finite, tf.float32)
      return logs, finite

    replica_step = guarded_step
    if scenario.jit_compile:
      if replicas > 1:
        raise ValueError(f"{type(scenario).__name__}: jit_compile=True is not "
                         "supported with a multi-replica strategy here; use "
                         "TPUStrategy (always compiled) or jit_compile=False.")
      replica_step = tf.function(guarded_step, jit_compile=True)

    def one_step():
      inputs = scenario.next_inputs()
      args = () if inputs is None else (
          tuple(inputs) if isinstance(inputs, tuple) else (inputs,))
      logs, finite = strategy.run(replica_step, args)
      if replicas > 1:
        logs = {k: strategy.reduce(tf.distribute.ReduceOp.MEAN, v, axis=None)
                for k, v in logs.items()}
        bad = strategy.reduce(tf.distribute.ReduceOp.SUM, finite, axis=None)
        finite = tf.equal(bad, 0.0)
      if skip:
        self.step.assign_add(1)
        self.skipped.assign_add(1 - tf.cast(finite, tf.int64))
      else:  # A non-finite step is not counted: the run stops before it.
        self.step.assign_add(tf.cast(finite, tf.int64))
      return logs, finite

    if self.rollback is not None:
      self.rollback.watch(state)
    return make_train_function(one_step, stop_on_nonfinite=not skip,
                               steps_per_call=scenario.steps_per_call,
                               rollback=self.rollback)


def make_train_function(one_step: Callable[[], tuple[dict, tf.Tensor]],
                        stop_on_nonfinite: bool,
                        steps_per_call: int | None = None,
                        rollback: CallRollback | None = None
                        ) -> Callable[[tf.Tensor], Any]:
  """Compiles `one_step` into a function running `n` steps per call.

  Args:
    one_step: Runs one step in cross-replica context and returns
      `(logs, finite)`; it advances the step counter itself.
    stop_on_nonfinite: Leave the loop at the first non-finite step.
    steps_per_call: The most steps a call runs; with 1 the function has no
      loop.
    rollback: Check the state at the end of each call and undo a call that
      is not finite (with `stop_on_nonfinite`).

  Returns:
    `train_function(n)`: a `tf.function` of a scalar int32 tensor `n`
    returning the last step's logs and whether every step was finite. `n` is a
    tensor, so changing it never retraces.
  """

  def guarded(run_steps):
    if rollback is None:
      return run_steps

    def run_and_check(n):
      saved = rollback.begin()
      logs, finite = run_steps(n)
      return logs, rollback.end(saved, finite)

    return run_and_check

  if steps_per_call == 1:
    # One step per call: no loop at all (a while loop costs ~10% per call).
    def single_step(n: tf.Tensor):
      del n  # Always 1.
      return one_step()

    return tf.function(guarded(single_step))

  def steps(n: tf.Tensor):
    logs, finite = one_step()

    def keep_going(i, finite, logs):
      del logs
      going = i < n
      if stop_on_nonfinite:
        going = tf.logical_and(going, finite)
      return going

    def body(i, finite, logs):
      del logs
      new_logs, step_finite = one_step()
      return i + 1, tf.logical_and(finite, step_finite), new_logs

    _, finite, logs = tf.while_loop(keep_going, body,
                                    (tf.constant(1), finite, logs))
    return logs, finite

  return tf.function(guarded(steps))
