"""A run folder on cloud storage: TensorFlow's ram:// stands in for gs://.

Every file of a run (checkpoints, history, logs, the lock, the export) goes
through `tf.io.gfile`, so the run trains, resumes with a new scenario object,
refuses a second writer and exports there, and nothing appears in the
working directory.
"""

import os
import uuid

import keras
import numpy as np
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.core import files
from sonnet_like.scenarios.run_folder import history as history_lib
from sonnet_like.scenarios.run_folder import run_dir
from tests.scenarios import toy_task


class SecondWriter(snt.scenarios.Hook):
  """At step 2, starts another run in the same folder and keeps its error."""

  def __init__(self, save_dir):
    self.save_dir, self.error = save_dir, None

  def step_end(self, scenario, step, logs):
    if step == 2 and self.error is None:
      try:
        _run(self.save_dir, num_steps=4)
      except run_dir.FolderLockedError as error:
        self.error = error


def _run(save_dir, num_steps, export_dir=None, hooks=()):
  tf.random.set_seed(0)
  model = snt.nets.MLP([8, 2], name="mlp")
  train = snt.scenarios.Supervised(
      num_steps=num_steps, batch_size=16, save_dir=save_dir,
      save_every=2 if save_dir else None, export_dir=export_dir,
      log_every=1, progress=False, hooks=list(hooks))
  history = train(model, keras.optimizers.SGD(0.1), toy_task.loss,
                  toy_task.data(features=4))
  return model, history


def test_train_resume_refuse_and_export_on_ram(tmp_path, monkeypatch):
  monkeypatch.chdir(tmp_path)
  root = f"ram://cloud/{uuid.uuid4().hex}"
  save_dir, export_dir = f"{root}/run", f"{root}/export"
  second = SecondWriter(save_dir)
  _run(save_dir, num_steps=4, hooks=[second])
  assert isinstance(second.error, run_dir.FolderLockedError)
  assert f"save_dir {save_dir} is in use by this process" in str(second.error)
  assert {"ckpt-4.index", "checkpoint", "history.json"} <= set(
      files.listdir(save_dir))
  assert not files.exists(f"{save_dir}/.lock")  # Released.

  model, history = _run(save_dir, num_steps=6, export_dir=export_dir)
  reference, _ = _run(None, num_steps=6)
  for ours, theirs in zip(model.variables, reference.variables):
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
  saved = history_lib.History.read(f"{save_dir}/history.json")
  assert saved["train"]["step"] == history.train["step"] == [1, 2, 3, 4, 5,
                                                             6]
  assert saved["stop_reason"] == history.stop_reason

  serve = tf.saved_model.load(export_dir).signatures["serving_default"]
  inputs = toy_task.data(features=4)[0][:8]
  np.testing.assert_array_equal(serve(inputs=tf.constant(inputs))["classes"],
                                np.argmax(model(inputs), axis=1))
  assert os.listdir(tmp_path) == []
