"""keep_best: the best checkpoint kept aside, resumed and exported."""

import json
import os
import uuid

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.core import files
from sonnet_like.scenarios import best as best_lib
from sonnet_like.scenarios.run_folder import keep_best
from tests.scenarios import toy_task


def _run(save_dir, num_steps, eval_data=True, **settings):
  tf.random.set_seed(0)
  model = snt.Linear(2, name="model")
  train = snt.scenarios.Supervised(
      num_steps=num_steps, batch_size=16, eval_every=5, save_every=5,
      save_dir=str(save_dir), progress=False, tensorboard=False, **settings)
  train(model, snt.optimizers.SGD(0.5), toy_task.loss, toy_task.data(),
        eval_data=toy_task.data() if eval_data else None)
  return train, model


# On a falling loss, keep_best="loss" with best_mode="max" keeps the first
# evaluation (step 5): far from the end, older than any kept checkpoint.
_FIRST_IS_BEST = dict(keep_best="loss", best_mode="max")


def test_the_best_checkpoint_outlives_rotation_and_is_exported(tmp_path):
  export_dir = tmp_path / "export"
  train, model = _run(tmp_path / "run", 20, max_to_keep=1,
                      export_dir=str(export_dir), **_FIRST_IS_BEST)
  assert sorted(os.listdir(tmp_path / "run" / "best")) == [
      "best.json", "ckpt-5.data-00000-of-00001", "ckpt-5.index"]
  record = keep_best.record(str(tmp_path / "run"))
  assert (record["step"], record["metric"], record["mode"]) == (5, "loss",
                                                                 "max")
  assert record["value"] == pytest.approx(train.history.eval["loss"][0])
  assert tf.train.latest_checkpoint(str(tmp_path / "run")).endswith("ckpt-20")
  assert not os.path.exists(tmp_path / "run" / "ckpt-5.index")  # Rotated.

  _, at_step_5 = _run(tmp_path / "five", 5)  # The same run, stopped at 5.
  x = toy_task.data()[0]
  served = tf.saved_model.load(str(export_dir)).signatures["serving_default"]
  np.testing.assert_array_equal(served(inputs=tf.constant(x))["outputs"],
                                at_step_5(x))
  # The model itself ends with its final weights, as without keep_best.
  assert not np.array_equal(model(x), at_step_5(x))
  reader = tf.train.load_checkpoint(record["checkpoint"])
  np.testing.assert_array_equal(
      reader.get_tensor("model/w/.ATTRIBUTES/VARIABLE_VALUE"), at_step_5.w)


def test_the_best_so_far_survives_a_resume(tmp_path):
  _run(tmp_path, 20, **_FIRST_IS_BEST)
  _run(tmp_path, 40, **_FIRST_IS_BEST)  # Resumes at 20; the loss falls on.
  # Forgetting the best would keep step 25's evaluation instead.
  assert keep_best.record(str(tmp_path))["step"] == 5
  assert sorted(os.listdir(tmp_path / "best"))[-1] == "ckpt-5.index"


def test_a_new_best_replaces_the_old_one_on_ram():
  save_dir = f"ram://keep_best/{uuid.uuid4().hex}"
  train, _ = _run(save_dir, 20, keep_best="loss")  # "min": the last is best.
  losses = train.history.eval["loss"]
  assert losses == sorted(losses, reverse=True)
  record = keep_best.record(save_dir)
  assert record["step"] == 20 and record["mode"] == "min"
  assert files.listdir(files.join(save_dir, "best")) == [
      "best.json", "ckpt-20.data-00000-of-00001", "ckpt-20.index"]
  with tf.io.gfile.GFile(files.join(save_dir, "best", "best.json")) as f:
    assert json.load(f)["checkpoint"] == "ckpt-20"


def test_an_unknown_metric_names_the_scenario_and_the_metrics(tmp_path):
  with pytest.raises(best_lib.MetricNotFoundError,
                     match=r"^Supervised: keep_best 'acc' is not an eval "
                     r"metric; available: \['accuracy', 'loss'\]\.$"):
    _run(tmp_path, 10, keep_best="acc")


