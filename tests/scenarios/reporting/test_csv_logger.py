"""CSVLogger: train.csv and eval.csv, one row per step after a resume."""

import pytest

from sonnet_like.scenarios.reporting import csv_logger


class _Scenario:
  is_chief, num_steps, log_every = True, 8, 2

  def __init__(self, save_dir, step=0):
    self.save_dir, self.step = save_dir, step


def _train(logger, scenario, steps):
  logger.begin(scenario)
  for step in steps:
    logger.step_end(scenario, step, {"loss": 10.0 - step})
    if step % 4 == 0:
      logger.eval_end(scenario, step, {"accuracy": step / 8})
  logger.end(scenario)


def test_rows_every_log_step_and_eval_columns(tmp_path):
  logger = csv_logger.CSVLogger()
  _train(logger, _Scenario(str(tmp_path)), range(1, 9))
  train = csv_logger.read(str(tmp_path / "logs" / "train.csv"))
  assert train == {"step": [2, 4, 6, 8], "loss": [8.0, 6.0, 4.0, 2.0]}
  assert (tmp_path / "logs" / "eval.csv").read_text() == (
      "step,accuracy\n4,0.5\n8,1.0\n")


def test_a_resume_drops_the_rows_after_the_restored_step(tmp_path):
  # A process killed at step 6 logged steps 2-6; its last checkpoint was
  # step 4, so the resumed run trains 5-8 again: one row per step.
  _train(csv_logger.CSVLogger(), _Scenario(str(tmp_path)), range(1, 7))
  resumed = csv_logger.CSVLogger(log_every=2)
  scenario = _Scenario(str(tmp_path), step=4)
  resumed.begin(scenario)
  for step in range(5, 9):
    resumed.step_end(scenario, step, {"loss": -step, "new": 1.0})
  resumed.end(scenario)
  train = csv_logger.read(resumed.path("train"))
  assert train["step"] == [2, 4, 6, 8]
  assert train["loss"] == [8.0, 6.0, -6.0, -8.0]
  assert train["new"][2:] == [1.0, 1.0]  # A new value widens the file.
  assert csv_logger.read(resumed.path("eval"))["step"] == [4]


def test_without_a_folder_the_error_says_where_to_give_one(tmp_path):
  given = csv_logger.CSVLogger(str(tmp_path / "elsewhere"))
  _train(given, _Scenario(None), [2])  # A directory given: no save_dir needed.
  assert (tmp_path / "elsewhere" / "train.csv").read_text() == (
      "step,loss\n2,8.0\n")
  with pytest.raises(ValueError, match=r"^CSVLogger needs a folder for its "
                     r"files: pass directory=\.\.\., or give the scenario "
                     r"\(_Scenario\) a save_dir"):
    csv_logger.CSVLogger().begin(_Scenario(None))
