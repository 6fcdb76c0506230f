"""Smoke test of examples/digits_supervised.py with a handful of steps."""

import importlib.util
import json
import os

import pytest
import tests

pytest.importorskip("sklearn")
pytest.importorskip("matplotlib")

_PATH = os.path.join(tests.ROOT, "examples", "digits_supervised.py")


def _example():
  spec = importlib.util.spec_from_file_location("digits_supervised", _PATH)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


def test_runs_saves_plots_and_says_done_on_rerun(tmp_path, capsys):
  example = _example()
  argv = ["--num_steps", "20", "--steps_per_call", "5", "--eval_every", "10",
          "--save_every", "10", "--save_dir", str(tmp_path)]
  accuracy = example.main(argv)
  out = capsys.readouterr().out
  assert 0.0 <= accuracy <= 1.0
  assert f"Learning curves: {tmp_path}/learning_curves.png" in out
  assert os.path.getsize(tmp_path / "learning_curves.png") > 1000
  assert (tmp_path / "ckpt-20.index").exists()
  assert os.listdir(tmp_path / "logs" / "train")
  with open(tmp_path / "history.json") as f:
    assert json.load(f)["eval"]["step"] == [10, 20]
  assert example.main(argv) == accuracy
  assert "already done (20 of 20 steps)" in capsys.readouterr().err


def test_ema_accumulation_and_schedule_flags(tmp_path, capsys):
  example = _example()
  argv = ["--num_steps", "20", "--steps_per_call", "5", "--eval_every", "10",
          "--save_every", "10", "--save_dir", str(tmp_path), "--ema", "0.9",
          "--accumulate_steps", "2", "--schedule", "warmup_cosine"]
  assert 0.0 <= example.main(argv) <= 1.0
  capsys.readouterr()
  with open(tmp_path / "history.json") as f:
    rates = json.load(f)["train"]["learning_rate"]
  # Logged at step 20: the rate of step 19, near the end of the cosine.
  expected = 1e-3 * float(example.schedule("warmup_cosine", 20)(19))
  assert rates == [pytest.approx(expected, rel=1e-5)] and expected < 1e-4
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  names = tf.train.load_checkpoint(str(tmp_path)).get_variable_to_shape_map()
  assert any(n.startswith("model_ema/averages/") for n in names)
  assert any(n.startswith("gradient_sums/sums/") for n in names)


def test_dry_run_checks_and_leaves_save_dir_untouched(tmp_path, capsys):
  accuracy = _example().main(["--dry_run", "--keep_best", "accuracy",
                              "--save_dir", str(tmp_path / "run")])
  assert 0.0 <= accuracy <= 1.0
  assert not (tmp_path / "run").exists()
  assert "ShiftedDigits: dry run OK in " in capsys.readouterr().err
