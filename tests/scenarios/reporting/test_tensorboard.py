"""TensorBoard hook: event files with the logged scalars."""

import glob
import os

import numpy as np
import tensorflow as tf

from sonnet_like.scenarios.reporting import tensorboard


class _Scenario:
  num_steps, is_chief = 4, True


def _scalars(directory):
  found = {}
  for path in glob.glob(os.path.join(directory, "events.out.tfevents.*")):
    for event in tf.compat.v1.train.summary_iterator(path):
      for value in event.summary.value:
        assert value.metadata.plugin_data.plugin_name == "scalars"
        found.setdefault(value.tag, []).append(
            (event.step, float(tf.make_ndarray(value.tensor))))
  return found


def test_writes_train_and_eval_scalars(tmp_path):
  hook = tensorboard.TensorBoard(str(tmp_path), log_every=2)
  scenario = _Scenario()
  for step in (1, 2, 3, 4):
    hook.step_end(scenario, step, {"loss": 1.0 / step})
  hook.eval_end(scenario, 4, {"accuracy": 0.5})
  hook.end(scenario)
  train = _scalars(str(tmp_path / "train"))
  np.testing.assert_allclose([v for _, v in train["loss"]], [0.5, 0.25])
  assert [s for s, _ in train["loss"]] == [2, 4]
  assert _scalars(str(tmp_path / "eval")) == {"accuracy": [(4, 0.5)]}


def test_workers_write_nothing(tmp_path):
  scenario = _Scenario()
  scenario.is_chief = False
  hook = tensorboard.TensorBoard(str(tmp_path))
  hook.step_end(scenario, 4, {"loss": 1.0})
  hook.end(scenario)
  assert not os.listdir(tmp_path)