def test_without_evaluation_it_stops_at_the_first_eval_step(tmp_path):
  with pytest.raises(ValueError, match=r"^Supervised: keep_best='accuracy' "
                     r"needs an evaluation at step 5, but .*no eval_data"):
    _run(tmp_path, 20, eval_data=False, keep_best="accuracy")


@pytest.mark.parametrize("settings, match", [
    (dict(keep_best="accuracy"), "keep_best needs a save_dir"),
    (dict(keep_best="accuracy", best_mode="up", save_dir="x"),
     "best_mode must be 'min' or 'max', got 'up'"),
    (dict(best_mode="max", save_dir="x"), "best_mode is the mode of "
     "keep_best, which is not set"),
    (dict(keep_best="", save_dir="x"), "keep_best must be the name of an "
     "eval metric, got ''"),
])
def test_bad_settings(settings, match):
  with pytest.raises(ValueError, match="^Supervised: " + match):
    snt.scenarios.Supervised(10, **settings)


def test_restart_moves_the_best_checkpoint_aside(tmp_path):
  _run(tmp_path, 10, keep_best="accuracy")
  _run(tmp_path, 5, keep_best="accuracy", restart=True)
  assert keep_best.record(str(tmp_path))["step"] == 5
  moved = [n for n in os.listdir(tmp_path) if n.startswith("restart-")]
  assert len(moved) == 1 and os.path.isdir(tmp_path / moved[0] / "best")


class _Crash(snt.scenarios.Hook):
  """Raises after `at` steps, like a process killed between checkpoints."""

  def __init__(self, at):
    self.at = at

  def step_end(self, scenario, step, logs):
    if step == self.at:
      raise RuntimeError("crash")


def test_a_crash_and_resume_keep_the_same_best_bit_for_bit(tmp_path):
  _, whole = _run(tmp_path / "whole", 20, keep_best="loss")
  with pytest.raises(RuntimeError, match="crash"):  # Saved at 10, best 10.
    _run(tmp_path / "cut", 20, keep_best="loss", hooks=[_Crash(12)])
  _, resumed = _run(tmp_path / "cut", 20, keep_best="loss")
  np.testing.assert_array_equal(whole.w, resumed.w)
  records = [keep_best.record(str(tmp_path / name)) for name in ("whole",
                                                                  "cut")]
  assert records[0]["step"] == records[1]["step"] == 20
  assert records[0]["value"] == records[1]["value"]
  readers = [tf.train.load_checkpoint(r["checkpoint"]) for r in records]
  for name in readers[0].get_variable_to_shape_map():
    if name.startswith("model/"):
      np.testing.assert_array_equal(readers[0].get_tensor(name),
                                    readers[1].get_tensor(name))


def test_with_ema_the_best_checkpoints_averages_are_exported(tmp_path):
  # The best checkpoint's averages, not its raw weights and not the final
  # averages: both settings compose in the end-of-run export.
  export_dir = tmp_path / "export"
  _run(tmp_path / "run", 20, max_to_keep=1, export_dir=str(export_dir),
       ema=0.8, **_FIRST_IS_BEST)
  reader = tf.train.load_checkpoint(
      keep_best.record(str(tmp_path / "run"))["checkpoint"])
  names = reader.get_variable_to_shape_map()
  averages = sorted(n for n in names if n.startswith("model_ema/averages/"))
  assert len(averages) == 2  # b and w, in the model's variable order.
  x = toy_task.data()[0]
  w = reader.get_tensor(next(n for n in averages if "/1/" in n))
  b = reader.get_tensor(next(n for n in averages if "/0/" in n))
  served = tf.saved_model.load(str(export_dir)).signatures["serving_default"]
  np.testing.assert_allclose(served(inputs=tf.constant(x))["outputs"],
                             x @ w + b, rtol=1e-5, atol=1e-6)
  raw = reader.get_tensor("model/w/.ATTRIBUTES/VARIABLE_VALUE")
  assert not np.allclose(raw, w, atol=1e-4)
