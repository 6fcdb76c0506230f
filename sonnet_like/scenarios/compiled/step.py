"""The traced step: what runs inside a scenario's compiled call, one owner.

`TracedStep` keeps the step and skip counters, the forward pass in the
scenario's precision, the per-step verdicts (`FiniteRecorder`), the
unused-variable policy, one `Updater` per optimizer (`updates/updater.py`:
the optimizer's slots, schedule, accumulation and guarded apply), the
weight averages, and the compiled call itself (`compile`: the inputs +
`train_step`, K steps per call in one `tf.function`,
`make_train_function`). While `train_step` is traced, the optimizers'
own `apply_gradients` / `apply` go through their updaters. `Scenario`
offers the services (`forward`, `gradients`, `apply_update`, `minimize`,
`build_optimizer`) that its subclasses, built-in or a user's, call. The
Python loop around the call is the engine's.
"""

import contextlib
from typing import Any, Callable, Iterator, Sequence

import tensorflow as tf

from sonnet_like.core import autograph
from sonnet_like.core import utils
from sonnet_like.scenarios import data as data_lib
from sonnet_like.scenarios import settings as settings_lib
from sonnet_like.scenarios.compiled import guard as guard_lib
from sonnet_like.scenarios.compiled import precision as precision_lib
from sonnet_like.scenarios.updates import accumulation as accumulation_lib
from sonnet_like.scenarios.updates import ema as ema_lib
from sonnet_like.scenarios.updates import kinds
from sonnet_like.scenarios.updates import loss_scale as loss_scale_lib
from sonnet_like.scenarios.updates import updater as updater_lib

class FiniteRecorder:
  """Whether one traced step's updates were finite: opens the step's
  `Verdicts` (its updaters add theirs) and reduces them to one verdict.

  Verdicts made directly in the step's graph are kept as tensors (free);
  those made inside a nested graph (a `tf.range` loop or `tf.cond` branch
  of the step, e.g. a GAN's critic loop) are counted in a variable.
  """

  def __init__(self, verdicts: updater_lib.Verdicts):
    self.verdicts = verdicts

  def create(self) -> None:
    """Creates the counter; call in the strategy scope."""
    self.verdicts.count = tf.Variable(
        0.0, trainable=False, name="nonfinite_updates",
        synchronization=tf.VariableSynchronization.ON_READ,
        aggregation=tf.VariableAggregation.SUM)

  @autograph.as_written
  def start(self) -> None:
    verdicts = self.verdicts
    verdicts.flags, verdicts.counted, verdicts.covered_loss = [], False, False
    verdicts.graph = tf.compat.v1.get_default_graph()

  @autograph.as_written
  def finish(self) -> tf.Tensor:
    verdicts = self.verdicts
    ok = verdicts.flags[0] if verdicts.flags else tf.constant(True)
    for flag in verdicts.flags[1:]:
      ok = tf.logical_and(ok, flag)
    if verdicts.counted:
      # Read, then zero it for the next step.
      ok = tf.logical_and(ok, tf.equal(verdicts.count.read_value(), 0.0))
      with tf.control_dependencies([ok]):
        verdicts.count.assign(0.0)
    verdicts.flags, verdicts.graph = [], None
    return ok


