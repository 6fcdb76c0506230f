"""`History`: the train logs and eval metrics of a run, step by step.

The history is written to `save_dir/history.json` (whole or not at all) and
also travels inside every checkpoint (`HistoryState`), so a damaged
`history.json` never blocks a resume: it is moved aside and the history is
rebuilt from the checkpoint that is restored.
"""

import json
import time
from typing import Any

import tensorflow as tf

from sonnet_like.core import files
from sonnet_like.scenarios.reporting import curves
from sonnet_like.scenarios.reporting import logs as logs_lib
from sonnet_like.scenarios import hooks

DAMAGED_ERROR = (
    "{owner}: the history file {path} is damaged ({error}) and the "
    "checkpoint being restored holds no copy of the history (it was written "
    "by an older version). Restore {path} from a backup, or move it aside: "
    "the run then resumes at step {step} with the history of the steps "
    "after it only.")

DAMAGED_LOAD_ERROR = (
    "History.load: the history file {path} is damaged ({error}). Run the "
    "scenario again with the same save_dir: it rebuilds the file from the "
    "copy in its newest checkpoint.")

REBUILT_MESSAGE = (
    "{owner}: the history file {path} is damaged ({error}); moved it to "
    "{moved} and rebuilt the history from the checkpoint.")


NO_HISTORY_ERROR = (
    "History.load: {path} does not exist. Give the save_dir of a run: its "
    "history.json is written with the run's first checkpoint.")


class HistoryFileError(ValueError):
  """`history.json` cannot be read and no checkpoint holds a copy."""


