"""`keep_best`: the checkpoint of the best evaluation, kept aside.

With `keep_best="accuracy"` (and `best_mode`, see `best.Best`) each
evaluation that beats the best so far writes the whole state of the run
into `save_dir/best/ckpt-<step>` and then `save_dir/best/best.json` (the
metric, mode, value, step and checkpoint), and only then removes the
previous best checkpoint: a crash at any point leaves `best.json` naming a
complete checkpoint. The folder is not the `CheckpointManager`'s, so
`max_to_keep` never rotates it away. The best value and step live in the
run's checkpoint too (a hook state), so a resumed run goes on comparing
with the best before the interruption. The export at the end of every
run is made here (`export_at_end`): from the best checkpoint with
`keep_best`, with the weight averages with `ema`.

In a population each member has its own best (`population.best_rows`):
the checkpoint written at an evaluation where some member improves holds,
for every member, its models' weights (and averages) at its own best
evaluation so far; the rest of the state is the run's then. `best.json`
adds each member's best `values` and `steps`.
"""

import json
from typing import Any, Callable

import numpy as np
import tensorflow as tf

from sonnet_like.core import files
from sonnet_like.export import workers
from sonnet_like.scenarios import best as best_lib
from sonnet_like.scenarios import hooks

FOLDER = "best"
RECORD = "best.json"

NO_BEST_ERROR = (
    "{owner}: kept_best() needs the checkpoint keep_best writes in "
    "{folder}, and there is none (no evaluation yet, or no keep_best?).")

NO_EVALUATION_ERROR = (
    "{owner}: keep_best={metric!r} needs an evaluation at step {step}, but "
    "the scenario evaluated nothing (evaluate_now() returned None: no "
    "eval_data?). Give the scenario something to evaluate, or drop "
    "keep_best.")


def record(save_dir: str) -> dict[str, Any] | None:
  """What `save_dir/best/best.json` says (metric, mode, value, step,
  checkpoint: the path of the best checkpoint's prefix), or None."""
  path = files.join(save_dir, FOLDER, RECORD)
  if not files.exists(path):
    return None
  saved = json.loads(files.read_text(path))
  saved["checkpoint"] = files.join(save_dir, FOLDER, saved["checkpoint"])
  return saved


class KeepBest(hooks.Hook):
  """Writes the run's checkpoint into `save_dir/best/` at each new best.

  Args:
    owner: The scenario's name, for errors.
    metric: The eval metric (`keep_best`).
    mode: "min", "max" or None (`best.default_mode`) (`best_mode`).
    save_dir: The run's folder.
    checkpoint: What to write: the run's `tf.train.Checkpoint`, or a
      callable returning it (it is made when the run is restored).
  """

  def __init__(self, owner: str, metric: str, mode: str | None,
               save_dir: str,
               checkpoint: Callable[[], tf.train.Checkpoint]):
    self.best = best_lib.Best(owner, "keep_best", metric, mode,
                              mode_argument="best_mode")
    self.owner, self.save_dir = owner, save_dir
    self.folder = files.join(save_dir, FOLDER)
    self._checkpoint = checkpoint
    self._state: tf.Module | None = None
    self._rows: Any = None  # The runner's rows of several copies.
    self._evaluated_at: int | None = None

  def state(self, scenario):
    """The best value and its step, in the run's checkpoint (a runner of
    several copies keeps each copy's, with its rows then)."""
    self._rows = scenario.runner.kept_rows(self.best)
    if self._rows is not None:
      return self._rows
    state = tf.Module(name="keep_best")
    state.value = tf.Variable(np.nan, dtype=tf.float64, trainable=False)
    state.step = tf.Variable(-1, dtype=tf.int64, trainable=False)
    self._state = state
    return state

  def begin(self, scenario):
    if self._rows is not None:
      self._rows.begin()
    elif self._state is not None and self._state.step.numpy() >= 0:
      self.best.value = float(self._state.value.numpy())
      self.best.step = int(self._state.step.numpy())

  def eval_end(self, scenario, step, metrics):
    self._evaluated_at = step
    if self._rows is not None:
      self.best.value_of(metrics)  # The metric's error, as a solo run's.
      if self._rows.update(metrics, step):
        with self._rows.swapped_in():
          self._write(scenario, step)
      return
    if self.best.update(metrics, step):
      self._state.value.assign(self.best.value)
      self._state.step.assign(step)
      self._write(scenario, step)

  def step_end(self, scenario, step, logs):
    every = scenario.eval_every
    at_eval = step >= scenario.num_steps or (every and step % every == 0)
    if at_eval and self._evaluated_at != step:
      raise ValueError(NO_EVALUATION_ERROR.format(
          owner=self.owner, metric=self.best.metric, step=step))

  def _write(self, scenario, step: int) -> None:
    """The checkpoint, then `best.json`, then the previous best removed."""
    name = f"ckpt-{step}"
    if scenario.is_chief:
      files.makedirs(self.folder)
    # Every worker writes (it may take part in collectives); the chief's
    # copy is kept, the others' go to a scratch folder deleted at once.
    if workers.save_on_chief(self._checkpoint().write,
                             files.join(self.folder, name),
                             scenario.is_chief) is None:
      return
    saved = dict(metric=self.best.metric, mode=self.best.mode,
                 value=self.best.value, step=step, checkpoint=name)
    if self._rows is not None:  # Each copy's own.
      saved.update(self._rows.record(), value=None)
    files.write_atomic(files.join(self.folder, RECORD), json.dumps(saved))
    for old in files.listdir(self.folder):
      if old.startswith("ckpt-") and not old.startswith(name + "."):
        files.remove(files.join(self.folder, old))


def exporting_best(scenario: Any) -> Callable[[str], str]:
  """`scenario.export` as the end of a run calls it: with the weight
  averages swapped in (`ema`), from the best checkpoint's state
  (`keep_best`).

  The scenario's trackables (models, optimizers, ...) and the averages are
  read from the best checkpoint, exported, and read back from the run's
  newest checkpoint, so after the run they hold its final state as without
  `keep_best`. Without `keep_best` or a best checkpoint (no evaluation
  yet), or when the newest is the best, the final state is exported. A
  population writes every member (`export_population`), each at its own
  best with `keep_best`.
  """

  def export(directory: str) -> str:
    with scenario.ema_weights():
      return scenario.runner.export(directory)

  if not scenario.keep_best:
    return export
  at_best = scenario.runner.exporting_at_best(export)
  if at_best is not None:
    return at_best
  best = record(scenario.save_dir)
  latest = tf.train.latest_checkpoint(scenario.save_dir)
  if best is None or latest is None or latest.endswith(f"-{best['step']}"):
    return export

  def read(prefix: str) -> None:
    with scenario.strategy.scope():
      tf.train.Checkpoint(**scenario.trackables(),
                          **scenario.traced_step.state()).read(
                              prefix).expect_partial()

  def export_best(directory: str) -> str:
    read(best["checkpoint"])
    try:
      return export(directory)
    finally:
      read(latest)

  return export_best


def export_at_end(scenario: Any, missing_only: bool = False) -> None:
  """The end of a run: `exporting_best` into `export_dir`, written by the
  chief (see `workers`); with `missing_only` (the run was already done)
  only if no export is there."""
  export_dir = scenario.export_dir
  if export_dir is None or (missing_only and
                            workers.has_saved_model(export_dir)):
    return
  path = workers.save_on_chief(exporting_best(scenario), export_dir,
                               scenario.is_chief)
  if path is not None:
    scenario.say(f"{type(scenario).__name__}: exported to {path}.")
