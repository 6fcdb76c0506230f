"""Helpers of the resume tests (subprocess training scripts, waiting for a
checkpoint); the tests themselves are rows of test_scenario_table.py."""

import subprocess
import sys
import textwrap
import time

import numpy as np
import tensorflow as tf
import tests

# How every resume test's training script starts: imports, op determinism,
# its arguments (save dir, output file, seconds to sleep per call) and the
# hook that sleeps them.
SCRIPT_PREAMBLE = textwrap.dedent("""
    import os, sys, time
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    import numpy as np, tensorflow as tf, keras
    sys.path.insert(0, {root!r})
    import sonnet_like as snt
    tf.config.experimental.enable_op_determinism()
    tf.random.set_seed(0)
    save_dir, out, delay = sys.argv[1], sys.argv[2], float(sys.argv[3])

    class Slow(snt.scenarios.Hook):
      def step_end(self, scenario, step, logs):
        time.sleep(delay)
""")

def _root():
  return tests.ROOT


def _start(script, save_dir, out, delay):
  return subprocess.Popen(
      [sys.executable, str(script), str(save_dir), str(out), str(delay)],
      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for_checkpoint(save_dir, process, at_least, timeout=90):
  deadline = time.time() + timeout
  while time.time() < deadline:
    state = tf.train.get_checkpoint_state(str(save_dir))
    if state and int(state.model_checkpoint_path.rsplit("-", 1)[1]) >= at_least:
      return
    assert process.poll() is None, process.communicate()[1][-2000:]
    time.sleep(0.05)
  raise AssertionError("no checkpoint appeared in time")


def _weights(path):
  with np.load(path) as f:
    return [f[k] for k in sorted(f.files, key=lambda k: int(k.split("_")[1]))]
