"""Checkpoints copied into the folder in the background (async_save=True)."""

import os
import signal
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.scenarios.run_folder import checkpointing
import tests
from tests.scenarios import test_save_dir


_data, _loss = test_save_dir._data, test_save_dir._loss  # pylint: disable=protected-access


def _run(num_steps, save_dir=None, **kwargs):
  tf.random.set_seed(0)
  model = snt.nets.MLP([8, 2], name="mlp")
  snt.scenarios.Supervised(
      num_steps=num_steps, batch_size=16, save_dir=save_dir,
      save_every=2 if save_dir else None, progress=False, **kwargs)(
          model, keras.optimizers.Adam(0.1), _loss, _data())
  return model


def test_a_resumed_async_run_is_the_uninterrupted_run(tmp_path):
  save_dir = str(tmp_path / "run")
  _run(4, save_dir, async_save=True, max_to_keep=2)
  resumed = _run(10, save_dir, async_save=True, max_to_keep=2)
  reference = _run(10)
  for ours, theirs in zip(resumed.variables, reference.variables):
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
  state = tf.train.get_checkpoint_state(save_dir)
  assert [os.path.basename(p) for p in state.all_model_checkpoint_paths] == [
      "ckpt-8", "ckpt-10"]
  assert sorted(n for n in os.listdir(save_dir) if n.startswith("ckpt-")) == [
      "ckpt-10.data-00000-of-00001", "ckpt-10.index",
      "ckpt-8.data-00000-of-00001", "ckpt-8.index"]


def test_a_failed_copy_is_raised_by_the_next_wait(tmp_path, monkeypatch):
  variable = tf.Variable(1.0)
  saver = checkpointing.Checkpointer(str(tmp_path), {"v": variable},
                                     async_save=True)

  def broken_copy(*args, **kwargs):
    raise tf.errors.UnavailableError(None, None, "the bucket is gone")
  monkeypatch.setattr(tf.io.gfile, "copy", broken_copy)
  saver.save(1)
  with pytest.raises(tf.errors.UnavailableError, match="the bucket is gone"):
    saver.close()
  assert not os.path.exists(tmp_path / "checkpoint")


_KILLED_MID_COPY = """
import os, signal, sys
import tensorflow as tf
from sonnet_like.scenarios.run_folder import checkpointing
big = tf.Variable(tf.fill([64, 1024, 1024], 1.0))  # 256 MB: a long copy.
saver = checkpointing.Checkpointer(sys.argv[1], {"big": big}, async_save=True)
saver.save(1)
saver.wait()
big.assign_add(tf.ones_like(big))
saver.save(2)
print(open(os.path.join(sys.argv[1], "checkpoint")).readline(), flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_kill_during_the_copy_leaves_the_previous_checkpoint(tmp_path):
  result = subprocess.run([sys.executable, "-c", _KILLED_MID_COPY,
                           str(tmp_path)], capture_output=True, text=True,
                          cwd=tests.ROOT, timeout=300,
                          env=dict(os.environ, PYTHONPATH=tests.ROOT))
  assert result.returncode == -signal.SIGKILL, result.stderr[-2000:]
  # Killed while ckpt-2 was being copied: the index still named ckpt-1.
  assert result.stdout.strip() == 'model_checkpoint_path: "ckpt-1"'
  big = tf.Variable(tf.zeros([64, 1024, 1024]))
  with checkpointing.Checkpointer(str(tmp_path), {"big": big},
                                  say=lambda m: None) as loader:
    restored = loader.restore()
  expected = {"ckpt-1": 1.0, "ckpt-2": 2.0}[os.path.basename(restored)]
  assert float(tf.reduce_min(big)) == float(tf.reduce_max(big)) == expected