class History(hooks.Hook):
  """Records train logs every `log_every` steps and every evaluation.

  A scenario's call returns its history; `History.load(save_dir)` reads a
  run's back from its folder (finished or running), and `plot` draws the
  learning curves.

  Attributes:
    train: `{"step": [...], "loss": [...], ...}`.
    eval: `{"step": [...], "accuracy": [...], ...}`.
    stop_reason: Why the run ended ("done", "early stopping: ...", ...).
    member_train: A population's train logs, every member's:
      `{"step": [...], "loss": [[member 0, member 1, ...], ...], ...}`.
    member_eval: The same for its evaluations.
  """

  FILE = "history.json"

  def __init__(self, log_every: int = 100):
    self.log_every = log_every
    self.train: dict[str, list[float]] = {}
    self.eval: dict[str, list[float]] = {}
    self.member_train: dict[str, list[Any]] = {}
    self.member_eval: dict[str, list[Any]] = {}
    self.stop_reason: str = ""

  @staticmethod
  def _add(table: dict[str, list[float]], step: int,
           values: dict[str, float]) -> None:
    table.setdefault("step", []).append(step)
    for key, value in values.items():
      table.setdefault(key, []).append(float(value))

  def step_end(self, scenario, step, logs):
    if step % self.log_every == 0 or step == scenario.num_steps:
      if not self.train.get("step") or self.train["step"][-1] != step:
        self._add(self.train, step, logs)
        members = logs_lib.members_of(logs)
        if members is not None:
          self._add_members(self.member_train, step, members)

  def eval_end(self, scenario, step, metrics):
    self._add(self.eval, step, metrics)
    members = logs_lib.members_of(metrics)
    if members is not None:
      self._add_members(self.member_eval, step, members)

  @staticmethod
  def _add_members(table: dict[str, list[Any]], step: int,
                   values: dict[str, list[float]]) -> None:
    table.setdefault("step", []).append(step)
    for key, value in values.items():
      table.setdefault(key, []).append([float(v) for v in value])

  def to_dict(self) -> dict[str, Any]:
    saved = {"train": self.train, "eval": self.eval,
             "stop_reason": self.stop_reason}
    if self.member_train or self.member_eval:
      saved.update(member_train=self.member_train,
                   member_eval=self.member_eval)
    return saved

  def from_dict(self, saved: dict[str, Any], up_to_step: int) -> None:
    """Takes the records of `saved` (a `to_dict()`) up to `up_to_step`."""
    for name in ("train", "eval", "member_train", "member_eval"):
      table = saved.get(name, {})
      keep = [i for i, s in enumerate(table.get("step", [])) if s <= up_to_step]
      setattr(self, name, {k: [v[i] for i in keep] for k, v in table.items()})
    self.stop_reason = saved.get("stop_reason", "")

  def save(self, directory: str) -> None:
    """Writes `directory/history.json` atomically (temp file and rename)."""
    files.write_atomic(files.join(directory, self.FILE),
                       json.dumps(self.to_dict()))

  @classmethod
  def read(cls, path: str) -> dict[str, Any]:
    """The saved dict at `path`; `ValueError` naming the file if damaged."""
    text = files.read_text(path)
    try:
      saved = json.loads(text)
    except ValueError as error:
      raise ValueError(f"{path}: {error}") from error
    if not isinstance(saved, dict) or not all(
        isinstance(saved.get(k, {}), dict) for k in ("train", "eval")):
      raise ValueError(f"{path}: not a saved History (expected an object "
                       "with 'train' and 'eval' tables)")
    return saved

  @classmethod
  def load(cls, save_dir: str, up_to_step: int | None = None) -> "History":
    """The history of the run in `save_dir`, finished or still running.

    A running run's `history.json` is rewritten with each checkpoint, so
    it holds the records up to the last save.

    Args:
      save_dir: The run's folder (the scenario's `save_dir`).
      up_to_step: Drop the records after this step (default: keep all).

    Returns:
      A new `History`; `plot` draws it.

    Raises:
      FileNotFoundError: `save_dir` holds no `history.json`.
      HistoryFileError: `history.json` is damaged.
    """
    path = files.join(save_dir, cls.FILE)
    if not files.exists(path):
      raise FileNotFoundError(NO_HISTORY_ERROR.format(path=path))
    try:
      saved = cls.read(path)
    except ValueError as error:
      raise HistoryFileError(DAMAGED_LOAD_ERROR.format(
          path=path, error=_cause(error))) from error
    history = cls()
    history.from_dict(saved, float("inf") if up_to_step is None
                      else up_to_step)
    return history

  def resume(self, directory: str, up_to_step: int, owner: str,
             in_checkpoint: dict[str, Any] | None,
             may_move: bool = True) -> str | None:
    """Loads the history of a run restored at `up_to_step`.

    The records come from the checkpoint's copy when it has one (they end
    exactly at the restored step), else from `history.json`; the stop reason
    from `history.json` (written after the last checkpoint of a run).

    Args:
      directory: The run's folder.
      up_to_step: The restored step; later records are dropped.
      owner: The scenario's name, for messages.
      in_checkpoint: The copy restored from the checkpoint, or None.
      may_move: Whether a damaged file may be moved aside (the chief only).

    Returns:
      A message to show (the file was damaged and moved aside), or None.

    Raises:
      HistoryFileError: `history.json` is damaged and there is no copy.
    """
    path = files.join(directory, self.FILE)
    saved, note = None, None
    if files.exists(path):
      try:
        saved = self.read(path)
      except ValueError as error:
        if in_checkpoint is None:
          raise HistoryFileError(DAMAGED_ERROR.format(
              owner=owner, path=path, error=_cause(error),
              step=up_to_step)) from error
        moved = path
        if may_move:
          moved = files.join(directory, f"{self.FILE}.damaged-"
                             f"{time.strftime('%Y%m%d-%H%M%S')}")
          files.move(path, moved)
        note = REBUILT_MESSAGE.format(owner=owner, path=path,
                                      error=_cause(error), moved=moved)
    if in_checkpoint is not None:
      self.from_dict(in_checkpoint, up_to_step)
      if saved is not None:
        self.stop_reason = saved.get("stop_reason", "")
    elif saved is not None:
      self.from_dict(saved, up_to_step)
    return note

  def plot(self, path: str, title: str | None = None) -> str:
    """Draws the learning curves (train logs and eval metrics against the
    step) into a PNG at `path`; needs matplotlib (the `examples` extra).

    Returns:
      `path`.
    """
    return curves.plot(self, path, title)

  def __repr__(self) -> str:
    last = {k: v[-1] for k, v in self.eval.items()} if self.eval else {}
    return (f"History(train_records={len(self.train.get('step', []))}, "
            f"last_eval={last}, stop_reason={self.stop_reason!r})")


def plot(save_dir: str, path: str | None = None,
         title: str | None = None) -> str:
  """Draws the learning curves of the run in `save_dir` into a PNG.

  The run may be finished or still running (`History.load`). One panel per
  kind of quantity: losses, each metric (train and eval together),
  learning rates, throughput; eval points are marked. Needs matplotlib
  (the `examples` extra).

  Args:
    save_dir: The run's folder.
    path: The PNG to write; default `save_dir/learning_curves.png`.
    title: Above the figure; default the folder's name.

  Returns:
    The PNG's path.
  """
  history = History.load(save_dir)
  if path is None:
    path = files.join(save_dir, "learning_curves.png")
  if title is None:
    title = files.normalized(save_dir).rstrip("/").rsplit("/", 1)[-1]
  return history.plot(path, title)


def _cause(error: Exception) -> str:
  text = str(error)
  return text.split(": ", 1)[1] if ": " in text else text


class HistoryState(tf.train.experimental.PythonState):
  """A `History` inside a checkpoint: its JSON, written with every save.

  After a restore, `restored` holds the checkpoint's copy (a dict), or None
  if the checkpoint had none.
  """

  def __init__(self, history: History):
    self.history = history
    self.restored: dict[str, Any] | None = None

  def serialize(self) -> str:
    return json.dumps(self.history.to_dict())

  def deserialize(self, string_value) -> None:
    if isinstance(string_value, bytes):
      string_value = string_value.decode("utf-8")
    self.restored = json.loads(string_value)
