"""`Scenario`: the training-loop engine that every scenario is built on.

A scenario splits into a traced side and a Python side, like Keras'
`train_step` + `make_train_function`:

- traced: `next_inputs()` (cross-replica; by default the next batch of the
  fed data) and `train_step(batch)` (per replica, returns a dict of scalar logs and changes
  weights through `self.apply_update`). The engine compiles them into one
  `tf.function` that runs up to `steps_per_call` steps per call.
- Python: the loop below, which splits calls at log/eval/save boundaries, runs
  hooks, evaluations and checkpoints, and handles signals.

A subclass declares what it trains with `models()` and everything that
decides the rest of the run with `trackables()`; the engine adds the step
counter, its random generator, the skip counter, the "finished" flag and the
iterator of the data given to `feed`, and restores all of it before the
first step. Nothing here assumes one model, one optimizer or a
dataset, so a GAN (several models and optimizers, alternating updates inside
one step) and RL (environment state and replay buffers as trackables, in-graph
rollouts in `train_step`) fit the same mould.

Hardware: the same code runs on one CPU/GPU (no strategy),
`tf.distribute.MirroredStrategy()` over the GPUs of one machine,
`tf.distribute.TPUStrategy(resolver)` on TPUs, and
`tf.distribute.MultiWorkerMirroredStrategy()` on a cluster described by the
`TF_CONFIG` environment variable of each process (the chief writes
checkpoints and logs; every worker must reach the same `save_dir`). Create
models and optimizers inside `strategy.scope()`, or let the scenario build
them lazily inside it, and scale losses by the global batch size.
"""

import collections.abc
import contextlib
import os
import shutil
import sys
import tempfile
import warnings
from typing import Any, Callable, Iterable, Sequence

import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import files
from sonnet_like.core import utils
from sonnet_like.scenarios import checkpointing
from sonnet_like.scenarios import cluster
from sonnet_like.scenarios import data as data_lib
from sonnet_like.scenarios import history as history_lib
from sonnet_like.scenarios import hooks as hooks_lib
from sonnet_like.scenarios import precision as precision_lib
from sonnet_like.scenarios import progress
from sonnet_like.scenarios import signals
from sonnet_like.scenarios import step as step_lib
from sonnet_like.scenarios import tensorboard

NONFINITE_POLICIES = ("raise", "skip")

NONFINITE_CHECKS = ("auto", "step", "call")

# "auto" checks once per call from this many updates per call on: the copy
# of the state a call keeps costs about as much as checking a few updates.
CALL_CHECK_MIN_UPDATES = 8

NONFINITE_ERROR = (
    "{owner}: non-finite loss or gradient at step {step} (0-based; {done} "
    "steps had completed). The update was not applied and nothing was saved "
    "after it{checkpoint}. Lower the learning rate, clip gradients "
    "(clip_norm=...), check the data, or pass on_nonfinite='skip' to drop such "
    "updates.")

DONE_MESSAGE = (
    "{owner}: training in {save_dir} is already done ({step} of {num_steps} "
    "steps{reason}). Raise num_steps to train more, or pass restart=True to "
    "start over (the finished run is moved aside, not deleted).")

NONFINITE_CALL_ERROR = (
    "{owner}: non-finite loss or gradient at step {where} (0-based; {why}). "
    "That compiled call was undone: the models, optimizers and the rest of "
    "the state are as they were after {start} steps, and nothing was saved "
    "after them{checkpoint}. Lower the learning "
    "rate, clip gradients (clip_norm=...), check the data, or pass "
    "on_nonfinite='skip' to drop such updates (nonfinite_check='step' "
    "checks every update before it is applied).")

NO_EXPORT_ERROR = (
    "{owner}: export_dir is set but {owner} defines no export(directory). "
    "Override export(self, directory) (e.g. with snt.export.save_module) or "
    "drop export_dir.")

UNUSED_VARIABLES = (
    "{owner}: no gradient reached {names}; they are not trained. Remove them "
    "from the variables passed to apply_update, make the loss use them, or "
    "pass unused_variables='ignore' (or 'raise' to make this an error).")

