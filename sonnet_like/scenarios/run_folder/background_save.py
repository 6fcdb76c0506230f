"""Checkpoints written in the background: the loop waits for a snapshot only.

`BackgroundWriter.save(step, after)` takes a snapshot of the checkpoint
(`snapshot.take`: every value, the data iterator's position, the random
state, the run settings and the history, all of `step`) and returns. A
thread then writes it into the run's folder (data files first, the
`.index` last, as a synchronous save does), rewrites the `checkpoint`
index to name it, rotates the oldest away as `CheckpointManager` would,
and last writes the files of `after` (`history.json`), so they never
describe a step whose checkpoint is not complete.

A process killed during the write leaves the index on the previous
complete checkpoint (the half-written one is moved aside as unreadable on
restore), so a resumed run is bit for bit the run that was not stopped.
One write runs at a time: the next save, `wait()` and `close()` wait for
it and raise its error as a `BackgroundSaveError` naming the step.
"""

import os
import re
import threading
import time

import tensorflow as tf

from sonnet_like.core import files
from sonnet_like.scenarios.run_folder import snapshot as snapshot_lib

CHECKPOINT_NAME = "ckpt"
INDEX_FILE = "checkpoint"

WRITE_ERROR = (
    "{owner}: the checkpoint of step {step} was not written to {directory} "
    "({kind}: {error}). The checkpoint index still names the previous "
    "checkpoint, which a restart resumes from.")


class BackgroundSaveError(RuntimeError):
  """A checkpoint written in the background failed; names its step."""

  def __init__(self, message: str, step: int):
    super().__init__(message)
    self.step = step


def write_index(directory: str, names: list[str], times: list[float]) -> None:
  """Writes the `checkpoint` index naming `names` (oldest first), atomically.

  Timestamps after `last_preserved_timestamp` keep them in a
  `CheckpointManager`'s rotation, as if it had saved them.
  """
  lines = [f'model_checkpoint_path: "{names[-1]}"'] + [
      f'all_model_checkpoint_paths: "{n}"' for n in names] + [
          f"all_model_checkpoint_timestamps: {t!r}" for t in times] + [
              f"last_preserved_timestamp: {min(times) - 1.0!r}"]
  files.write_atomic(files.join(directory, INDEX_FILE),
                     "\n".join(lines) + "\n")


class BackgroundWriter:
  """Saves `checkpoint` into `directory` from a snapshot, in a thread.

  Args:
    checkpoint: What is saved.
    directory: The run's folder (checked and locked by the caller).
    max_to_keep: Checkpoints kept; older ones are deleted after a write.
    owner: Who saves (a scenario's class name), for errors.
  """

  def __init__(self, checkpoint: tf.train.Checkpoint, directory: str,
               max_to_keep: int, owner: str = "Checkpointer"):
    self.checkpoint, self.directory = checkpoint, directory
    self.max_to_keep, self.owner = max_to_keep, owner
    self._thread: threading.Thread | None = None
    self._error: BackgroundSaveError | None = None
    self._kept: list[tuple[str, float]] = []  # (name, time), oldest first.
    state = tf.train.get_checkpoint_state(directory)
    if state is not None:
      times = list(state.all_model_checkpoint_timestamps) or [0.0] * len(
          state.all_model_checkpoint_paths)
      self._kept = [(os.path.basename(p), t) for p, t in
                    zip(state.all_model_checkpoint_paths, times)]
    self.latest: str | None = (files.join(directory, self._kept[-1][0])
                               if self._kept else None)

  def save(self, step: int, after: dict[str, str] | None = None) -> str:
    """Snapshots the state of now as `ckpt-<step>`; returns its final path.

    Args:
      step: The step saved (names the checkpoint).
      after: Files (name: text) written atomically into the folder once
        the checkpoint and its index are in.
    """
    self.wait()
    name = f"{CHECKPOINT_NAME}-{step}"
    prefix = files.join(self.directory, name)
    held = snapshot_lib.take(self.checkpoint)
    if held is None:  # Cannot be held: written now, indexed in the thread.
      self.checkpoint.write(prefix)
    self._thread = threading.Thread(
        target=self._write, args=(held, step, name, dict(after or {})),
        name=f"save {name}", daemon=True)
    self._thread.start()
    self.latest = prefix
    return prefix

  def _write(self, held: snapshot_lib.Snapshot | None, step: int, name: str,
             after: dict[str, str]) -> None:
    try:
      if held is not None:
        held.write(files.join(self.directory, name))
      self._kept = [k for k in self._kept if k[0] != name]
      self._kept.append((name, files.mtime(files.join(
          self.directory, f"{name}.index")) or time.time()))
      dropped, self._kept = (self._kept[:-self.max_to_keep],
                             self._kept[-self.max_to_keep:])
      write_index(self.directory, [n for n, _ in self._kept],
                  [t for _, t in self._kept])
      for old, _ in dropped:
        pattern = re.compile(rf"^{re.escape(old)}\.(index|data-.*)$")
        for file_name in files.listdir(self.directory):
          if pattern.match(file_name):
            files.remove(files.join(self.directory, file_name))
      for file_name, text in after.items():
        files.write_atomic(files.join(self.directory, file_name), text)
    except BaseException as error:  # Raised by the next save or wait().  # pylint: disable=broad-except
      self._error = BackgroundSaveError(WRITE_ERROR.format(
          owner=self.owner, step=step, directory=self.directory,
          kind=type(error).__name__, error=_first_line(error)), step)
      self._error.__cause__ = error

  def wait(self) -> None:
    """Returns once the last save is in the folder.

    Raises:
      BackgroundSaveError: the last write failed (once; it names the step).
    """
    if self._thread is not None:
      self._thread.join()
      self._thread = None
    error, self._error = self._error, None
    if error is not None:
      self.latest = (files.join(self.directory, self._kept[-1][0])
                     if self._kept else None)
      raise error


def _first_line(error: BaseException) -> str:
  lines = [line for line in str(error).splitlines() if line.strip()]
  return lines[0] if lines else "no message"
