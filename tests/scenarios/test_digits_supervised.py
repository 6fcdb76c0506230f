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


def test_dry_run_checks_and_leaves_save_dir_untouched(tmp_path, capsys):
  accuracy = _example().main(["--dry_run", "--keep_best", "accuracy",
                              "--save_dir", str(tmp_path / "run")])
  assert 0.0 <= accuracy <= 1.0
  assert not (tmp_path / "run").exists()
  assert "ShiftedDigits: dry run OK in " in capsys.readouterr().err