class TracedStep:
  """What runs inside a scenario's compiled call, in one place.

  Made with the scenario; `create` makes its variables (in the strategy
  scope, before restoring) and `compile` wraps the scenario's `train_step`
  (per replica) and its inputs (cross-replica) into one `tf.function`.
  While `train_step` is traced, `forward` runs models in the precision and
  each optimizer's `Updater` (`updater`) makes its updates, whose verdicts
  the compiled call returns with its logs.

  Args:
    owner: The scenario's name, for errors.
    precision: The scenario's precision.
    guard: What the NaN guard does and how it checks.
  """

  def __init__(self, owner: str, precision: precision_lib.Precision,
               guard: settings_lib.GuardSettings):
    self.owner, self.precision, self.guard = owner, precision, guard
    self.averages = ema_lib.ModelEMAs(owner, None)
    self.shared = updater_lib.Shared(owner)
    self.recorder = FiniteRecorder(self.shared.verdicts)
    self.step: tf.Variable | None = None
    self.skipped: tf.Variable | None = None
    self.updaters: dict[int, updater_lib.Updater] = {}
    self._cast = precision_lib.Forward(owner, precision)
    self._in_step = False  # While `train_step` is traced.
    # Whether the compiled step checks per call; None before `compile`.
    self.compiled_per_call: bool | None = None

  @property
  def loss_scale(self) -> loss_scale_lib.DynamicLossScale | None:
    """The dynamic loss scale under "mixed_float16", else None."""
    return self.shared.loss_scale

  @property
  def rollback(self) -> guard_lib.CallRollback | None:
    """The per-call check's rollback, if the guard checks per call."""
    return self.shared.rollback

  @property
  def accumulator(self) -> accumulation_lib.GradientAccumulator | None:
    """The gradient sums with `accumulate_steps` > 1, else None."""
    return self.shared.accumulator

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

  def create(self, updates: settings_lib.UpdateSettings | None = None,
             per_call: bool = False) -> None:
    """The counters, the loss scale if the precision scales the loss, what
    the updaters share (the settings of `updates`: accumulation, EMA and
    the learning-rate schedule, as they are now), and the rollback if the
    guard checks `per_call`."""
    updates = updates or settings_lib.UpdateSettings()
    self.compiled_per_call = None
    self.step = tf.Variable(0, dtype=tf.int64, trainable=False, name="step")
    self.skipped = tf.Variable(0, dtype=tf.int64, trainable=False,
                               name="skipped")
    loss_scale = scales = None
    if self.precision.scales_loss:
      loss_scale = loss_scale_lib.DynamicLossScale(
          self.precision.initial_scale, self.precision.growth_interval)
      scales = loss_scale_lib.GradientScales(loss_scale)
    steps = updates.accumulate_steps
    self.shared = updater_lib.Shared(
        self.owner, clip_norm=self.guard.clip_norm,
        schedule=updates.learning_rate_schedule, step=self.step,
        loss_scale=loss_scale, scales=scales,
        accumulator=(accumulation_lib.GradientAccumulator(self.owner, steps)
                     if steps > 1 else None),
        rollback=guard_lib.CallRollback(self.step) if per_call else None,
        unused=updater_lib.UnusedVariables(self.owner,
                                           self.guard.unused_variables))
    self.recorder = FiniteRecorder(self.shared.verdicts)
    self.recorder.create()
    self.updaters = {}
    self.averages = ema_lib.ModelEMAs(self.owner, updates.ema)

  def create_built(self, models: dict[str, Any], updates_per_step: int,
                   storage: Any = None) -> None:
    """After the scenario's `build`: the models' averages (of the
    variables in the runner's `storage`, if it has one); refuses
    accumulation for a step of several updates."""
    if self.accumulator is not None and updates_per_step > 1:
      raise ValueError(accumulation_lib.SEVERAL_UPDATES_ERROR.format(
          owner=self.owner, steps=self.accumulator.steps,
          updates=updates_per_step))
    self.averages.create(models, storage)

  def state(self) -> dict[str, Any]:
    """What the update settings add to the checkpoint, by name: the
    gradient sums ("gradient_sums") and the averages ("<model>_ema")."""
    named = dict(self.averages.trackables())
    if self.accumulator is not None:
      named["gradient_sums"] = self.accumulator.trackable()
    return named

  # ---- The services a train step uses. ----

  @autograph.as_written
  def forward(self, model: Any, inputs: Any,
              is_training: bool | None = None) -> Any:
    """`model(inputs)`, in the precision while the step is traced (see
    `Scenario.forward`); `is_training` is passed where the model takes it.
    The model (or the call in the precision) is rewritten by AutoGraph."""
    if is_training is None:
      return autograph.as_user_code(self.in_precision(model))(inputs)

    @autograph.as_written  # The model in it is rewritten (`call_model`).
    def call(x):
      return utils.call_model(model, x, is_training)
    return autograph.as_user_code(self.in_precision(model, call))(inputs)

  @autograph.as_written
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

    @autograph.as_written  # `call` is rewritten where it runs.
    def in_step_precision(inputs: Any) -> Any:
      if not self._in_step:
        return autograph.as_user_code(call)(inputs)
      return self._cast(model, call, inputs)
    return in_step_precision

  def updater(self, optimizer: Any) -> updater_lib.Updater:
    """`optimizer`'s `Updater`, made on first use."""
    found = self.updaters.get(id(optimizer))
    if found is None:
      found = self.updaters[id(optimizer)] = updater_lib.Updater(
          optimizer, self.shared)
    return found

  def keep_updaters(self, optimizer_ids: Any) -> None:
    """Forgets the updaters of optimizers whose id is not in
    `optimizer_ids` (objects a runner built and does not train)."""
    self.updaters = {key: updater for key, updater in self.updaters.items()
                     if key in optimizer_ids}

  def build_optimizer(self, optimizer: Any,
                      variables: Sequence[tf.Variable]) -> None:
    """Creates `optimizer`'s slots for `variables` now (see
    `Updater.build`); a Keras `LossScaleOptimizer` is refused."""
    self.updater(optimizer).build(variables)

  # ---- The compiled call. ----

  @autograph.as_written
  def _rate_logs(self, names: dict[int, str]) -> dict[str, tf.Tensor]:
    """Traced: the rate of this step of every optimizer met so far:
    "learning_rate" for one, "learning_rate_<name>" for several (`names`:
    id -> the scenario's name for the optimizer)."""
    rates = {key: updater.rate(self.step)
             for key, updater in self.updaters.items()}
    rates = {key: rate for key, rate in rates.items() if rate is not None}
    if len(rates) == 1:
      return {"learning_rate": next(iter(rates.values()))}
    return {f"learning_rate_{names.get(key, i)}": rate
            for i, (key, rate) in enumerate(rates.items())}

  @autograph.as_written
  def _after_updates(self, strategy: tf.distribute.Strategy,
                     finite_step: tf.Tensor, skip: bool) -> None:
    """Traced, cross-replica, after a step's `train_step`: the accumulated
    update at the end of an accumulation (not after a failed step that
    stops the run), and the EMAs after each update. A runner whose step
    applies the sums itself (`policy.applies_accumulated_sums`) leaves
    only the EMAs here."""
    if self.accumulator is None:
      if self.averages.averages:
        self.averages.update()
      return
    in_step = self.shared.policy.applies_accumulated_sums
    if in_step and not self.averages.averages:
      return  # Nothing left to do here: no empty branch in every step.
    step = self.step.read_value()

    @autograph.as_written  # `strategy.run` would rewrite a lambda.
    def apply_sums():
      self.accumulator.apply(step)

    def update():
      if not in_step:
        _run_in_replicas(strategy, apply_sums)
      self.averages.update()
      return tf.constant(True)

    last = self.accumulator.is_last(step)
    if not skip:
      last = tf.logical_and(last, finite_step)
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
    if (self.rollback is not None and self.guard.nonfinite_check == "auto"
        and guard_lib.rows_outweigh_checks(
            state, scenario.steps_per_call * scenario.updates_per_step)):
      self.shared.rollback = None  # "auto": each update checked instead.
    self.compiled_per_call = self.rollback is not None

    names = {id(v): k for k, v in scenario.trackables().items()}

    # The library's way to the scenario's code runs as written; what a
    # user may give or override (`train_step`, `next_inputs`) is rewritten
    # by AutoGraph (`autograph.as_user_code`).
    @autograph.as_written
    def guarded_step(*inputs):
      self.recorder.start()
      if self.accumulator is not None:
        self.accumulator.start()
      scales = self.shared.scales
      if scales is not None:
        scales.start()
      # The rates this step's updates use (read before them: a Keras
      # schedule moves with the optimizer's iterations).
      known, rates = set(self.updaters), self._rate_logs(names)
      self._in_step = True  # Models compute in the precision.
      try:
        logs = dict(autograph.as_user_code(scenario.train_step)(*inputs))
      finally:
        self._in_step = False
        if scales is not None:
          scales.end()
      if self.loss_scale is not None:
        logs["loss_scale"] = self.loss_scale.scale.read_value()
      if set(self.updaters) != known:  # First used in train_step.
        rates = self._rate_logs(names)
      logs.update(rates)
      loss = logs.get("loss")
      covered = self.shared.verdicts.covered_loss
      finite_step = self.recorder.finish()
      if loss is not None and not covered:  # No update checked a loss.
        finite_step = tf.logical_and(finite_step, updater_lib.all_finite([loss]))
      if replicas > 1:  # Summed across replicas.
        return logs, 1.0 - tf.cast(finite_step, tf.float32)
      return logs, finite_step

    # The runner makes the step each replica runs (a population's makes
    # every member's inputs from the batches read here: `batches` a step).
    replica_step, next_inputs, batches = scenario.runner.traced(
        guarded_step, skip,
        None if next_inputs is None else autograph.as_user_code(next_inputs))
    if scenario.jit_compile:
      if replicas > 1:
        raise ValueError(f"{self.owner}: jit_compile=True is not supported "
                         "with a multi-replica strategy here; use "
                         "TPUStrategy (always compiled) or jit_compile=False.")
      replica_step = tf.function(replica_step, jit_compile=True)

    @autograph.as_written
    def step_inputs():
      if next_inputs is not None:
        inputs = autograph.as_user_code(next_inputs)()
        return () if inputs is None else (
            tuple(inputs) if isinstance(inputs, tuple) else (inputs,))
      if iterator is None:
        return ()
      # Read here, as Keras' train function does.
      read = tuple(next(iterator) for _ in range(batches))
      if replicas > 1:
        read = tuple(data_lib.split_for_replicas(strategy, batch)
                     for batch in read)
      return read

    # While the step is traced, the optimizers' own methods are their
    # updaters' (a train_step may call optimizer.apply_gradients itself).
    optimizers = {id(o): o for o in scenario.trackables().values()
                  if kinds.is_optimizer(o)}
    optimizers.update((key, u.optimizer) for key, u in self.updaters.items())
    routes = updater_lib.routes(list(optimizers.values()), self.updater)

    @autograph.as_written
    def one_step():
      with _routed(routes):
        logs, finite = _run_in_replicas(strategy, replica_step,
                                        step_inputs())
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


