"""The README's "load the export without sonnet_like" snippet runs as shown.

It runs in a fresh Python (which must never import sonnet_like) against
the export that the README's main job (examples/digits_supervised.py, a
few steps) writes, and prints the classes that the trained model gives.
Once the snippet is in README.md, the README's copy is the one run.
"""

import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
import tests

pytest.importorskip("sklearn")
pytest.importorskip("matplotlib")

_ROOT = pathlib.Path(tests.ROOT)

def _snippet() -> str:
  readme = (_ROOT / "README.md").read_text()
  for block in re.findall(r"```python\n(.*?)```", readme, re.S):
    if 'tf.saved_model.load("runs/digits/export")' in block:
      return block
  raise AssertionError("README.md has no snippet loading runs/digits/export")


def _example():
  path = _ROOT / "examples" / "digits_supervised.py"
  spec = importlib.util.spec_from_file_location("digits_supervised", path)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


def test_readme_snippet_loads_the_main_jobs_export_without_sonnet_like(
    tmp_path):
  example = _example()
  save_dir = tmp_path / "runs" / "digits"
  example.main(["--num_steps", "20", "--steps_per_call", "10",
                "--eval_every", "20", "--save_dir", str(save_dir)])
  assert (save_dir / "export" / "saved_model.pb").exists()
  script = _snippet() + (
      "\nimport sys\nassert 'sonnet_like' not in sys.modules\n")
  env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
  env["TF_CPP_MIN_LOG_LEVEL"] = "3"
  done = subprocess.run([sys.executable, "-c", script], cwd=tmp_path,
                        env=env, capture_output=True, text=True, timeout=300,
                        check=False)
  assert done.returncode == 0, done.stderr[-3000:]
  classes = [int(c) for c in re.findall(r"\d+",
                                         done.stdout.splitlines()[0])]
  # What the trained model (restored from the run's last checkpoint) says.
  model = example.conv_net()
  tf.train.Checkpoint(model=model).read(
      str(save_dir / "ckpt-20")).expect_partial()
  from sklearn.datasets import load_digits  # pylint: disable=g-import-not-at-top
  images = (load_digits().images[:8] / 16.0).astype(np.float32)[..., None]
  assert classes == np.argmax(model(images), axis=-1).tolist()
