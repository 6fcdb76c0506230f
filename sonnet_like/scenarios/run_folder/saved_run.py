"""A run's hooks and checkpoint: made, restored and saved for `Scenario.run`.

`SavedRun` makes the built-in hooks (the `History` first, the progress bar,
TensorBoard under `save_dir/logs`, the user's, then those of
`profile_steps` and `keep_best`) and, with a `save_dir`,
the `checkpointing.Checkpointer` of everything the run's future depends on
(the state `Scenario` names and each hook's `state`). It restores that
state, tells whether the run is already done, and saves a step's
checkpoint with `history.json`.
"""

import contextlib
import json
from typing import Any

from sonnet_like.core import files
from sonnet_like.scenarios.run_folder import checkpointing
from sonnet_like.scenarios.run_folder import history as history_lib
from sonnet_like.scenarios import hooks as hooks_lib
from sonnet_like.scenarios.run_folder import keep_best
from sonnet_like.scenarios.reporting import profiling
from sonnet_like.scenarios.reporting import progress
from sonnet_like.scenarios.run_folder import run_settings
from sonnet_like.scenarios.reporting import tensorboard

DONE_MESSAGE = (
    "{owner}: training in {save_dir} is already done ({step} of {num_steps} "
    "steps{reason}). Raise num_steps to train more, or pass restart=True to "
    "start over (the finished run is moved aside, not deleted).")


class SavedRun:
  """The hooks and the checkpoint of one run of `scenario`.

  Args:
    scenario: The scenario running; gives its settings, `strategy`,
      `is_chief` and (to hooks' `state`) itself.
  """

  def __init__(self, scenario: Any):
    self.scenario = scenario
    self.owner = type(scenario).__name__
    loop, self.settings = scenario.loop, scenario.checkpointing
    self.history = history_lib.History(loop.log_every)
    self.hooks: list[hooks_lib.Hook] = [self.history]
    if loop.progress is not False:
      self.hooks.append(progress.ProgressBar(
          disable=None if loop.progress is None else False))
    save_dir = self.settings.save_dir
    if loop.tensorboard and save_dir:
      self.hooks.append(tensorboard.TensorBoard(
          files.join(save_dir, "logs"), loop.log_every))
    self.hooks += list(loop.hooks)
    if loop.profile_steps:
      self.hooks.append(profiling.Profiler(
          self.owner, files.join(save_dir, "logs"), loop.profile_steps))
    if self.settings.keep_best:  # Last: the user's hooks keep their names.
      self.hooks.append(keep_best.KeepBest(
          self.owner, self.settings.keep_best, self.settings.best_mode,
          save_dir, lambda: self.checkpointer.checkpoint))
    self.checkpointer: checkpointing.Checkpointer | None = None

  def restore(self, state: dict[str, Any],
              cleanup: contextlib.ExitStack) -> str | None:
    """Restores `state` (and the hooks') from `save_dir`; the checkpoint
    read, or None. The checkpointer checks and locks `save_dir` (released
    by `cleanup`), refuses a checkpoint that does not match, and loads the
    history; the settings recorded with it are compared with this run's
    (`run_settings.RunSettings.reconcile`)."""
    if not self.settings.save_dir:
      return None
    recorded = run_settings.RunSettings(self.scenario)
    named = {run_settings.NAME: recorded}
    for i, hook in enumerate(self.hooks):  # `Hook.state`: once per run.
      hook_state = hook.state(self.scenario)
      if hook_state is not None:
        named[f"hook_{i}_{type(hook).__name__}"] = hook_state
    self.checkpointer = checkpointing.Checkpointer(
        self.settings.save_dir, dict(named, **state),
        max_to_keep=self.settings.max_to_keep,
        strategy=self.scenario.strategy, owner=self.owner,
        restart=self.settings.restart, history=self.history,
        async_save=self.settings.async_save)
    cleanup.callback(self.checkpointer.close)
    path = self.checkpointer.restore()
    if path is not None:
      recorded.reconcile(self.scenario.say)
    return path

  def done_message(self, step: int, num_steps: int, finished: bool) -> str:
    reason = self.history.stop_reason
    return DONE_MESSAGE.format(
        owner=self.owner, save_dir=self.settings.save_dir, step=step,
        num_steps=num_steps,
        reason=f"; {reason}" if finished and reason else "")

  @property
  def latest(self) -> str | None:
    """The newest checkpoint, if any."""
    if self.checkpointer is None:
      return None
    return self.checkpointer.latest

  def save(self, step: int) -> str | None:
    """Saves the checkpoint of `step`, then the history of `step` (in the
    background with `async_save`); the checkpoint's path."""
    if self.checkpointer is None:
      return None
    return self.checkpointer.save(step, after={
        history_lib.History.FILE: json.dumps(self.history.to_dict())})

  def finish(self, step: int, reason: str) -> None:
    """Records why the run ended, saves its last state (once) and waits
    for it to be written (an `async_save` error is raised here)."""
    self.history.stop_reason = reason
    if self.checkpointer is None:
      return
    latest = self.latest
    saving = not latest or not latest.endswith(f"-{step}")
    if saving:  # The history, with the reason, follows the checkpoint.
      self.save(step)
    self.checkpointer.wait()
    if not saving and self.scenario.is_chief:
      self.history.save(self.settings.save_dir)
