"""The traced step: what runs inside a scenario's compiled call, one owner.

`TracedStep` owns everything a scenario's `train_step` runs on: the step
and skip counters, the forward pass in the scenario's precision, the loss
scale (`loss_scale.py`), the guarded update with its rollback (`guard.py`),
the per-step verdicts (`FiniteRecorder`), the unused-variable policy
(`UnusedVariables`), the optimizer checks and `build_optimizer`, the update
settings (gradient accumulation, `accumulation.py`; the weights' EMA,
`ema.py`; the learning-rate schedule, `learning_rate.py`), and the
compiled call itself (`compile`: the inputs + `train_step`, K steps per
call in one `tf.function`, `make_train_function`). `Scenario` offers its
services (`forward`, `gradients`, `apply_update`, `build_optimizer`)
through one-line delegates (`services.py`), and the built-in scenarios call
them on `scenario.traced_step` directly (with `minimize`, gradients and
update in one call). The Python loop around the call is the engine's.
"""

import contextlib
import warnings
from typing import Any, Callable, Sequence

import tensorflow as tf

from sonnet_like.core import autograph
from sonnet_like.core import utils
from sonnet_like.scenarios.updates import accumulation as accumulation_lib
from sonnet_like.scenarios import data as data_lib
from sonnet_like.scenarios.updates import ema as ema_lib
from sonnet_like.scenarios.compiled import guard as guard_lib
from sonnet_like.scenarios.updates import learning_rate as learning_rate_lib
from sonnet_like.scenarios.updates import loss_scale as loss_scale_lib
from sonnet_like.scenarios.compiled import precision as precision_lib
from sonnet_like.scenarios import settings as settings_lib

LOSS_SCALE_OPTIMIZER_ERROR = (
    "{owner}: {argument} is a Keras LossScaleOptimizer, which expects its own "
    "scale_loss() before the gradients; scenarios do not call it, so every "
    "gradient would be divided by its scale. Pass its inner optimizer "
    "({argument}.inner_optimizer) and precision='mixed_float16': the scenario "
    "then scales the loss itself, dynamically, inside the compiled step (the "
    "scale is checkpointed).")


@autograph.as_written
def is_loss_scale_optimizer(optimizer: Any) -> bool:
  """A Keras (3 or tf_keras) `LossScaleOptimizer`, by its surface."""
  return (hasattr(optimizer, "inner_optimizer") and
          (hasattr(optimizer, "dynamic_scale") or
           hasattr(optimizer, "loss_scale") or
           hasattr(optimizer, "scale_loss")))


def _optimizer_variables(optimizer: Any) -> list[tf.Variable]:
  try:
    return list(getattr(optimizer, "variables", ()))
  except ValueError:  # A sonnet_like module with no variables yet.
    return []


def build_optimizer(optimizer: Any,
                    variables: Sequence[tf.Variable]) -> None:
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

  @autograph.as_written
  def start(self) -> None:
    self._flags, self._losses, self._counted = [], [], False
    self._graph = tf.compat.v1.get_default_graph()

  @autograph.as_written
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

  @autograph.as_written
  def checked(self, tensor: tf.Tensor) -> bool:
    """Whether `tensor` itself was covered by a verdict of this step."""
    return any(tensor is loss for loss in self._losses)

  @autograph.as_written
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


class UnusedVariables:
  """The policy for variables given to an update that got no gradient:
  "warn" once per set of names, "raise", or "ignore"."""

  def __init__(self, owner: str, policy: str):
    self.owner, self.policy = owner, policy
    self._warned: set[tuple[str, ...]] = set()

  @autograph.as_written
  def check(self, grads: Sequence[Any], variables: Sequence[Any]) -> None:
    unused = [v.name for g, v in zip(grads, variables) if g is None]
    if not unused or self.policy == "ignore":
      return
    message = guard_lib.UNUSED_VARIABLES.format(owner=self.owner, names=unused)
    if self.policy == "raise":
      raise ValueError(message)
    if tuple(unused) not in self._warned:
      self._warned.add(tuple(unused))
      warnings.warn(message, stacklevel=3)  # Whoever called apply_update.

