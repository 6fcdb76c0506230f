"""Checkpoints written in the background: the loop waits for a copy, not a write.

`BackgroundWriter.save(step)` writes the checkpoint synchronously to memory
(TensorFlow's `ram://` file system), so every value, the data iterator's
position and the history are those of `step` exactly, and returns. A thread
then copies the files into the run's folder, data first and index file
last, rewrites the `checkpoint` index to name it, and rotates the oldest
away as `CheckpointManager` would. So the guarantees of a synchronous save
hold: a process killed during the copy leaves the index on the previous
complete checkpoint (the half-copied one is moved aside as unreadable on
restore), and a resumed run is bit for bit the run that was not stopped.

One copy runs at a time: the next save, `wait()` and `close()` wait for it
and raise its error, if it had one.
"""

import os
import re
import threading
import time
import uuid

import tensorflow as tf

from sonnet_like.core import files

CHECKPOINT_NAME = "ckpt"
INDEX_FILE = "checkpoint"


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
  """Saves `checkpoint` into `directory` through memory and a copy thread.

  Args:
    checkpoint: What is saved.
    directory: The run's folder (checked and locked by the caller).
    max_to_keep: Checkpoints kept; older ones are deleted after a copy.
  """

  def __init__(self, checkpoint: tf.train.Checkpoint, directory: str,
               max_to_keep: int):
    self.checkpoint, self.directory = checkpoint, directory
    self.max_to_keep = max_to_keep
    self._thread: threading.Thread | None = None
    self._error: BaseException | None = None
    self._kept: list[tuple[str, float]] = []  # (name, time), oldest first.
    state = tf.train.get_checkpoint_state(directory)
    if state is not None:
      times = list(state.all_model_checkpoint_timestamps) or [0.0] * len(
          state.all_model_checkpoint_paths)
      self._kept = [(os.path.basename(p), t) for p, t in
                    zip(state.all_model_checkpoint_paths, times)]
    self.latest: str | None = (files.join(directory, self._kept[-1][0])
                               if self._kept else None)

  def save(self, step: int) -> str:
    """Saves the values of now as `ckpt-<step>`; returns its final path."""
    self.wait()
    name = f"{CHECKPOINT_NAME}-{step}"
    stage = f"ram://sonnet_like_saves/{uuid.uuid4().hex}"
    self.checkpoint.write(files.join(stage, name))
    self._thread = threading.Thread(target=self._publish, args=(stage, name),
                                    name=f"save {name}", daemon=True)
    self._thread.start()
    self.latest = files.join(self.directory, name)
    return self.latest

  def _publish(self, stage: str, name: str) -> None:
    try:
      written = sorted(files.listdir(stage),
                       key=lambda n: n.endswith(".index"))  # Index last.
      for file_name in written:
        tf.io.gfile.copy(files.join(stage, file_name),
                         files.join(self.directory, file_name),
                         overwrite=True)
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
    except BaseException as error:  # Raised by the next save or wait().  # pylint: disable=broad-except
      self._error = error
    finally:
      files.rmtree(stage)

  def wait(self) -> None:
    """Returns once the last save is in the folder; raises its error."""
    if self._thread is not None:
      self._thread.join()
      self._thread = None
    error, self._error = self._error, None
    if error is not None:
      raise error
