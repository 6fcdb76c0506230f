"""`Scenario`: the subclass contract and the Python loop of every scenario.

A scenario splits into a traced side and a Python side, like Keras'
`train_step` + `make_train_function`:

- traced: `next_inputs()` (cross-replica; by default the next batch of the
  fed data) and `train_step(batch)` (per replica; returns a dict of scalar
  logs and changes weights through `self.apply_update`). `step.TracedStep`
  (`self.traced_step`) owns all of it: it compiles them into one `tf.function`
  of up to `steps_per_call` steps, and runs the forward pass in the
  precision, the loss scale, the NaN guard and the updates.
- Python: the loop (`training_loop.py`), which splits calls at
  log/eval/save boundaries, runs hooks, evaluations and checkpoints, and
  handles signals.

A subclass declares what it trains with `models()` and everything that
decides the rest of the run with `trackables()`; the engine adds the step
counter, its random generator, the skip counter, the "finished" flag and
the iterator of the data given to `feed`, and restores all of it before
the first step. Nothing here assumes one model, one optimizer or a
dataset, so a GAN (several models and optimizers, alternating updates inside
one step) and RL (environment state and replay buffers as trackables, in-graph
rollouts in `train_step`) fit the same mould. The settings live in four
groups (`settings.py`): `self.loop`, `self.checkpointing`, `self.guard`,
`self.updates`.

Hardware: the same code runs on one CPU/GPU (no strategy),
`tf.distribute.MirroredStrategy()` over the GPUs of one machine,
`tf.distribute.TPUStrategy(resolver)` on TPUs, and
`tf.distribute.MultiWorkerMirroredStrategy()` on a cluster described by the
`TF_CONFIG` environment variable of each process (the chief writes
checkpoints and logs; every worker must reach the same `save_dir`). Create
models and optimizers inside `strategy.scope()`, or let the scenario build
them lazily inside it, and scale losses by the global batch size.
"""

import contextlib
import os
from typing import Any, Callable, Iterable

import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import utils
from sonnet_like.scenarios import dry_run as dry_run_lib
from sonnet_like.scenarios.compiled import guard as guard_lib
from sonnet_like.scenarios.run_folder import history as history_lib
from sonnet_like.scenarios import hooks as hooks_lib
from sonnet_like.scenarios.run_folder import keep_best as keep_best_lib
from sonnet_like.scenarios.compiled import runner as runner_lib
from sonnet_like.scenarios.population import runner as population_runner
from sonnet_like.scenarios.population import settings as population_lib
from sonnet_like.scenarios.population import surface
from sonnet_like.scenarios.compiled import precision as precision_lib
from sonnet_like.scenarios import services
from sonnet_like.scenarios.run_folder import run_settings
from sonnet_like.scenarios import settings
from sonnet_like.scenarios.run_folder import saved_run
from sonnet_like.scenarios import schedules
from sonnet_like.scenarios import seed as seed_lib
from sonnet_like.scenarios import training_loop

NonFiniteError = guard_lib.NonFiniteError

NO_EXPORT_ERROR = (
    "{owner}: export_dir is set but {owner} defines no export(directory). "
    "Override export(self, directory) (e.g. with snt.export.save_module) or "
    "drop export_dir.")


def _sonnet_aggregation(next_creator, **kwargs):
  # Sonnet optimizers assign to variables in replica context, which mirrored
  # variables only allow with an aggregation (as Sonnet's Replicator does).
  if kwargs.get("aggregation") in (None, tf.VariableAggregation.NONE):
    kwargs["aggregation"] = tf.VariableAggregation.ONLY_FIRST_REPLICA
  return next_creator(**kwargs)