class TracedStep:
  """What runs inside a scenario's compiled call, in one place.

  Made with the scenario; `create` makes its variables (in the strategy
  scope, before restoring) and `compile` wraps the scenario's `train_step`
  (per replica) and its inputs (cross-replica) into one `tf.function`.
  While `train_step` is traced, `forward` runs models in the precision;
  `gradients` scales the loss under "mixed_float16"; `apply_update` is the
  guarded update, whose verdicts the compiled call returns with its logs.

  Args:
    owner: The scenario's name, for errors.
    precision: The scenario's precision.
    guard: What the NaN guard does and how it checks.
    updates: Accumulation, EMA and learning-rate schedule (read at
      `create`).
  """

  def __init__(self, owner: str, precision: precision_lib.Precision,
               guard: settings_lib.GuardSettings,
               updates: settings_lib.UpdateSettings | None = None):
    self.owner, self.precision, self.guard = owner, precision, guard
    self.updates = updates or settings_lib.UpdateSettings()
    self.accumulator: accumulation_lib.GradientAccumulator | None = None
    self.averages = ema_lib.ModelEMAs(owner, None)
    self.rates = learning_rate_lib.LearningRates(owner, None)
    self.recorder = FiniteRecorder()
    self.unused = UnusedVariables(owner, guard.unused_variables)
    self.step: tf.Variable | None = None
    self.skipped: tf.Variable | None = None
    self.loss_scale: loss_scale_lib.DynamicLossScale | None = None
    self.rollback: guard_lib.CallRollback | None = None
    self._scales: loss_scale_lib.GradientScales | None = None
    self._cast = precision_lib.Forward(owner, precision)
    self._in_step = False  # While `train_step` is traced.

  def nonfinite_error(self, latest: str | None, start: int,
                      count: int) -> guard_lib.NonFiniteError:
    """The error of a call of `count` steps from `start` that was not
    finite (the per-step check stopped the counter at the bad step)."""
    if self.rollback is None:
      return guard_lib.nonfinite_error(self.owner, latest,
                                       int(self.step.numpy()), count, None)
    return guard_lib.nonfinite_error(
        self.owner, latest, start, count,
        int(self.rollback.failed_at.numpy()))

  def create(self, per_call: bool = False) -> None:
    """The counters, the loss scale if the precision scales the loss, and
    the rollback if the guard checks `per_call`."""
    self.step = tf.Variable(0, dtype=tf.int64, trainable=False, name="step")
    self.skipped = tf.Variable(0, dtype=tf.int64, trainable=False,
                               name="skipped")
    self.recorder.create()
    self.rollback = guard_lib.CallRollback(self.step) if per_call else None
    self.loss_scale = self._scales = None
    if self.precision.scales_loss:
      self.loss_scale = loss_scale_lib.DynamicLossScale(
          self.precision.initial_scale, self.precision.growth_interval)
      self._scales = loss_scale_lib.GradientScales(self.loss_scale)
    steps = self.updates.accumulate_steps
    self.accumulator = (accumulation_lib.GradientAccumulator(self.owner, steps)
                        if steps > 1 else None)
    self.averages = ema_lib.ModelEMAs(self.owner, self.updates.ema)
    self.rates = learning_rate_lib.LearningRates(
        self.owner, self.updates.learning_rate_schedule)

  def create_built(self, models: dict[str, Any],
                   updates_per_step: int) -> None:
    """After the scenario's `build`: the models' averages; refuses
    accumulation for a step of several updates."""
    if self.accumulator is not None and updates_per_step > 1:
      raise ValueError(accumulation_lib.SEVERAL_UPDATES_ERROR.format(
          owner=self.owner, steps=self.accumulator.steps,
          updates=updates_per_step))
    self.averages.create(models)

  def state(self) -> dict[str, Any]:
    """What the update settings add to the checkpoint, by name: the
    gradient sums ("gradient_sums") and the averages ("<model>_ema")."""
    named = dict(self.averages.trackables())
    if self.accumulator is not None:
      named["gradient_sums"] = self.accumulator.trackable()
    return named

  # ---- The services a train step uses. ----

  def forward(self, model: Any, inputs: Any,
              is_training: bool | None = None) -> Any:
    """`model(inputs)`, in the precision while the step is traced (see
    `Scenario.forward`); `is_training` is passed where the model takes it."""
    if is_training is None:
      return self.in_precision(model)(inputs)
    return self.in_precision(
        model, lambda x: utils.call_model(model, x, is_training))(inputs)

  def in_precision(self, model: Any,
                   call: Callable[[Any], Any] | None = None
                   ) -> Callable[[Any], Any]:
    """`call` (by default `model` itself) as `forward` runs it: in the
    precision while the step is traced. Without a compute dtype there is
    nothing to add and `call` comes back as it is, so a network bound once
    (at setup) is called directly from the step."""
    call = model if call is None else call
    if self.precision.compute_dtype is None:
      return call

    def in_step_precision(inputs: Any) -> Any:
      if not self._in_step:
        return call(inputs)
      return self._cast(model, call, inputs)
    return in_step_precision

  def gradients(self, tape: tf.GradientTape, loss: tf.Tensor,
                variables: Sequence[tf.Variable]) -> list[Any]:
    """`tape.gradient(loss, variables)`; of the scaled loss under loss
    scaling (`apply_update` unscales them)."""
    if self._scales is None:
      return tape.gradient(loss, variables)
    return self._scales.gradients(tape, loss, variables)

  def apply_update(self, optimizer: Any, grads: Any, variables: Any,
                   loss: tf.Tensor | None = None) -> tf.Tensor:
    """The guarded update (see `Scenario.apply_update`); whether it was
    finite, as a scalar bool tensor."""
    self._refuse_loss_scale_optimizer(optimizer)
    grads, variables = list(grads), list(variables)
    self.unused.check(grads, variables)
    scale = (None if self._scales is None
             else self._scales.scale_of(grads, self.owner))
    if self.rollback is not None:
      self.rollback.updated(optimizer, variables)
    if self.accumulator is not None:  # Applied by the compiled step.
      self.rates.register(optimizer)
      finite = self.accumulator.add(
          optimizer, grads, variables, loss,
          loss_scale=self.loss_scale if scale is not None else None,
          scale=scale)
      self.recorder.record(finite, loss)
      return finite
    with self._scheduled_rate(optimizer, self.step):
      finite = guard_lib.apply_update(
          optimizer, grads, variables, loss=loss,
          clip_norm=self.guard.clip_norm,
          loss_scale=self.loss_scale if scale is not None else None,
          scale=scale, deferred=self.rollback is not None)
    self.recorder.record(finite, loss)
    return finite

  def _scheduled_rate(self, optimizer: Any, step: Any) -> Any:
    """The block in which `optimizer`'s update uses the schedule's rate of
    `step` (a Keras variable assigned, or a Sonnet-style attribute set while
    traced); without a schedule there is nothing to set."""
    if self.rates.schedule is None:
      return contextlib.nullcontext()
    return self.rates.applied(optimizer, step)

  def minimize(self, tape: tf.GradientTape, loss: tf.Tensor,
               variables: Sequence[tf.Variable], optimizer: Any) -> tf.Tensor:
    """`apply_update(optimizer, gradients(tape, loss, variables), variables,
    loss)`: one loss's whole update (Keras' `optimizer.minimize`)."""
    return self.apply_update(optimizer, self.gradients(tape, loss, variables),
                             variables, loss)

  def check_optimizer(self, optimizer: Any,
                      argument: str = "optimizer") -> None:
    """Refuses what is not a Keras or sonnet_like/Sonnet optimizer."""
    if not (hasattr(optimizer, "apply_gradients") or
            hasattr(optimizer, "apply")):
      raise TypeError(guard_lib.NOT_AN_OPTIMIZER_ERROR.format(
          owner=self.owner, value=optimizer).replace(
              "optimizer must", f"{argument} must", 1))

  def build_optimizer(self, optimizer: Any,
                      variables: Sequence[tf.Variable]) -> None:
    """Creates `optimizer`'s slots for `variables` now (see
    `build_optimizer`); a Keras `LossScaleOptimizer` is refused."""
    self._refuse_loss_scale_optimizer(optimizer)
    build_optimizer(optimizer, variables)
    self.rates.register(optimizer)
    if self.accumulator is not None:
      self.accumulator.create(optimizer, variables)

  @autograph.as_written
  def _refuse_loss_scale_optimizer(self, optimizer: Any) -> None:
    if is_loss_scale_optimizer(optimizer):
      raise TypeError(LOSS_SCALE_OPTIMIZER_ERROR.format(
          owner=self.owner, argument="optimizer"))

  # ---- The compiled call. ----

  def _after_updates(self, strategy: tf.distribute.Strategy,
                     finite: tf.Tensor, skip: bool) -> None:
    """Traced, cross-replica, after a step's `train_step`: the accumulated
    update at the end of an accumulation (not after a failed step that
    stops the run), and the EMAs after each update."""
    if self.accumulator is None:
      self.averages.update()
      return
    step = self.step.read_value()

    def update():
      def apply(optimizer, grads, variables):
        with self._scheduled_rate(optimizer, step):
          guard_lib.apply_to_optimizer(optimizer, grads, variables)
      strategy.run(lambda: self.accumulator.apply(self.guard.clip_norm,
                                                  apply))
      self.averages.update()
      return tf.constant(True)

    last = self.accumulator.is_last(step)
    if not skip:
      last = tf.logical_and(last, finite)
    tf.cond(last, update, lambda: tf.constant(False))

  def compile(self, scenario: Any, state: Sequence[Any] = (),
              next_inputs: Callable[[], Any] | None = None,
              iterator: Any = None) -> Callable[[tf.Tensor], Any]:
    """`train_function(n)`, running `n` steps of `scenario.train_step`.

    Args:
      scenario: Gives `train_step`, `strategy`, `jit_compile` and
        `steps_per_call`.
      state: Every variable the steps may change: what a failed call
        restores under the per-call check.
      next_inputs: Cross-replica, the next step's inputs (a tuple is
        unpacked into `train_step`'s arguments); None to read `iterator`.
      iterator: The fed data's iterator: each step reads one global batch
        and hands each replica its share. Neither: `train_step()`.
    """
    strategy = scenario.strategy
    replicas = strategy.num_replicas_in_sync
    skip = self.guard.on_nonfinite == "skip"

    names = {id(v): k for k, v in scenario.trackables().items()}

    def guarded_step(*inputs):
      self.recorder.start()
      if self.accumulator is not None:
        self.accumulator.start()
      if self._scales is not None:
        self._scales.start()
      # The rates this step's updates use (read before them: a Keras
      # schedule moves with the optimizer's iterations).
      known, rates = set(self.rates.optimizers), self.rates.logs(self.step,
                                                                 names)
      self._in_step = True  # Models compute in the precision.
      try:
        logs = dict(scenario.train_step(*inputs))
      finally:
        self._in_step = False
        if self._scales is not None:
          self._scales.end()
      if self.loss_scale is not None:
        logs["loss_scale"] = self.loss_scale.scale.read_value()
      if set(self.rates.optimizers) != known:  # First used in train_step.
        rates = self.rates.logs(self.step, names)
      logs.update(rates)
      loss = logs.get("loss")
      checked = loss is not None and self.recorder.checked(loss)
      finite = self.recorder.finish()
      if loss is not None and not checked:
        finite = tf.logical_and(finite, guard_lib.all_finite([loss]))
      if replicas > 1:  # Summed across replicas.
        return logs, 1.0 - tf.cast(finite, tf.float32)
      return logs, finite

    replica_step = guarded_step
    if scenario.jit_compile:
      if replicas > 1:
        raise ValueError(f"{self.owner}: jit_compile=True is not supported "
                         "with a multi-replica strategy here; use "
                         "TPUStrategy (always compiled) or jit_compile=False.")
      replica_step = tf.function(guarded_step, jit_compile=True)

    def step_inputs():
      if next_inputs is not None:
        inputs = next_inputs()
        return () if inputs is None else (
            tuple(inputs) if isinstance(inputs, tuple) else (inputs,))
      if iterator is None:
        return ()
      batch = next(iterator)  # Read here, as Keras' train function does.
      if replicas > 1:
        batch = data_lib.split_for_replicas(strategy, batch)
      return (batch,)

    def one_step():
      logs, finite = strategy.run(replica_step, step_inputs())
      if replicas > 1:
        logs = {k: strategy.reduce(tf.distribute.ReduceOp.MEAN, v, axis=None)
                for k, v in logs.items()}
        bad = strategy.reduce(tf.distribute.ReduceOp.SUM, finite, axis=None)
        finite = tf.equal(bad, 0.0)
      self._after_updates(strategy, finite, skip)
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
                        rollback: guard_lib.CallRollback | None = None
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

  # Traced once, called twice below (before the loop, for the logs'
  # structure, and in its body): half the tracing of inlining it twice.
  one_step = tf.function(one_step)

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