def _run_in_replicas(strategy: tf.distribute.Strategy,
                     fn: Callable[..., Any], args: Sequence[Any] = ()) -> Any:
  """`strategy.run(fn, args)`. A strategy's replica threads start with no
  AutoGraph status, so `fn` (as written) takes the caller's along: its
  `as_user_code` calls rewrite the user's code there too."""
  if tf.distribute.has_strategy():
    fn = autograph.keeps_status(fn)
  return strategy.run(fn, args)


@contextlib.contextmanager
def _routed(routes: Sequence[tuple[Any, str, Callable]]) -> Iterator[None]:
  """Inside the block (a step's trace), the optimizers' methods are the
  `routes`; after it, the optimizers are as they were (an optimizer whose
  instance already has its own such method keeps it)."""
  routed = []
  for optimizer, name, method in routes:
    if name not in vars(optimizer):
      setattr(optimizer, name, method)
      routed.append((optimizer, name))
  try:
    yield
  finally:
    for optimizer, name in routed:
      delattr(optimizer, name)


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

    @autograph.as_written
    def run_and_check(n):
      saved = rollback.begin()
      logs, finite = run_steps(n)
      return logs, rollback.end(saved, finite)

    return run_and_check

  if steps_per_call == 1:
    # One step per call: no loop at all (a while loop costs ~10% per call).
    @autograph.as_written
    def single_step(n: tf.Tensor):
      del n  # Always 1.
      return one_step()

    return tf.function(guarded(single_step))

  # Traced once, and in the graph once: the loop starts from zeros in its
  # outputs' structure. (Called before the loop for that structure, it
  # would be in the graph twice: twice the graph optimisation and
  # executor setup of a large step's first call.)
  one_step = tf.function(one_step)

  @autograph.as_written
  def steps(n: tf.Tensor):
    done, start = 0, _zero_outputs(one_step.get_concrete_function())
    if start is None:  # A log zeros cannot stand for: a first step.
      done, start = 1, one_step()
    logs, finite = start

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
                                    (tf.constant(done), finite, logs))
    return logs, finite

  return tf.function(guarded(steps))


def _zero_outputs(traced: Any) -> tuple[Any, tf.Tensor] | None:
  """Zero logs in the structure of `traced`'s (a step's concrete function)
  and a True verdict; None if a log is not a tensor of a fully known
  shape (a ragged or sparse one, say)."""
  logs, _ = traced.structured_outputs
  flat = tf.nest.flatten(logs)
  if not all(isinstance(t, tf.Tensor) and t.shape.is_fully_defined()
             for t in flat):
    return None
  zeros = [tf.zeros(t.shape, t.dtype) for t in flat]
  return tf.nest.pack_sequence_as(logs, zeros), tf.constant(True)
