"""`Scenario`: the training-loop engine that every scenario is built on.

A scenario splits into a traced side and a Python side, like Keras'
`train_step` + `make_train_function`:

- traced: `next_inputs()` (cross-replica, e.g. `next(iterator)`) and
  `train_step(inputs)` (per replica, returns a dict of scalar logs and changes
  weights through `self.apply_update`). The engine compiles them into one
  `tf.function` that runs up to `steps_per_call` steps per call.
- Python: the loop below, which splits calls at log/eval/save boundaries, runs
  hooks, evaluations and checkpoints, and handles signals.

A subclass declares what it trains with `models()` and everything that
decides the rest of the run with `trackables()`; the engine adds the step
counter, its random generator and the skip counter, and restores all of it
before the first step. Nothing here assumes one model, one optimizer or a
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
import sys
from typing import Any, Iterable

import tensorflow as tf

from sonnet_like.core import utils
from sonnet_like.scenarios import checkpointing
from sonnet_like.scenarios import history as history_lib
from sonnet_like.scenarios import hooks as hooks_lib
from sonnet_like.scenarios import progress
from sonnet_like.scenarios import signals
from sonnet_like.scenarios import step as step_lib
from sonnet_like.scenarios import tensorboard

NONFINITE_POLICIES = ("raise", "skip")

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

RESUME_MESSAGE = (
    "\n{owner}: caught {signal} at step {step}; {saved}. Run the same command "
    "again to resume from there.")


class NonFiniteError(FloatingPointError):
  """A loss or gradient was NaN/Inf; `step` is the failing step (0-based)."""

  def __init__(self, message: str, step: int):
    super().__init__(message)
    self.step = step


def _check_positive(owner: str, name: str, value: Any,
                    optional: bool = True) -> None:
  if value is None and optional:
    return
  if isinstance(value, bool) or not isinstance(value, int) or value < 1:
    raise ValueError(f"{owner}: {name} must be a positive int"
                     f"{' or None' if optional else ''}, got {value!r}.")


def _sonnet_aggregation(next_creator, **kwargs):
  # Sonnet optimizers assign to variables in replica context, which mirrored
  # variables only allow with an aggregation (as Sonnet's Replicator does).
  if kwargs.get("aggregation") in (None, tf.VariableAggregation.NONE):
    kwargs["aggregation"] = tf.VariableAggregation.ONLY_FIRST_REPLICA
  return next_creator(**kwargs)


class Scenario:
  """Base class of scenarios: owns the loop, the checkpoint and the hooks.

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
    catch_signals: Save and exit cleanly on SIGTERM / Ctrl-C.
  """

  def __init__(self, num_steps: int, *, steps_per_call: int = 1,
               eval_every: int | None = None, save_every: int | None = None,
               save_dir: str | None = None, log_every: int = 100,
               max_to_keep: int = 3, jit_compile: bool = False,
               strategy: tf.distribute.Strategy | None = None,
               on_nonfinite: str = "raise", clip_norm: float | None = None,
               seed: int = 0, hooks: Iterable[hooks_lib.Hook] = (),
               progress: bool | None = None, tensorboard: bool = True,
               catch_signals: bool = True, restart: bool = False):
    owner = type(self).__name__
    _check_positive(owner, "num_steps", num_steps, optional=False)
    _check_positive(owner, "steps_per_call", steps_per_call, optional=False)
    _check_positive(owner, "eval_every", eval_every)
    _check_positive(owner, "save_every", save_every)
    _check_positive(owner, "log_every", log_every, optional=False)
    _check_positive(owner, "max_to_keep", max_to_keep, optional=False)
    if save_every is not None and save_dir is None:
      raise ValueError(f"{owner}: save_every needs a save_dir, got "
                       "save_dir=None.")
    if restart and save_dir is None:
      raise ValueError(f"{owner}: restart=True needs a save_dir, got "
                       "save_dir=None.")
    if on_nonfinite not in NONFINITE_POLICIES:
      raise ValueError(f"{owner}: on_nonfinite must be one of "
                       f"{list(NONFINITE_POLICIES)}, got {on_nonfinite!r}.")
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
    self.save_dir, self.log_every = save_dir, log_every
    self.max_to_keep, self.jit_compile = max_to_keep, jit_compile
    self._strategy = strategy
    self.on_nonfinite, self.clip_norm, self.seed = on_nonfinite, clip_norm, seed
    self.hooks, self.progress, self.tensorboard = hooks, progress, tensorboard
    self.catch_signals, self.restart = catch_signals, restart
    self.history: history_lib.History | None = None
    self.train_function: Any = None
    self.rng: tf.random.Generator | None = None
    self._step_var: tf.Variable | None = None
    self._skipped: tf.Variable | None = None
    self._stop_reason: str | None = None
    self._recorder = step_lib.FiniteRecorder()

  # ---- What a subclass provides. ----

  def models(self) -> dict[str, tf.Module]:
    """The modules being trained, by name (early stopping restores them)."""
    return {}

  def trackables(self) -> dict[str, Any]:
    """Everything else the checkpoint must hold, by name.

    Models and optimizers at least; also iterators, replay buffers,
    environment state, EMA weights. Names must not be "step", "rng" or
    "skipped", which the engine uses.
    """
    return dict(self.models())

  def build(self) -> None:
    """Creates variables (eagerly, in the strategy scope) before restore."""

  def next_inputs(self) -> Any:
    """Traced, cross-replica: the next step's inputs, or None."""
    return None

  def train_step(self, *inputs: Any) -> dict[str, tf.Tensor]:
    """Traced, per replica: one step. Returns scalar logs (e.g. "loss")."""
    raise NotImplementedError(
        f"{type(self).__name__} must implement train_step(*inputs).")

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
    return int(self._step_var.numpy()) if self._step_var is not None else 0

  @property
  def skipped_steps(self) -> int:
    return int(self._skipped.numpy()) if self._skipped is not None else 0

  def model_variables(self) -> list[tf.Variable]:
    return [v for m in self.models().values() for v in m.variables]

  def request_stop(self, reason: str) -> None:
    """Ends training after the current call (hooks use this)."""
    self._stop_reason = reason

  def apply_update(self, optimizer: Any, grads: Any, variables: Any,
                   loss: tf.Tensor | None = None) -> tf.Tensor:
    """Applies gradients with the NaN guard and clipping; use in train_step.

    Under a multi-replica strategy the gradients are summed over replicas
    here, so compute them from a loss scaled by the global batch size.

    Returns:
      A scalar bool tensor: whether the update was finite.
    """
    return step_lib.apply_update(optimizer, grads, variables, loss=loss,
                                 clip_norm=self.clip_norm,
                                 recorder=self._recorder)

  # ---- The traced side. ----

  def _guarded_step(self, *inputs):
    self._recorder.start()
    logs = dict(self.train_step(*inputs))
    loss = logs.get("loss")
    checked = loss is not None and self._recorder.checked(loss)
    finite = self._recorder.finish()
    if loss is not None and not checked:
      finite = tf.logical_and(finite, step_lib.all_finite([loss]))
    if self.strategy.num_replicas_in_sync > 1:  # Summed across replicas.
      return logs, 1.0 - tf.cast(finite, tf.float32)
    return logs, finite

  def _one_step(self):
    strategy = self.strategy
    inputs = self.next_inputs()
    args = () if inputs is None else (
        tuple(inputs) if isinstance(inputs, tuple) else (inputs,))
    logs, finite = strategy.run(self._replica_step, args)
    if strategy.num_replicas_in_sync > 1:
      logs = {k: strategy.reduce(tf.distribute.ReduceOp.MEAN, v, axis=None)
              for k, v in logs.items()}
      bad = strategy.reduce(tf.distribute.ReduceOp.SUM, finite, axis=None)
      finite = tf.equal(bad, 0.0)
    if self.on_nonfinite == "raise":
      self._step_var.assign_add(tf.cast(finite, tf.int64))
    else:
      self._step_var.assign_add(1)
      self._skipped.assign_add(1 - tf.cast(finite, tf.int64))
    return logs, finite

  def _make_train_function(self):
    self._replica_step = self._guarded_step
    if self.jit_compile:
      if self.strategy.num_replicas_in_sync > 1:
        raise ValueError(f"{type(self).__name__}: jit_compile=True is not "
                         "supported with a multi-replica strategy here; use "
                         "TPUStrategy (always compiled) or jit_compile=False.")
      self._replica_step = tf.function(self._guarded_step, jit_compile=True)
    return step_lib.make_train_function(
        self._one_step, stop_on_nonfinite=self.on_nonfinite == "raise",
        steps_per_call=self.steps_per_call)

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
      made.append(tensorboard.TensorBoard(os.path.join(self.save_dir, "logs"),
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
    """Runs (or resumes) the loop; returns the `History`."""
    owner = type(self).__name__
    strategy = self.strategy
    self._stop_reason = None
    creator = (_sonnet_aggregation if strategy.num_replicas_in_sync > 1
               else lambda next_creator, **kwargs: next_creator(**kwargs))
    with strategy.scope(), tf.variable_creator_scope(creator), \
        contextlib.ExitStack() as cleanup:
      self._step_var = tf.Variable(0, dtype=tf.int64, trainable=False,
                                   name="step")
      self._skipped = tf.Variable(0, dtype=tf.int64, trainable=False,
                                  name="skipped")
      self.rng = utils.seeded_generator(self.seed)
      self._recorder.create()
      self.build()
      hooks = self._make_hooks()
      checkpointer = None
      if self.save_dir:
        named = dict(self.trackables())
        clash = {"step", "rng", "skipped"} & set(named)
        if clash:
          raise ValueError(f"{owner}: trackables() must not use the names "
                           f"{sorted(clash)}, which the engine uses.")
        for i, hook in enumerate(hooks):
          state = hook.state(self)
          if state is not None:
            named[f"hook_{i}_{type(hook).__name__}"] = state
        checkpointer = checkpointing.Checkpointer(
            self.save_dir, dict(named, step=self._step_var, rng=self.rng,
                                skipped=self._skipped),
            max_to_keep=self.max_to_keep, strategy=strategy, owner=owner,
            restart=self.restart, history=self.history)
        cleanup.callback(checkpointer.close)  # The folder's lock.
        restored = checkpointer.restore()  # Also loads the history.
        if restored:
          reason = self.history.stop_reason
          if self.step >= self.num_steps or reason.startswith("early stop"):
            self._say(DONE_MESSAGE.format(
                owner=owner, save_dir=self.save_dir, step=self.step,
                num_steps=self.num_steps,
                reason=f"; {reason}" if reason.startswith("early") else ""))
            return self.history
          self._say(f"{owner}: resuming from {restored} at step {self.step}.")
        self.history.stop_reason = ""
      self.train_function = self._make_train_function()
      with signals.catch_stop_signals(self.catch_signals) as caught:
        for hook in hooks:
          hook.begin(self)
        path = None
        try:
          self._loop(hooks, checkpointer, caught)
          if caught:  # Saved before hooks end (EarlyStopping may restore).
            self.history.stop_reason = caught.signal_name
            path = self._save(checkpointer, self.step)
        finally:
          for hook in hooks:
            hook.end(self)
        if caught:
          saved = f"saved {path}" if path else (
              "nothing was saved (no save_dir)")
          self._say(RESUME_MESSAGE.format(owner=owner,
                                          signal=caught.signal_name,
                                          step=self.step, saved=saved))
          sys.exit(signals.EXIT_CODES[caught.signal_name])
      self.history.stop_reason = self._stop_reason or "done"
      if checkpointer is not None:
        latest = checkpointer.manager.latest_checkpoint
        if not latest or not latest.endswith(f"-{self.step}"):
          self._save(checkpointer, self.step)
        elif self.is_chief:
          self.history.save(self.save_dir)
    return self.history

  def _loop(self, hooks, checkpointer, caught) -> None:
    owner = type(self).__name__
    step = self.step
    sizes: dict[int, tf.Tensor] = {}  # Reused: no new tensor per call.
    # The one trace, called directly: skips tf.function's per-call dispatch
    # (~10% of a small model's step at steps_per_call=1).
    call = self.train_function.get_concrete_function(
        tf.TensorSpec([], tf.int32))
    while step < self.num_steps and self._stop_reason is None and not caught:
      n = self._calls_until_boundary(step)
      if n not in sizes:
        sizes[n] = tf.constant(n, tf.int32)
      logs, finite = call(sizes[n])
      if bool(finite) or self.on_nonfinite == "skip":
        step += n
      else:
        step = self.step
        latest = checkpointer.manager.latest_checkpoint if checkpointer else None
        raise NonFiniteError(NONFINITE_ERROR.format(
            owner=owner, step=step, done=step,
            checkpoint=f"; the last good checkpoint is {latest}"
            if latest else ""), step)
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
