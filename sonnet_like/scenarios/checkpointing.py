"""Checkpoints that survive crashes, and who writes them in a cluster.

`Checkpointer` wraps `tf.train.Checkpoint` + `CheckpointManager`. A save writes
the data files first and then rewrites the small `checkpoint` index, so a
crash during a save leaves the index on the previous, complete checkpoint.
`restore` still verifies that the checkpoint it picks is readable and falls
back to older ones if not. Under a multi-worker strategy every worker saves
(saving can involve collectives) but only the chief writes to `directory`;
the others write to a scratch folder that is deleted straight away.
"""

import os
import shutil
from typing import Any

import tensorflow as tf


def is_chief(strategy: tf.distribute.Strategy | None = None) -> bool:
  """Whether this process is the chief (always True outside a cluster)."""
  strategy = strategy or tf.distribute.get_strategy()
  resolver = getattr(strategy, "cluster_resolver", None)
  if resolver is None or not resolver.cluster_spec().as_dict():
    return True
  task_type, task_id = resolver.task_type, resolver.task_id
  if task_type in ("chief", None):
    return True
  has_chief = "chief" in resolver.cluster_spec().as_dict()
  return task_type == "worker" and task_id == 0 and not has_chief


def _task_id(strategy: tf.distribute.Strategy) -> str:
  resolver = getattr(strategy, "cluster_resolver", None)
  if resolver is None:
    return "0"
  return f"{resolver.task_type}_{resolver.task_id}"


def readable(path: str) -> bool:
  """Whether every variable of the checkpoint at `path` can be read."""
  try:
    reader = tf.train.load_checkpoint(path)
    for name, dtype in reader.get_variable_to_dtype_map().items():
      if dtype != tf.variant:  # Iterator states; checked by the restore.
        reader.get_tensor(name)
    return True
  except Exception:  # The reader raises OpError, IndexError, ...  # pylint: disable=broad-except
    return False


class Checkpointer:
  """Saves and restores a set of named trackables under one directory."""

  def __init__(self, directory: str, trackables: dict[str, Any],
               max_to_keep: int = 3,
               strategy: tf.distribute.Strategy | None = None):
    self.directory = directory
    self.chief = is_chief(strategy)
    self._strategy = strategy or tf.distribute.get_strategy()
    self.checkpoint = tf.train.Checkpoint(**trackables)
    write_dir = directory if self.chief else os.path.join(
        directory, ".scratch", _task_id(self._strategy))
    self._write_dir = write_dir
    self.manager = tf.train.CheckpointManager(
        self.checkpoint, write_dir, max_to_keep=max_to_keep)

  def restore(self) -> str | None:
    """Restores the newest readable checkpoint; returns its path or None."""
    if not self.chief:
      # Workers read what the chief wrote.
      state = tf.train.get_checkpoint_state(self.directory)
      candidates = list(state.all_model_checkpoint_paths) if state else []
    else:
      candidates = list(self.manager.checkpoints)
    for path in reversed(candidates):
      if readable(path):
        # A readable checkpoint that does not fit (another model) raises.
        self.checkpoint.restore(path).expect_partial()
        return path
      tf.get_logger().warning("Checkpoint %s is unreadable; trying an older "
                              "one.", path)
    return None

  def save(self, step: int) -> str:
    """Saves as `ckpt-<step>` and returns the chief's path."""
    path = self.manager.save(checkpoint_number=step)
    if not self.chief:
      shutil.rmtree(self._write_dir, ignore_errors=True)
      return os.path.join(self.directory, os.path.basename(path))
    return path
