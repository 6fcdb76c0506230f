"""Checkpointer: save, restore, unreadable and mismatched checkpoints."""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.scenarios.run_folder import checkpointing
from sonnet_like.scenarios.run_folder import history as history_lib
from sonnet_like.scenarios.run_folder import run_dir


def _checkpointer(directory, value, **kwargs):
  variable = tf.Variable(value)
  return checkpointing.Checkpointer(str(directory), {"v": variable},
                                    **kwargs), variable


def _files(directory):
  """Every file under `directory` with its bytes (the lock file aside)."""
  found = {}
  for root, _, names in os.walk(directory):
    for name in names:
      if name != run_dir.LOCK_FILE:
        path = os.path.join(root, name)
        with open(path, "rb") as f:
          found[os.path.relpath(path, directory)] = f.read()
  return found


def _cut(prefix):
  data = prefix + ".data-00000-of-00001"
  with open(data, "r+b") as f:
    f.truncate(os.path.getsize(data) // 2)


def _saved(directory, steps, max_to_keep=5):
  saver, variable = _checkpointer(directory, 0.0, max_to_keep=max_to_keep)
  with saver:
    for step in steps:
      variable.assign(float(step))
      saver.save(step)
  return [os.path.join(str(directory), f"ckpt-{s}") for s in steps]


def test_save_and_restore(tmp_path):
  saver, variable = _checkpointer(tmp_path, 1.0)
  with saver:
    assert saver.chief
    assert saver.restore() is None  # Nothing saved yet.
    variable.assign(5.0)
    path = saver.save(7)
    assert path.endswith("ckpt-7") and checkpointing.readable(path)
  loader, restored = _checkpointer(tmp_path, 0.0)
  with loader:
    assert loader.restore() == path and restored.numpy() == 5.0


def test_unreadable_latest_falls_back_and_is_moved_aside(tmp_path):
  messages = []
  first, second = _saved(tmp_path, [1, 2])
  _cut(second)  # A crash while writing: the newest data file is cut short.
  assert not checkpointing.readable(second)
  loader, restored = _checkpointer(tmp_path, 0.0, say=messages.append)
  with loader:
    assert loader.restore() == first and restored.numpy() == 1.0
    assert loader.manager.latest_checkpoint == first
  assert "restoring ckpt-1, the newest checkpoint that reads; passed over " \
         "ckpt-2 (" in messages[0]
  aside = [d for d in os.listdir(tmp_path) if d.startswith("unreadable-")]
  assert len(aside) == 1 and aside[0] in messages[0]
  assert sorted(os.listdir(tmp_path / aside[0])) == [
      "ckpt-2.data-00000-of-00001", "ckpt-2.index"]
  # The index no longer names the moved checkpoint.
  state = tf.train.get_checkpoint_state(str(tmp_path))
  assert [os.path.basename(p) for p in state.all_model_checkpoint_paths] == [
      "ckpt-1"]


def test_data_files_are_scanned_when_the_index_is_garbage(tmp_path):
  messages = []
  paths = _saved(tmp_path, [2, 4, 6], max_to_keep=2)  # ckpt-2 rotated away.
  assert sorted(checkpointing.scan(str(tmp_path))) == [4, 6]
  (tmp_path / "checkpoint").write_bytes(b"\x00garbage {{{")
  loader, restored = _checkpointer(tmp_path, 0.0, say=messages.append,
                                   max_to_keep=2)
  with loader:
    assert loader.restore() == paths[2] and restored.numpy() == 6.0
    # The rebuilt index lets rotation go on as the user asked.
    assert [os.path.basename(p) for p in loader.manager.checkpoints] == [
        "ckpt-4", "ckpt-6"]
  assert "checkpoint index" in messages[0] and "damaged" in messages[0]
  aside = [d for d in os.listdir(tmp_path) if d.startswith("unreadable-")]
  assert (tmp_path / aside[0] / "checkpoint").read_bytes() == (
      b"\x00garbage {{{")


def test_a_complete_checkpoint_the_index_missed_is_restored(tmp_path):
  # A kill after the data files were written, before the index named them.
  first, second = _saved(tmp_path, [1, 2])
  (tmp_path / "checkpoint").write_text(
      'model_checkpoint_path: "ckpt-1"\nall_model_checkpoint_paths: '
      '"ckpt-1"\n')
  messages = []
  loader, restored = _checkpointer(tmp_path, 0.0, say=messages.append)
  with loader:
    assert loader.restore() == second and restored.numpy() == 2.0
    assert loader.manager.latest_checkpoint == second
  assert "naming ckpt-1 where ckpt-2 is the newest checkpoint that reads" in (
      messages[0])
  assert os.path.exists(first + ".index")


def test_nothing_readable_is_an_error_that_changes_nothing(tmp_path):
  for path in _saved(tmp_path, [2, 4]):
    _cut(path)
  before = _files(tmp_path)
  loader, _ = _checkpointer(tmp_path, 0.0)
  with loader, pytest.raises(checkpointing.NoReadableCheckpointError) as error:
    loader.restore()
  message = str(error.value)
  assert message.startswith(f"Checkpointer: save_dir {tmp_path} holds "
                            "checkpoint data, but no checkpoint")
  assert "ckpt-4: " in message and "ckpt-2: " in message
  assert "restart=True" in message
  assert _files(tmp_path) == before


def test_an_index_without_data_is_an_error(tmp_path):
  _saved(tmp_path, [3])
  for name in os.listdir(tmp_path):
    if name.startswith("ckpt-3"):
      os.remove(tmp_path / name)
  loader, _ = _checkpointer(tmp_path, 0.0)
  with loader, pytest.raises(checkpointing.NoReadableCheckpointError,
                             match="an index with no checkpoint data"):
    loader.restore()


def test_data_without_index_file_counts_as_unreadable(tmp_path):
  first, second = _saved(tmp_path, [1, 2])
  os.remove(second + ".index")
  loader, restored = _checkpointer(tmp_path, 0.0, say=lambda m: None)
  with loader:
    assert loader.restore() == first and restored.numpy() == 1.0


def test_restart_moves_the_run_aside_and_starts_over(tmp_path):
  _saved(tmp_path, [2, 4])
  (tmp_path / "history.json").write_text("{}")
  (tmp_path / "notes.txt").write_text("mine")
  before = _files(tmp_path)
  messages = []
  loader, restored = _checkpointer(tmp_path, 0.0, restart=True,
                                   say=messages.append)
  with loader:
    assert loader.restore() is None and restored.numpy() == 0.0
  aside = [d for d in os.listdir(tmp_path) if d.startswith("restart-")]
  assert len(aside) == 1 and "restart=True: moved the previous run" in (
      messages[0])
  assert sorted(os.listdir(tmp_path)) == sorted([aside[0], "notes.txt"])
  moved = {os.path.relpath(k, aside[0]): v
           for k, v in _files(tmp_path).items() if k.startswith(aside[0])}
  assert moved == {k: v for k, v in before.items() if k != "notes.txt"}
  # What was moved aside is still a checkpoint folder that restores.
  old, value = _checkpointer(tmp_path / aside[0], 0.0)
  with old:
    assert old.restore().endswith("ckpt-4") and value.numpy() == 4.0


def test_the_lock_refuses_a_second_checkpointer_until_closed(tmp_path):
  first, _ = _checkpointer(tmp_path, 0.0)
  with pytest.raises(run_dir.FolderLockedError,
                     match=r"Checkpointer: save_dir .* is in use by this "
                     r"process"):
    _checkpointer(tmp_path, 0.0)
  first.close()
  second, _ = _checkpointer(tmp_path, 0.0)
  second.close()
  assert not os.path.exists(tmp_path / run_dir.LOCK_FILE)


def test_a_file_as_directory_is_refused(tmp_path):
  path = tmp_path / "run"
  path.write_text("x")
  with pytest.raises(run_dir.FolderError, match="is a file, not a folder"):
    _checkpointer(path, 0.0)


# ---- The structure check. ----


def _mlp_run(directory, sizes, optimizer, **kwargs):
  """An MLP and optimizer built eagerly, in a Checkpointer."""
  model = snt.nets.MLP(sizes, name="mlp")
  model(tf.zeros([1, 3]))
  if hasattr(optimizer, "build"):
    optimizer.build(model.trainable_variables)
  return model, checkpointing.Checkpointer(
      str(directory), {"model": model, "optimizer": optimizer}, **kwargs)


def _save_mlp(directory, sizes, optimizer):
  model, saver = _mlp_run(directory, sizes, optimizer)
  with saver:
    saver.save(1)
  return model


def _mismatch(directory, sizes, optimizer):
  model, loader = _mlp_run(directory, sizes, optimizer)
  before = [v.numpy() for v in model.variables]
  with loader, pytest.raises(checkpointing.CheckpointMismatchError) as error:
    loader.restore()
  for old, variable in zip(before, model.variables):  # Nothing restored.
    np.testing.assert_array_equal(old, variable.numpy())
  return str(error.value)


def test_an_added_layer_is_refused_with_its_paths(tmp_path):
  _save_mlp(tmp_path, [4, 2], keras.optimizers.SGD(0.1))
  message = _mismatch(tmp_path, [4, 4, 2], keras.optimizers.SGD(0.1))
  assert "Checkpointer: checkpoint " in message
  assert "model/_layers/2: in the program, not in the checkpoint" in message
  assert "optimizer/_trainable_variables/4" not in message  # Named once.
  assert "model/_layers/1/w: checkpoint float32[4, 2], program float32[4, 4]"\
      in message
  assert "restart=True" in message


def test_a_removed_layer_is_refused_with_its_paths(tmp_path):
  _save_mlp(tmp_path, [4, 4, 2], keras.optimizers.SGD(0.1))
  message = _mismatch(tmp_path, [4, 2], keras.optimizers.SGD(0.1))
  assert "model/_layers/2: in the checkpoint, not in the program" in message


def test_another_optimizer_is_refused(tmp_path):
  _save_mlp(tmp_path, [4, 2], keras.optimizers.Adam(0.1))
  message = _mismatch(tmp_path, [4, 2], keras.optimizers.SGD(0.1))
  assert "optimizer/_momentums: in the checkpoint, not in the program" in (
      message)
  _save_mlp(tmp_path / "sgd", [4, 2], keras.optimizers.SGD(0.1))
  message = _mismatch(tmp_path / "sgd", [4, 2], keras.optimizers.Adam(0.1))
  assert "optimizer/_velocities: in the program, not in the checkpoint" in (
      message)


def test_sonnet_optimizer_slots_restore_when_created_later(tmp_path):
  model, saver = _mlp_run(tmp_path, [4, 2], snt.optimizers.Adam(0.1))
  optimizer = saver.checkpoint.optimizer
  with saver:
    optimizer.apply([tf.ones_like(v) for v in model.trainable_variables],
                    model.trainable_variables)
    saver.save(1)
  expected = [v.numpy() for v in optimizer.m]
  # A new optimizer has no slots until its first apply: that is no mismatch.
  model, loader = _mlp_run(tmp_path, [4, 2], snt.optimizers.Adam(0.1))
  with loader:
    assert loader.restore().endswith("ckpt-1")
  fresh = loader.checkpoint.optimizer
  assert fresh.m == []
  fresh.apply([tf.zeros_like(v) for v in model.trainable_variables],
              model.trainable_variables)
  assert int(fresh.step.numpy()) == 2  # Restored 1, then one apply.
  for want, got in zip(expected, fresh.m):
    np.testing.assert_allclose(want * 0.9, got.numpy())


def test_sonnet_optimizer_with_other_slots_is_refused(tmp_path):
  model, saver = _mlp_run(tmp_path, [4, 2], snt.optimizers.Adam(0.1))
  with saver:
    saver.checkpoint.optimizer.apply(
        [tf.ones_like(v) for v in model.trainable_variables],
        model.trainable_variables)
    saver.save(1)
  message = _mismatch(tmp_path, [4, 2], snt.optimizers.SGD(0.1))
  assert "optimizer/m: in the checkpoint, not in the program" in message


def test_optional_entries_may_come_and_go(tmp_path):
  state = tf.Module()
  state.best = tf.Variable(3.0)
  variable = tf.Variable(1.0)
  history = history_lib.History()
  history.train = {"step": [1], "loss": [0.5]}
  with checkpointing.Checkpointer(
      str(tmp_path), {"v": variable, "hook_1_EarlyStopping": state},
      history=history) as saver:
    saver.save(1)
  # Without the hook and the history, then with another hook: both restore.
  with checkpointing.Checkpointer(str(tmp_path), {"v": variable}) as loader:
    assert loader.restore()
  other = tf.Module()
  other.best = tf.Variable(0.0)
  with checkpointing.Checkpointer(
      str(tmp_path), {"v": variable, "hook_2_EarlyStopping": other}) as loader:
    assert loader.restore()
  assert other.best.numpy() == 0.0  # Starts fresh.


def test_history_travels_in_the_checkpoint(tmp_path):
  history = history_lib.History()
  variable = tf.Variable(1.0)
  with checkpointing.Checkpointer(str(tmp_path), {"v": variable},
                                  history=history) as saver:
    history.train = {"step": [1, 2], "loss": [0.5, 0.25]}
    saver.save(2)
    history.train = {"step": [1, 2, 3], "loss": [0.5, 0.25, 0.1]}
    history.stop_reason = "done"
    history.save(str(tmp_path))
  (tmp_path / "history.json").write_text('{"train": {"step": [1, 2')
  messages = []
  loaded = history_lib.History()
  with checkpointing.Checkpointer(str(tmp_path), {"v": variable},
                                  history=loaded,
                                  say=messages.append) as loader:
    loader.restore()
  assert loaded.train == {"step": [1, 2], "loss": [0.5, 0.25]}
  assert "history.json is damaged" in messages[0]
  assert "rebuilt the history from the checkpoint" in messages[0]
  damaged = [n for n in os.listdir(tmp_path)
             if n.startswith("history.json.damaged-")]
  assert len(damaged) == 1


def test_is_chief():

  class Resolver:

    def __init__(self, spec, task_type, task_id):
      self._spec, self.task_type, self.task_id = spec, task_type, task_id

    def cluster_spec(self):
      return tf.train.ClusterSpec(self._spec)

  class Strategy:

    def __init__(self, resolver):
      self.cluster_resolver = resolver

  workers = {"worker": ["a:1", "b:2"]}
  assert checkpointing.is_chief(tf.distribute.get_strategy())
  assert checkpointing.is_chief(Strategy(Resolver(workers, "worker", 0)))
  assert not checkpointing.is_chief(Strategy(Resolver(workers, "worker", 1)))
  with_chief = dict(workers, chief=["c:3"])
  assert checkpointing.is_chief(Strategy(Resolver(with_chief, "chief", 0)))
  assert not checkpointing.is_chief(
      Strategy(Resolver(with_chief, "worker", 0)))
  assert checkpointing.is_chief(Strategy(Resolver({}, None, None)))