UNUSED_POLICIES = ("warn", "raise", "ignore")

RESUME_MESSAGE = (
    "\n{owner}: caught {signal} at step {step}; {saved}. Run the same command "
    "again to resume from there.")


class NonFiniteError(FloatingPointError):
  """A loss or gradient was NaN/Inf; `step` is the failing step (0-based)."""

  def __init__(self, message: str, step: int):
    super().__init__(message)
    self.step = step



def _sonnet_aggregation(next_creator, **kwargs):
  # Sonnet optimizers assign to variables in replica context, which mirrored
  # variables only allow with an aggregation (as Sonnet's Replicator does).
  if kwargs.get("aggregation") in (None, tf.VariableAggregation.NONE):
    kwargs["aggregation"] = tf.VariableAggregation.ONLY_FIRST_REPLICA
  return next_creator(**kwargs)


class Scenario:
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
      >>> tf.random.set_seed(0)  # The model's initial weights.
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
    save_dir: Folder for checkpoints, `history.json` and TensorBoard logs
      (`logs/`). Starting again with the same folder resumes from the newest
      checkpoint that reads; one run at a time may use a folder (it is
      locked), and a checkpoint that does not match the models and
      optimizers is refused before the first step.
    restart: Start over in a `save_dir` that holds a previous run: its
      checkpoints, `history.json` and `logs/` are moved into
      `save_dir/restart-<time>/` (nothing is deleted) and training starts
      at step 0. Pass it once: a command that keeps it starts over each time.
    log_every: Record train logs in the history and TensorBoard this often.
    max_to_keep: Checkpoints kept on disk.
    jit_compile: Compile the train step with XLA.
    strategy: Any `tf.distribute.Strategy`; the default (no) strategy if None.
    on_nonfinite: "raise" (stop with `NonFiniteError`) or "skip" (drop that
      update and go on; `skipped_steps` counts them).
    clip_norm: Clip gradients to this global norm (summed in float32 or
      wider, whatever the gradients' precision).
    seed: Seed of `self.rng`, the scenario's checkpointed random generator.
    hooks: Extra `Hook`s, run after the built-in ones.
    progress: Show a progress bar: None for terminals only, True, False.
    tensorboard: Write TensorBoard logs under `save_dir/logs`.
    catch_signals: Save and exit cleanly on SIGTERM / Ctrl-C. In a cluster
      a SIGTERM to any worker stops every worker at the same step; each
      saves and exits with code 143 ("restart me").
    async_save: Write each checkpoint to memory and return, then copy it
      into `save_dir` in a background thread while training goes on: the
      loop waits for a copy in memory, not a write (a run ends once the
      last copy is in). Every guarantee stays: a kill during the copy
      leaves the previous checkpoint current, and resume is exact.
    termination_watcher: A callable returning True once this machine is
      about to be taken away (a platform's maintenance notice, as
      TensorFlow's `TerminationConfig` takes); asked at each call boundary,
      it stops the run as a SIGTERM does.
    export_dir: Write a SavedModel for serving here (`self.export`) when a
      run ends without a signal or error, after early stopping restored the
      best weights (also when a restart finds the run done and no export
      there). An earlier export in that folder is replaced.
    unused_variables: What to do when variables given to `apply_update` get
      no gradient (a layer built but not used by the loss): "warn" once
      naming them, "raise", or "ignore".
    precision: "float32", "mixed_float16" or "mixed_bfloat16" (or a
      `snt.scenarios.Precision` with loss-scale settings). Mixed: models
      run through `self.forward` compute in float16/bfloat16 with float32
      variables; outputs, losses, the NaN guard and the optimizer stay
      float32. "mixed_float16" scales the loss dynamically in the compiled
      step: an update whose gradients overflow is skipped (counted in
      `overflowed_updates`, not a NaN error) and halves the scale; 2000
      finite updates in a row double it (logged as "loss_scale",
      checkpointed). Building, evaluation and export run in float32.
    nonfinite_check: How the NaN guard checks (see `on_nonfinite`). "step":
      every update is checked before it is applied (exact step; one more
      read of every gradient and a condition before each update). "call":
      each step's loss is checked as it comes, and every floating variable
      of the state once at the end of each compiled call; a call in which
      anything went non-finite is undone (the state returns to where the
      call began; the data iterator stays where it is) and the run stops.
      Faster where compute dominates, but it keeps a copy of the state
      during a call, cannot skip ("raise" only), and a gradient that goes
      non-finite under a finite loss is found at the next step's loss or at
      the end of the call. "auto": "call" when a call makes at least 8
      updates (`steps_per_call` times `updates_per_step`) and
      `on_nonfinite="raise"` without loss scaling, else "step".
  """

  def __new__(cls, *args, **kwargs):
    del args  # Checked by __init__.
    # A misspelt loop setting would otherwise be reported against
    # Scenario.__init__, which the user never called, with no suggestion.
    arguments.check_keywords(cls.__name__, kwargs,
                             arguments.keyword_names(cls))
    return super().__new__(cls)

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
               precision: str | precision_lib.Precision = "float32",
               nonfinite_check: str = "auto"):
    owner = type(self).__name__
    self.precision = precision_lib.parse(owner, precision)
    self._forward = precision_lib.Forward(owner, self.precision)
    for name, value, optional in (
        ("num_steps", num_steps, False),
        ("steps_per_call", steps_per_call, False),
        ("eval_every", eval_every, True), ("save_every", save_every, True),
        ("log_every", log_every, False), ("max_to_keep", max_to_keep, False)):
      arguments.check_positive_int(owner, name, value, optional)
    if save_every is not None and save_dir is None:
      raise ValueError(f"{owner}: save_every needs a save_dir, got "
                       "save_dir=None.")
    if restart and save_dir is None:
      raise ValueError(f"{owner}: restart=True needs a save_dir, got "
                       "save_dir=None.")
    if unused_variables not in UNUSED_POLICIES:
      raise ValueError(f"{owner}: unused_variables must be one of "
                       f"{list(UNUSED_POLICIES)}, got {unused_variables!r}.")
    if on_nonfinite not in NONFINITE_POLICIES:
      raise ValueError(f"{owner}: on_nonfinite must be one of "
                       f"{list(NONFINITE_POLICIES)}, got {on_nonfinite!r}.")
    if nonfinite_check not in NONFINITE_CHECKS:
      raise ValueError(f"{owner}: nonfinite_check must be one of "
                       f"{list(NONFINITE_CHECKS)}, got {nonfinite_check!r}.")
    if nonfinite_check == "call" and on_nonfinite == "skip":
      raise ValueError(f"{owner}: nonfinite_check='call' undoes a whole "
                       "compiled call and cannot drop single updates; use "
                       "nonfinite_check='step' (or 'auto') with "
                       "on_nonfinite='skip'.")
    if nonfinite_check == "call" and self.precision.scales_loss:
      raise ValueError(f"{owner}: nonfinite_check='call' cannot be used with "
                       f"precision={self.precision.policy!r}: the loss scale "
                       "checks every update for overflow; use "
                       "nonfinite_check='step' (or 'auto').")
    if clip_norm is not None and not clip_norm > 0:
      raise ValueError(f"{owner}: clip_norm must be positive or None, got "
                       f"{clip_norm!r}.")
    if strategy is not None and not isinstance(strategy,
                                               tf.distribute.Strategy):
      raise TypeError(f"{owner}: strategy must be a tf.distribute.Strategy or "
                      f"None, got {strategy!r}.")
    hooks = tuple(hooks)
    for hook in hooks:
      if not isinstance(hook, hooks_lib.Hook):
        raise TypeError(f"{owner}: hooks must be Hook instances, got "
                        f"{hook!r}.")
    self.num_steps, self.steps_per_call = num_steps, steps_per_call
    self.eval_every, self.save_every = eval_every, save_every
    self.save_dir = None if save_dir is None else files.normalized(save_dir)
    self.log_every = log_every
    self.max_to_keep, self.jit_compile = max_to_keep, jit_compile
    self._strategy = strategy
    self.on_nonfinite, self.clip_norm, self.seed = on_nonfinite, clip_norm, seed
    self.hooks, self.progress, self.tensorboard = hooks, progress, tensorboard
    self.catch_signals, self.restart = catch_signals, restart
    if termination_watcher is not None and not callable(termination_watcher):
      raise TypeError(f"{owner}: termination_watcher must be a callable "
                      f"returning a bool, or None, got "
                      f"{termination_watcher!r}.")
    self.termination_watcher = termination_watcher
    self.async_save = async_save
    self.unused_variables = unused_variables
    self.nonfinite_check = nonfinite_check
    self.export_dir = (None if export_dir is None
                       else files.normalized(export_dir))
    if export_dir is not None and type(self).export is Scenario.export:
      raise ValueError(NO_EXPORT_ERROR.format(owner=owner))
    self._warned_unused: set[tuple[str, ...]] = set()
    self.history: history_lib.History | None = None
    self.train_function: Any = None
    self.rng: tf.random.Generator | None = None
    self._stop_reason: str | None = None
    self._finished: tf.Variable | None = None
    self._train_dataset: tf.data.Dataset | None = None
    self._iterator: Any = None
    self._traced = step_lib.TracedLoop()

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
    share per replica, or None without data. A tuple is unpacked into
    `train_step`'s arguments, so this default returns `(batch,)`. Override
    it to draw more (several batches, noise from `self.rng`).
    """
    if self._iterator is None:
      return None
    return (self.split_for_replicas(self.next_batch()),)

  def next_batch(self) -> Any:
    """Traced, cross-replica: the next global batch of the data fed, whole.

    For a `next_inputs` override that draws per-example noise from
    `self.rng` for the whole global batch (so a multi-replica run draws what
    one device would) and then cuts both with `split_for_replicas`.
    """
    if self._iterator is None:
      raise ValueError(f"{type(self).__name__}: no data was fed; call "
                       "self.feed(data, batch_size=...) in __call__.")
    return next(self._iterator)

  def split_for_replicas(self, values: Any) -> Any:
    """Traced, cross-replica: one equal share of each global batch per replica.

    `values` is a nest of tensors whose first axis is the global batch; a
    tuple comes back as a tuple (of per-replica values), so `next_inputs`
    can return it as `train_step`'s arguments. With one replica it is
    `values` itself.
    """
    return data_lib.split_for_replicas(self.strategy, values)

  def train_step(self, *inputs: Any) -> dict[str, tf.Tensor]:
    """Traced, per replica: one step on `next_inputs()`; returns scalar logs.

    With `feed`, it is `train_step(batch)`: this replica's share of the
    batch, with the structure of the data. Change weights only through
    `self.apply_update(optimizer, grads, variables, loss=loss)`, and return a
    dict of scalars ("loss" is checked for NaN/Inf with the update).
    """
    raise NotImplementedError(
        f"{type(self).__name__} must implement train_step(*inputs).")

  # ---- Data the engine feeds. ----

  def feed(self, data: data_lib.Data, *, batch_size: int,
           shuffle: bool = True, argument: str = "train_data",
           check: Callable[[Any], None] | None = None) -> None:
    """Declares the training data; call it in `__call__`, before `run()`.

    The engine turns `data` (arrays, nests of arrays, or a `tf.data.Dataset`
    of batches) into an endless, seeded pipeline, checks its first element
    (`check(element_spec)` adds the scenario's own rule) before anything is
    traced, checkpoints the iterator (resume continues mid-epoch) and hands
    each replica its share of every batch through `next_inputs`.

    Args:
      data: The data, as the user gave it.
      batch_size: Global batch size for arrays (a dataset is used as
        batched).
      shuffle: Reshuffle arrays every epoch (from `seed`).
      argument: The argument's name, for errors.
      check: Raises an error naming the scenario and `argument` if the
        element structure is not what the scenario takes.
    """
    self._train_dataset = data_lib.training_dataset(
        type(self).__name__, argument, data, batch_size, self.seed, shuffle,
        check)

  @property
  def element_spec(self) -> Any:
    """The structure of the fed data's batches (`tf.TensorSpec` leaves)."""
    if self._train_dataset is None:
      raise ValueError(f"{type(self).__name__}: no data was fed; call "
                       "self.feed(data, batch_size=...) first.")
    return self._train_dataset.element_spec

  def example_batch(self, size: int = 2) -> Any:
    """A batch of zeros shaped like the fed data, to create variables."""
    return data_lib.zeros_like_batch(self.element_spec, size)

  def build_optimizer(self, optimizer: Any,
                      variables: Sequence[tf.Variable]) -> None:
    """Creates `optimizer`'s slots for `variables` now; use in `build()`.

    Needed under a multi-replica strategy, where slots cannot be created
    inside the compiled step; it changes no value. A Keras
    `LossScaleOptimizer` is refused (use `precision="mixed_float16"`).
    """
    precision_lib.check_optimizer(type(self).__name__, optimizer)
    step_lib.build_optimizer(optimizer, variables)

  def evaluate_now(self) -> dict[str, float] | None:
    """Python: metrics at an eval boundary, or None to skip evaluation."""
    return None

  # ---- Services for steps and hooks. ----

  @property
  def strategy(self) -> tf.distribute.Strategy:
    return self._strategy or tf.distribute.get_strategy()

  @property
  def is_chief(self) -> bool:
    return checkpointing.is_chief(self.strategy)

  @property
  def step(self) -> int:
    """Steps completed so far."""
    counter = self._traced.step
    return int(counter.numpy()) if counter is not None else 0

  @property
  def step_variable(self) -> tf.Variable:
    """The step counter as a variable, for traced code.

    An int64 variable holding the steps completed before the running one;
    `run` creates it.
    """
    return self._traced.step

  @property
  def updates_per_step(self) -> int:
    """How many optimizer updates one step makes; 1 unless a scenario says
    more (a GAN's `n_critic + 1`, PPO's epochs times minibatches). With
    `steps_per_call` it decides how `nonfinite_check="auto"` checks."""
    return 1

  @property
  def checks_per_call(self) -> bool:
    """Whether the NaN guard checks once per compiled call
    (`nonfinite_check`, "auto" resolved)."""
    if self.nonfinite_check != "auto":
      return self.nonfinite_check == "call"
    return (self.on_nonfinite == "raise" and not self.precision.scales_loss
            and self.steps_per_call * self.updates_per_step >=
            CALL_CHECK_MIN_UPDATES)

  @property
  def skipped_steps(self) -> int:
    counter = self._traced.skipped
    return int(counter.numpy()) if counter is not None else 0

  @property
  def loss_scale(self) -> float | None:
    """The current loss scale under "mixed_float16", else None."""
    scale = self._traced.loss_scale
    return None if scale is None else float(scale.scale.numpy())

  @property
  def overflowed_updates(self) -> int:
    """Updates skipped because their scaled gradients overflowed."""
    scale = self._traced.loss_scale
    return 0 if scale is None else int(scale.overflows.numpy())

  def forward(self, model: Any, inputs: Any,
              is_training: bool | None = None) -> Any:
    """`model(inputs)` in the scenario's precision; use in `train_step`.

    Under a mixed precision, while the training step is traced, the call
    computes in float16/bfloat16: floating inputs and the trainable
    variables that `snt.Module`s read are cast, floating outputs come back
    in float32 (one `snt.mixed_precision.call_in`). A model that cannot be
    cast (a Keras model, a plain function) or that still computes in
    float32 runs as written, with a warning naming it. Elsewhere, and under
    "float32", it is a plain call. `is_training` is passed where the model
    takes it (None: not passed).
    """
    if is_training is None:
      call = model
    else:
      call = lambda x: utils.call_model(model, x, is_training)
    return self._forward(model, call, inputs)

  def gradients(self, tape: tf.GradientTape, loss: tf.Tensor,
                variables: Sequence[tf.Variable]) -> list[Any]:
    """The gradients of `loss` for `apply_update`; use in `train_step`.

    `tape.gradient(loss, variables)`, except under "mixed_float16", where
    they are gradients of the loss times the loss scale (the backward pass
    runs in float16, where small gradients would flush to zero);
    `apply_update` unscales them. Pass them to it unchanged.
    """
    return self._traced.gradients(tape, loss, variables)

  def model_variables(self) -> list[tf.Variable]:
    return [v for m in self.models().values() for v in m.variables]

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

  def apply_update(self, optimizer: Any, grads: Any, variables: Any,
                   loss: tf.Tensor | None = None) -> tf.Tensor:
    """Applies gradients with the NaN guard and clipping; use in train_step.

    Under a multi-replica strategy the gradients are summed over replicas
    here, so compute them from a loss scaled by the global batch size.

    Returns:
      A scalar bool tensor: whether the update was finite.
    """
    precision_lib.check_optimizer(type(self).__name__, optimizer)
    grads, variables = list(grads), list(variables)
    unused = [v.name for g, v in zip(grads, variables) if g is None]
    if unused and self.unused_variables != "ignore":
      message = UNUSED_VARIABLES.format(owner=type(self).__name__,
                                        names=unused)
      if self.unused_variables == "raise":
        raise ValueError(message)
      if tuple(unused) not in self._warned_unused:  # Once per set.
        self._warned_unused.add(tuple(unused))
        warnings.warn(message, stacklevel=2)
    return self._traced.apply_update(optimizer, grads, variables, loss,
                                     self.clip_norm, type(self).__name__)

  # ---- The Python side. ----

  def _calls_until_boundary(self, step: int) -> int:
    boundary = self.num_steps
    for every in (self.eval_every, self.save_every, self.log_every):
      if every:
        boundary = min(boundary, (step // every + 1) * every)
    return min(boundary - step, self.steps_per_call)

  def _say(self, message: str) -> None:
    if self.is_chief:
      print(message, file=sys.stderr, flush=True)

  def _make_hooks(self) -> list[hooks_lib.Hook]:
    self.history = history_lib.History(self.log_every)
    made: list[hooks_lib.Hook] = [self.history]
    if self.progress is not False:
      made.append(progress.ProgressBar(disable=None if self.progress is None
                                       else False))
    if self.tensorboard and self.save_dir:
      made.append(tensorboard.TensorBoard(files.join(self.save_dir, "logs"),
                                          self.log_every))
    return made + list(self.hooks)

  def _save(self, checkpointer, step: int) -> str | None:
    if checkpointer is None:
      return None
    path = checkpointer.save(step)
    if self.is_chief:
      self.history.save(self.save_dir)
    return path

  def run(self) -> history_lib.History:
    """Runs (or resumes) the loop; returns the `History`.

    Three phases: `_restore` (state, checkpoint, "already done?"), `_train`
    (the loop, hooks, signals) and `_finish` (the last save).
    """
    strategy = self.strategy
    self._stop_reason = None
    creator = (_sonnet_aggregation if strategy.num_replicas_in_sync > 1
               else lambda next_creator, **kwargs: next_creator(**kwargs))
    # `cleanup` releases the folder's lock however the run ends (normally,
    # already done, an exception, or the sys.exit of a caught signal).
    with contextlib.ExitStack() as cleanup:
      with strategy.scope(), tf.variable_creator_scope(creator):
        hooks, checkpointer, done = self._restore(cleanup)
        if not done:
          self._train(hooks, checkpointer)
          self._finish(checkpointer)
      self._export_at_end(missing_only=done)
    return self.history

  def export(self, directory: str) -> str:
    """Writes the trained model(s) as a SavedModel for serving; the path.

    Called at the end of a run when `export_dir` is set; scenarios override
    it (Supervised: the model; GAN: the generator as a sampler; RL: the
    policy) with `snt.export`.
    """
    raise NotImplementedError(NO_EXPORT_ERROR.format(owner=type(self).__name__))

  def _export_at_end(self, missing_only: bool = False) -> None:
    """`self.export(export_dir)` on the chief, into scratch elsewhere.

    Every worker exports, since reading distributed variables to save them
    may involve collectives; only the chief writes `export_dir`.
    """
    if self.export_dir is None or (missing_only and files.exists(
        files.join(self.export_dir, "saved_model.pb"))):
      return
    if self.is_chief:
      path = self.export(self.export_dir)
      self._say(f"{type(self).__name__}: exported to {path}.")
      return
    scratch = tempfile.mkdtemp(prefix="export-scratch-")
    try:
      self.export(os.path.join(scratch, "export"))
    finally:
      shutil.rmtree(scratch, ignore_errors=True)

  def _create_state(self) -> None:
    """The engine's variables, the data iterator, then the scenario's."""
    self._traced.create(self.precision, per_call=self.checks_per_call)
    self._finished = tf.Variable(False, trainable=False, name="finished")
    self.rng = utils.seeded_generator(self.seed)
    self._iterator = (None if self._train_dataset is None
                      else iter(self._train_dataset))
    self.build()

  def _checkpointed(self, hooks: list[hooks_lib.Hook]) -> dict[str, Any]:
    """Everything the checkpoint holds, by name: the run's state and each
    hook's (made here: `Hook.state` is called once per run)."""
    named = {}
    for i, hook in enumerate(hooks):
      state = hook.state(self)
      if state is not None:
        named[f"hook_{i}_{type(hook).__name__}"] = state
    return dict(named, **self._run_state())

  def _run_state(self) -> dict[str, Any]:
    """What the compiled steps change, by name: `trackables()` and the
    engine's own state (step, generator, counters, the data iterator)."""
    owner = type(self).__name__
    named = dict(self.trackables())
    engine_owned = {"step": self._traced.step, "rng": self.rng,
                    "skipped": self._traced.skipped,
                    "finished": self._finished}
    if self._iterator is not None:
      engine_owned["data"] = self._iterator
    if self._traced.loss_scale is not None:
      engine_owned["loss_scale"] = self._traced.loss_scale
    clash = set(engine_owned) & set(named)
    if clash:
      raise ValueError(f"{owner}: trackables() must not use the names "
                       f"{sorted(clash)}, which the engine uses.")
    return dict(named, **engine_owned)

  def _restore(self, cleanup: contextlib.ExitStack
               ) -> tuple[list[hooks_lib.Hook], Any, bool]:
    """Creates the state and restores it; `done` if nothing is left to do.

    The checkpointer checks and locks `save_dir` (released by `cleanup`),
    refuses a checkpoint that does not match, and loads the history.
    """
    owner = type(self).__name__
    self._create_state()
    hooks = self._make_hooks()
    if not self.save_dir:
      return hooks, None, False
    checkpointer = checkpointing.Checkpointer(
        self.save_dir, self._checkpointed(hooks),
        max_to_keep=self.max_to_keep, strategy=self.strategy, owner=owner,
        restart=self.restart, history=self.history,
        async_save=self.async_save)
    cleanup.callback(checkpointer.close)
    restored = checkpointer.restore()
    if restored:
      finished = bool(self._finished.numpy())
      if self.step >= self.num_steps or finished:
        reason = self.history.stop_reason
        self._say(DONE_MESSAGE.format(
            owner=owner, save_dir=self.save_dir, step=self.step,
            num_steps=self.num_steps,
            reason=f"; {reason}" if finished and reason else ""))
        return hooks, checkpointer, True
      self._say(f"{owner}: resuming from {restored} at step {self.step}.")
    self.history.stop_reason = ""
    return hooks, checkpointer, False

  def _train(self, hooks: list[hooks_lib.Hook], checkpointer: Any) -> None:
    """The loop with its hooks; on SIGTERM/Ctrl-C, saves and exits."""
    state = [value for name, value in self._run_state().items()
             if name != "data"]  # The iterator cannot be rolled back.
    self.train_function = self._traced.compile(self, state)
    owner = type(self).__name__
    with signals.catch_stop_signals(
        self.catch_signals, agree=cluster.agreement(self.strategy),
        watcher=self.termination_watcher) as caught:
      for hook in hooks:
        hook.begin(self)
      path = None
      try:
        with cluster.names_a_lost_worker(owner, self.strategy):
          self._loop(hooks, checkpointer, caught)
          if caught:  # Saved before hooks end (EarlyStopping may restore).
            self.history.stop_reason = caught.signal_name
            path = self._save(checkpointer, self.step)
      finally:
        for hook in hooks:
          hook.end(self)
      if caught:
        saved = f"saved {path}" if path else "nothing was saved (no save_dir)"
        self._say(RESUME_MESSAGE.format(owner=owner,
                                        signal=caught.signal_name,
                                        step=self.step, saved=saved))
        sys.exit(caught.exit_code)

  def _finish(self, checkpointer: Any) -> None:
    """Records why the run ended and saves its last state."""
    self.history.stop_reason = self._stop_reason or "done"
    if checkpointer is not None:
      latest = checkpointer.latest
      if not latest or not latest.endswith(f"-{self.step}"):
        self._save(checkpointer, self.step)
      elif self.is_chief:
        self.history.save(self.save_dir)

  def _loop(self, hooks, checkpointer, caught) -> None:
    step = self.step
    sizes: dict[int, tf.Tensor] = {}  # Reused: no new tensor per call.
    # The one trace, called directly: skips tf.function's per-call dispatch
    # (~10% of a small model's step at steps_per_call=1).
    call = self.train_function.get_concrete_function(
        tf.TensorSpec([], tf.int32))
    while (step < self.num_steps and self._stop_reason is None and
           not caught.agreed()):
      n = self._calls_until_boundary(step)
      if n not in sizes:
        sizes[n] = tf.constant(n, tf.int32)
      logs, finite = call(sizes[n])
      if bool(finite) or self.on_nonfinite == "skip":
        step += n
      else:
        self._raise_nonfinite(checkpointer, start=step, count=n)
      logs = Logs(logs)
      if self.on_nonfinite == "skip":
        logs.extra["skipped"] = lambda: float(self.skipped_steps)
      at_end = step >= self.num_steps
      if at_end or (self.eval_every and step % self.eval_every == 0):
        metrics = self.evaluate_now()
        if metrics is not None:
          for hook in hooks:
            hook.eval_end(self, step, metrics)
      for hook in hooks:
        hook.step_end(self, step, logs)
      if self.save_every and step % self.save_every == 0:
        self._save(checkpointer, step)

  def _raise_nonfinite(self, checkpointer: Any, start: int, count: int):
    """Raises `NonFiniteError` for the call of `count` steps from `start`."""
    owner = type(self).__name__
    latest = checkpointer.latest if checkpointer else None
    checkpoint = f"; the last good checkpoint is {latest}" if latest else ""
    if not self.checks_per_call:
      step = self.step
      raise NonFiniteError(NONFINITE_ERROR.format(
          owner=owner, step=step, done=step, checkpoint=checkpoint), step)
    failed_at = int(self._traced.rollback.failed_at.numpy())
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
    raise NonFiniteError(NONFINITE_CALL_ERROR.format(
        owner=owner, where=where, why=why, start=start, end=end,
        checkpoint=checkpoint), step)


class Logs(collections.abc.Mapping):
  """A call's logs, turned into Python floats only when a hook reads them."""

  def __init__(self, tensors: dict[str, tf.Tensor]):
    self._tensors, self._floats = tensors, {}
    self.extra: dict[str, Any] = {}

  def __getitem__(self, key: str) -> float:
    if key not in self._floats:
      if key in self.extra:
        self._floats[key] = self.extra[key]()
      else:
        self._floats[key] = float(self._tensors[key])
    return self._floats[key]

  def __iter__(self):
    yield from self._tensors
    yield from self.extra

  def __len__(self) -> int:
    return len(self._tensors) + len(self.extra)

  def __repr__(self) -> str:
    return repr(dict(self))
