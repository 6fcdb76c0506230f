"""dry_run=True: a few steps, an evaluation, a save, a resume and an export
in a temporary folder, and a verdict; the real save_dir untouched."""

import os

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from tests import scenario_table
from tests.scenarios import toy_task


def _supervised(loss=toy_task.loss, **settings):
  train = snt.scenarios.Supervised(num_steps=10_000, batch_size=16,
                                   eval_every=1_000, dry_run=True,
                                   progress=False, **settings)
  history = train(snt.Linear(2), snt.optimizers.SGD(0.1), loss,
                  toy_task.data(), eval_data=toy_task.data())
  return train, history


def test_a_correct_dry_run_says_ok_and_leaves_save_dir_empty(tmp_path,
                                                             capfd):
  save_dir, export_dir = tmp_path / "run", tmp_path / "export"
  save_dir.mkdir()
  train, history = _supervised(save_dir=str(save_dir), save_every=1_000,
                               export_dir=str(export_dir),
                               keep_best="accuracy")
  assert os.listdir(save_dir) == [] and not export_dir.exists()
  assert train.step == 3 and history.eval["step"] == [2, 3]
  assert history.stop_reason == "dry run"
  err = capfd.readouterr().err
  assert "resuming from" in err and "at step 2" in err  # The resume.
  verdict = [line for line in err.splitlines() if "dry run" in line]
  assert len(verdict) == 1 and verdict[0].startswith(
      "Supervised: dry run OK in ")
  assert ("3 steps, evaluation (accuracy " in verdict[0] and
          ", save, resume at step 2, export; the real run (10000 steps) was "
          f"not started; save_dir {save_dir} and export_dir {export_dir} "
          "are untouched." in verdict[0])
  # The settings are the real run's again.
  assert (train.num_steps, train.save_dir, train.dry_run) == (
      10_000, str(save_dir), True)


def test_a_loss_with_the_wrong_shape_is_found_before_any_step(tmp_path):
  def wrong_shape(logits, labels):  # [batch, batch]: a broadcast mistake.
    return tf.square(logits[:, :1] - tf.cast(labels, tf.float32))

  with pytest.raises(snt.scenarios.DryRunError,
                     match=r"^Supervised: dry run FAILED at building and "
                     r"tracing \(after 0 of 3 steps\): ValueError: "
                     r"Supervised: loss_fn") as caught:
    _supervised(wrong_shape, save_dir=str(tmp_path))
  assert isinstance(caught.value.__cause__, ValueError)
  assert os.listdir(tmp_path) == []


def test_a_mistake_met_at_the_first_evaluation_is_found_after_2_steps(
    tmp_path):
  # The real run would meet it at step 1,000, after the training before.
  with pytest.raises(snt.scenarios.DryRunError,
                     match=r"^Supervised: dry run FAILED at evaluation "
                     r"\(after 2 of 3 steps\): MetricNotFoundError: "
                     r"Supervised: keep_best 'acc' is not an eval metric; "
                     r"available: \['accuracy', 'loss'\]\.$"):
    _supervised(save_dir=str(tmp_path), keep_best="acc")
  assert os.listdir(tmp_path) == []


def test_with_accumulation_the_dry_run_trains_up_to_an_update(capfd):
  # 3 micro-batches of accumulate_steps=4 would never update the weights.
  model = snt.Linear(2)
  train = snt.scenarios.Supervised(num_steps=100, batch_size=16,
                                   dry_run=True, progress=False,
                                   accumulate_steps=4)
  model(tf.zeros([1, 3]))
  before = model.w.numpy().copy()
  train(model, snt.optimizers.SGD(0.1), toy_task.loss, toy_task.data(),
        eval_data=toy_task.data())
  assert not np.array_equal(model.w.numpy(), before)
  assert train.step == 5
  verdict = capfd.readouterr().err
  assert ("dry run OK in " in verdict and " 5 steps (1 optimizer update: "
          "accumulate_steps=4), evaluation " in verdict and
          "resume at step 4," in verdict)


def test_an_error_inside_the_step_is_given_whole_in_the_verdict():
  def bad_metric(outputs, labels):  # 32 values cannot be cut into 3 rows.
    del labels
    return tf.reshape(outputs, [3, -1])

  train = snt.scenarios.Supervised(num_steps=100, batch_size=16,
                                   dry_run=True, progress=False)
  with pytest.raises(snt.scenarios.DryRunError) as caught:
    train(snt.Linear(2), snt.optimizers.SGD(0.1), toy_task.loss,
          toy_task.data(), metrics={"bad": bad_metric})
  verdict = str(caught.value)
  assert verdict.startswith("Supervised: dry run FAILED at training (after "
                            "0 of 3 steps): ValueError: ")
  assert "evenly divisible by 3" in verdict, verdict  # The cause itself.
  assert "in user code" not in verdict and "\n" not in verdict


def test_dry_run_must_be_a_bool():
  with pytest.raises(TypeError, match="^GAN: dry_run must be True or False, "
                     "got 'yes'"):
    snt.scenarios.GAN(10, dry_run="yes")


# One row per scenario class (the table's variants of a class, such as
# mixed precision or annealing, dry-run the same way; the suite's time).
_ONE_PER_CLASS = list({row.name.split("+")[0]: row
                       for row in reversed(scenario_table.ROWS)}.values())


@pytest.mark.parametrize("row", _ONE_PER_CLASS,
                         ids=[row.name for row in _ONE_PER_CLASS])
def test_every_scenario_dry_runs(row, tmp_path):
  scenario = scenario_table.train(row, dry_run=True,
                                  save_dir=str(tmp_path / "run"))
  assert scenario.step == 3 and not (tmp_path / "run").exists()
  assert scenario.history.stop_reason == "dry run"


class _Resolver:

  def __init__(self, spec):
    self.spec = spec

  def cluster_spec(self):
    return tf.train.ClusterSpec(self.spec)


class _Strategy:

  def __init__(self, spec):
    self.cluster_resolver = _Resolver(spec)


def test_a_cluster_is_refused():
  from sonnet_like.scenarios import dry_run  # pylint: disable=g-import-not-at-top
  dry_run.check_one_machine("PPO", tf.distribute.get_strategy())
  dry_run.check_one_machine("PPO", _Strategy({"worker": ["a:1"]}))
  with pytest.raises(ValueError, match="^PPO: dry_run=True runs on one "
                     "machine"):
    dry_run.check_one_machine("PPO", _Strategy({"worker": ["a:1", "b:2"]}))