@settings.reads_through
class Scenario(services.ScenarioServices, surface.PopulationSurface):
  """Base class of scenarios: owns the loop, the checkpoint and the hooks.

  Writing a new scenario: subclass `Scenario`, take models, optimizers and
  data in `__call__` (hand the data to `self.feed(data, batch_size=...)`,
  then `return self.run()`) and provide:

  - `models()`: the modules trained, by name; `trackables()`: everything
    the checkpoint holds (models, optimizers, any other state).
  - `build()`: creates every variable before the checkpoint is restored:
    call the models on `self.example_batch()` and
    `self.build_optimizer(optimizer, variables)`.
  - `train_step(batch)`: traced, per replica: run models with
    `self.forward(model, inputs)` (in the scenario's `precision`), take
    gradients with `self.gradients(tape, loss, variables)` (scaled under
    mixed_float16), change weights only with `self.apply_update(optimizer,
    grads, variables, loss=loss)` and return a dict of scalar logs.
  - Optionally `next_inputs()` (e.g. noise for the whole global batch from
    `self.next_batch()`, `self.rng` and `self.split_for_replicas`),
    `evaluate_now()` and `export(directory)`.

  Draw randomness only from `self.rng` (checkpointed: resume is exact).
  Resume, the NaN guard, clipping, mixed precision with loss scaling, hooks,
  logs and strategies come with it:

      >>> import numpy as np, keras, tensorflow as tf, sonnet_like as snt
      >>> class Denoise(snt.scenarios.Scenario):
      ...   def __call__(self, model, optimizer, images):
      ...     self.model, self.optimizer = model, optimizer
      ...     self.feed(images, batch_size=32)
      ...     return self.run()
      ...   def models(self):
      ...     return {"model": self.model}
      ...   def trackables(self):
      ...     return {"model": self.model, "optimizer": self.optimizer}
      ...   def build(self):
      ...     self.model(self.example_batch())
      ...     self.build_optimizer(self.optimizer, self.model.variables)
      ...   def train_step(self, images):
      ...     noisy = images + self.rng.normal(tf.shape(images), stddev=0.1)
      ...     with tf.GradientTape() as tape:
      ...       outputs = self.forward(self.model, noisy)  # float32 out.
      ...       loss = tf.reduce_mean((outputs - images) ** 2)
      ...     grads = self.gradients(tape, loss, self.model.variables)
      ...     self.apply_update(self.optimizer, grads, self.model.variables,
      ...                       loss=loss)
      ...     return {"loss": loss}
      >>> images = np.random.default_rng(0).uniform(size=(256, 4))
      >>> run = Denoise(num_steps=200, log_every=20, progress=False,
      ...               precision="mixed_float16")
      >>> history = run(snt.Linear(4, name="denoiser"),
      ...               keras.optimizers.Adam(0.05), images)
      >>> round(history.train["loss"][-1], 2)  # The noise's variance.
      0.01

  Under a multi-replica strategy, divide the loss by the global batch size
  (`self.strategy.num_replicas_in_sync` times this replica's share) and draw
  per-example noise in `next_inputs`, so N replicas match one device.

  Args:
    num_steps: Total number of training steps (across restarts).
    steps_per_call: Steps run inside one compiled call (K). Calls are split at
      log, eval and save boundaries, so those stay exact.
    eval_every: Evaluate every this many steps (and at the end).
    save_every: Checkpoint every this many steps (and at the end); needs
      `save_dir`.
    save_dir: Folder (local or cloud) for checkpoints, `history.json` and
      TensorBoard `logs/`; run again, the newest readable checkpoint resumes
      (locked: one run at a time; a mismatched checkpoint is refused).
    restart: Start over in a used `save_dir`: its run is moved into
      `save_dir/restart-<time>/` (nothing is deleted). Pass it once.
    log_every: Record train logs in the history and TensorBoard this often.
    max_to_keep: Checkpoints kept on disk.
    jit_compile: Compile the train step with XLA.
    strategy: Any `tf.distribute.Strategy`; the default (no) strategy if None.
    on_nonfinite: "raise" (stop with `NonFiniteError`) or "skip" (drop that
      update and go on; `skipped_steps` counts them).
    clip_norm: Clip gradients to this global norm (summed in float32).
    seed: Decides the run: the first weights of every module whose
      variables the run creates, the data order, environment resets and
      `self.rng` (the checkpointed generator of all other noise).
    hooks: Extra `Hook`s, run after the built-in ones.
    progress: Show a progress bar: None for terminals only, True, False.
    tensorboard: Write TensorBoard logs under `save_dir/logs`.
    catch_signals: Save and exit cleanly on SIGTERM / Ctrl-C (in a cluster
      every worker, at one step, with code 143).
    termination_watcher: True once this machine is about to go: a SIGTERM.
    async_save: A save blocks only for a snapshot of the state in memory;
      a thread writes it into `save_dir` while training goes on.
    export_dir: Write a SavedModel for serving here (`self.export`) when a
      run ends without a signal or error (replacing an earlier one).
    keep_best: Keep the checkpoint of the best evaluation by this eval
      metric in `save_dir/best` (and export it, with `export_dir`).
    best_mode: "min" or "max" for `keep_best` (default as `EarlyStopping`).
    profile_steps: Profile steps (start, stop) into `save_dir/logs`.
    dry_run: Check the run in seconds instead of running it: a few steps,
      an evaluation, a save, a resume and an export in a temporary folder,
      then a one-line verdict; the real run is not started.
    unused_variables: "warn" (once, naming them), "raise" or "ignore" when
      variables given to `apply_update` get no gradient.
    precision: "float32", "mixed_float16" (loss scaled dynamically) or
      "mixed_bfloat16", or a `snt.scenarios.Precision` (see there).
    nonfinite_check: "step" (every update checked before it is applied),
      "call" (once per compiled call, undone if bad) or "auto".
    accumulate_steps: Steps (micro-batches) whose mean gradient is 1 update.
    ema: Decay (or {model: decay}) of weight averages that evaluate, export.
    learning_rate_schedule: A `schedules.Schedule`: factor of every lr.
    population: Train many members in one compiled call: a member count
      (seeds `seed`, `seed + 1`, ...), a list of seeds, or a
      `snt.scenarios.Population` (per-member settings, sweeps). Member i
      matches a solo run with its seed; `member(i)` gives its models;
      `export_dir` gets every member (`export_population`).
  """

  def __new__(cls, *args, **kwargs):
    # A misspelt loop setting would otherwise be reported against
    # Scenario.__init__, which the user never called, with no suggestion.
    arguments.check_keywords(cls.__name__, kwargs,
                             arguments.keyword_names(cls))
    scenario = super().__new__(cls)
    scenario.constructor_arguments = run_settings.arguments_of(cls, args,
                                                               kwargs)
    return scenario

  def __init__(self, num_steps: int, *, steps_per_call: int = 1,
               eval_every: int | None = None, save_every: int | None = None,
               save_dir: str | None = None, log_every: int = 100,
               max_to_keep: int = 3, jit_compile: bool = False,
               strategy: tf.distribute.Strategy | None = None,
               on_nonfinite: str = "raise", clip_norm: float | None = None,
               seed: int = 0, hooks: Iterable[hooks_lib.Hook] = (),
               progress: bool | None = None, tensorboard: bool = True,
               catch_signals: bool = True, restart: bool = False,
               termination_watcher: Callable[[], bool] | None = None,
               async_save: bool = False,
               unused_variables: str = "warn",
               export_dir: str | os.PathLike | None = None,
               keep_best: str | None = None, best_mode: str | None = None,
               profile_steps: tuple[int, int] | None = None,
               dry_run: bool = False,
               precision: str | precision_lib.Precision = "float32",
               nonfinite_check: str = "auto", accumulate_steps: int = 1,
               ema: float | dict[str, float] | None = None,
               learning_rate_schedule: schedules.Schedule | None = None,
               population: Any = None):
    owner = type(self).__name__
    precision = precision_lib.parse(owner, precision)
    loop = settings.LoopSettings.checked(
        owner, num_steps=num_steps, steps_per_call=steps_per_call,
        eval_every=eval_every, log_every=log_every, jit_compile=jit_compile,
        strategy=strategy, seed=seed, hooks=hooks, progress=progress,
        tensorboard=tensorboard, catch_signals=catch_signals,
        termination_watcher=termination_watcher,
        profile_steps=profile_steps, dry_run=dry_run, save_dir=save_dir)
    self.checkpointing = settings.CheckpointSettings.checked(
        owner, save_dir=save_dir, save_every=save_every,
        max_to_keep=max_to_keep, restart=restart, export_dir=export_dir,
        async_save=async_save, keep_best=keep_best, best_mode=best_mode)
    guard = settings.GuardSettings.checked(
        owner, precision, on_nonfinite=on_nonfinite,
        nonfinite_check=nonfinite_check, clip_norm=clip_norm,
        unused_variables=unused_variables)
    updates = settings.UpdateSettings.checked(
        owner, accumulate_steps=accumulate_steps, ema=ema,
        learning_rate_schedule=learning_rate_schedule)
    if export_dir is not None and type(self).export is Scenario.export:
      raise ValueError(NO_EXPORT_ERROR.format(owner=owner))
    self.population = population_lib.parse(owner, population, seed)
    if self.population is not None:
      population_runner.check(owner, loop, guard)
    super().__init__(loop, guard, precision, updates)
    # What the engine and the compiled step ask about the copies they run.
    self.runner = (runner_lib.Runner(self) if self.population is None
                   else population_runner.PopulationRunner(self))
    self.history: history_lib.History | None = None
    self.train_function: Any = None
    self.rng: tf.random.Generator | None = None
    self._stop_reason: str | None = None
    self._finished: tf.Variable | None = None

  # ---- What a subclass provides. ----

  def models(self) -> dict[str, tf.Module]:
    """The modules being trained, by name (early stopping restores them)."""
    return {}

  def trackables(self) -> dict[str, Any]:
    """Everything else the checkpoint must hold, by name.

    Models and optimizers at least; also iterators, replay buffers,
    environment state, EMA weights. Names must not be "step", "rng",
    "skipped", "finished", "loss_scale" or "data", which the engine uses
    (the fed data's iterator is "data").
    """
    return dict(self.models())

  def build(self) -> None:
    """Python: creates every variable before the checkpoint is restored.

    Runs eagerly, in the strategy scope, after `feed`'s iterator exists: call
    the models on `self.example_batch()` (or any input of the right shapes)
    and `self.build_optimizer(optimizer, variables)` for each optimizer.
    """

  def next_inputs(self) -> Any:
    """Traced, cross-replica: the next step's inputs.

    By default the next batch of the data given to `feed`, cut into one
    share per replica, or None without data (the compiled call then reads
    the data itself, the same way). A tuple is unpacked into `train_step`'s
    arguments, so this default returns `(batch,)`. Override it to draw more
    (several batches, noise from `self.rng`).
    """
    if self._feed is None:
      return None
    return (self.split_for_replicas(self.next_batch()),)

  def train_step(self, *inputs: Any) -> dict[str, tf.Tensor]:
    """Traced, per replica: one step on `next_inputs()`; returns scalar logs.

    With `feed`, it is `train_step(batch)`: this replica's share of the
    batch, with the structure of the data. Change weights only through
    `self.apply_update(optimizer, grads, variables, loss=loss)`, and return a
    dict of scalars ("loss" is checked for NaN/Inf with the update).
    """
    raise NotImplementedError(
        f"{type(self).__name__} must implement train_step(*inputs).")

  @property
  def updates_per_step(self) -> int:
    """How many optimizer updates one step makes; 1 unless a scenario says
    more (a GAN's `n_critic + 1`, PPO's epochs times minibatches). With
    `steps_per_call` it decides how `nonfinite_check="auto"` checks."""
    return 1

  @property
  def checks_per_call(self) -> bool:
    """Whether the NaN guard checks once per compiled call
    (`nonfinite_check`, "auto" resolved; once the step is compiled, as it
    checks: "auto" then also weighs the replay buffers a call's check would
    copy, `guard.rows_outweigh_checks`)."""
    if self.traced_step.compiled_per_call is not None:
      return self.traced_step.compiled_per_call
    return self._checks_per_call_by_settings()

  def _checks_per_call_by_settings(self) -> bool:
    if not self.runner.checks_per_call:
      return False
    return self.guard.checks_per_call(
        self.loop.steps_per_call * self.updates_per_step,
        self.precision.scales_loss)

  def evaluate_now(self) -> dict[str, float] | None:
    """Python: metrics at an eval boundary, or None to skip evaluation."""
    return None

  def export(self, directory: str) -> str:
    """Writes the trained model(s) as a SavedModel for serving; the path.

    Called at the end of a run when `export_dir` is set; scenarios override
    it (Supervised: the model; GAN: the generator as a sampler; RL: the
    policy) with `snt.export`.
    """
    raise NotImplementedError(NO_EXPORT_ERROR.format(owner=type(self).__name__))

  def request_stop(self, reason: str, final: bool = False) -> None:
    """Ends training after the current call (hooks use this).

    Args:
      reason: Why; becomes `history.stop_reason`.
      final: The run is over for good (early stopping): running the same
        command again says so instead of training on. Otherwise running it
        again resumes.
    """
    self._stop_reason = reason
    if final and self._finished is not None:
      self._finished.assign(True)  # In the checkpoint saved after this call.

  @property
  def stop_reason(self) -> str | None:
    """Why `request_stop` ended training, or None."""
    return self._stop_reason

  # ---- The Python side. ----

  def run(self) -> history_lib.History:
    """Runs (or resumes) the loop; returns the `History`.

    Three phases: `_restore` (state, checkpoint, "already done?"),
    `training_loop.train` (the loop, hooks, signals) and `SavedRun.finish`
    (the last save). The scenario's seed is TensorFlow's global seed
    meanwhile (the user's is put back after): modules without variables yet
    are built from it.
    """
    with seed_lib.global_seed(self.seed):
      try:
        return self._run()
      finally:
        self.runner.after_run()

  def _run(self) -> history_lib.History:
    if self.dry_run:
      return dry_run_lib.run(self, type(self).export is not Scenario.export)
    strategy = self.strategy
    self._stop_reason = None
    creator = (_sonnet_aggregation if strategy.num_replicas_in_sync > 1
               else lambda next_creator, **kwargs: next_creator(**kwargs))
    # `cleanup` releases the folder's lock however the run ends (normally,
    # already done, an exception, or the sys.exit of a caught signal).
    with contextlib.ExitStack() as cleanup:
      with strategy.scope(), tf.variable_creator_scope(creator):
        saved = self._restore(cleanup)
        done = saved is None
        if not done:
          state = [value for name, value in self._run_state().items()
                   if name != "data"]  # The iterator cannot roll back.
          training_loop.train(
              self, saved, state,
              type(self).next_inputs is not Scenario.next_inputs)
          saved.finish(self.step, self._stop_reason or "done")
      keep_best_lib.export_at_end(self, missing_only=done)
    return self.history

  def _create_state(self, cleanup: contextlib.ExitStack) -> None:
    """The engine's variables, the data iterator, then the scenario's (as
    the runner builds them)."""
    self.runner.before_run()
    self.traced_step.create(self.updates,
                            per_call=self._checks_per_call_by_settings())
    self._finished = tf.Variable(False, trainable=False, name="finished")
    self.rng = utils.seeded_generator(self.seed)
    if self._feed is not None:
      self._feed.start()
    self.runner.build(cleanup)
    self.traced_step.shared.policy = self.runner.updates
    self.traced_step.create_built(self.models(), self.updates_per_step,
                                  self.runner.storage)

  def _run_state(self) -> dict[str, Any]:
    """What the compiled steps change, by name: `trackables()` and the
    engine's own state (step, generator, counters, the data iterator)."""
    owner = type(self).__name__
    named = self.runner.named_state()
    engine_owned = {"step": self.traced_step.step, "rng": self.rng,
                    "skipped": self.traced_step.skipped,
                    "finished": self._finished}
    if self._feed is not None:
      engine_owned["data"] = self._feed.iterator
    if self.traced_step.loss_scale is not None:
      engine_owned["loss_scale"] = self.traced_step.loss_scale
    engine_owned.update(self.traced_step.state())
    engine_owned = self.runner.engine_state(engine_owned)
    clash = set(engine_owned) & set(named)
    if clash:
      raise ValueError(f"{owner}: trackables() must not use the names "
                       f"{sorted(clash)}, which the engine uses.")
    return dict(named, **engine_owned)

  def _restore(self, cleanup: contextlib.ExitStack
               ) -> saved_run.SavedRun | None:
    """Creates the state and restores it; None if the run is already done."""
    self._create_state(cleanup)
    saved = saved_run.SavedRun(self)
    self.history = saved.history
    restored = saved.restore(self._run_state(), cleanup)
    if restored:
      finished = bool(self._finished.numpy())
      if self.step >= self.num_steps or finished:
        self.say(saved.done_message(self.step, self.num_steps, finished))
        return None
      self.say(f"{type(self).__name__}: resuming from {restored} at step "
                f"{self.step}.")
    self.history.stop_reason = ""
    return saved
