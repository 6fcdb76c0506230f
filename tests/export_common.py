"""Loading exports in a fresh Python that never imports sonnet_like.

`load_and_call(jobs)` runs one subprocess (TensorFlow's import costs a few
seconds, so a test file batches its exports into one call). Each job names
an export folder, a signature (or "__call__" for the loaded object itself)
and NumPy inputs; the results come back as NumPy.
"""

import os
import pickle
import subprocess
import sys
import tempfile
from typing import Any

import numpy as np
import tensorflow as tf

import sonnet_like as snt

SCRIPT = r'''
import os, pickle, sys
os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
import numpy as np
import tensorflow as tf

with open(sys.argv[1], "rb") as f:
  jobs = pickle.load(f)
results = []
for path, signature, inputs in jobs:
  loaded = tf.saved_model.load(path)
  if signature == "__call__":
    outputs = loaded(tf.nest.map_structure(tf.constant, inputs))
  else:
    outputs = loaded.signatures[signature](
        **{k: tf.constant(v) for k, v in inputs.items()})
  results.append(tf.nest.map_structure(lambda t: t.numpy(), outputs))
assert "sonnet_like" not in sys.modules, "sonnet_like was imported"
with open(sys.argv[2], "wb") as f:
  pickle.dump({"results": results, "modules": sorted(sys.modules)}, f)
'''


def load_and_call(jobs: list[tuple[str, str, Any]]) -> list[Any]:
  """Runs `(path, signature, inputs)` jobs in a Python without sonnet_like."""
  with tempfile.TemporaryDirectory() as folder:
    given, got = os.path.join(folder, "in.pkl"), os.path.join(folder, "out.pkl")
    with open(given, "wb") as f:
      pickle.dump(jobs, f)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", SCRIPT, given, got],
                          cwd=folder, env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    with open(got, "rb") as f:
      out = pickle.load(f)
  assert not any(m.startswith("sonnet_like") for m in out["modules"])
  return out["results"]


def assert_bitwise(got: Any, expected: Any) -> None:
  """Same structure, dtypes and bits."""
  if isinstance(expected, dict):
    assert sorted(got) == sorted(expected)
    for key in expected:
      assert_bitwise(got[key], expected[key])
    return
  expected = np.asarray(expected)
  assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
  assert got.shape == expected.shape, (got.shape, expected.shape)
  assert np.array_equal(got.view(np.uint8), expected.view(np.uint8)), (
      got, expected)


def saved_model_cli(path: str) -> str:
  """`saved_model_cli show --dir path --all`, as text."""
  cli = os.path.join(os.path.dirname(sys.executable), "saved_model_cli")
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
  done = subprocess.run([cli, "show", "--dir", path, "--all"], env=env,
                        capture_output=True, text=True, timeout=300,
                        check=False)
  assert done.returncode == 0, done.stderr[-3000:]
  return done.stdout


def normal(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
  return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


def conv_net() -> snt.Module:
  """A small ConvNet on 8x8 images (the digits example's shape)."""
  return snt.Sequential([
      snt.Conv2D(8, 3, name="conv_0"), tf.nn.relu,
      snt.Conv2D(16, 3, stride=2, name="conv_1"), tf.nn.relu,
      snt.Flatten(),
      snt.Linear(10, name="logits"),
  ], name="conv_net")
