"""Exact resume: a run killed (SIGKILL) or preempted (SIGTERM) and started
again ends with the same weights, bit for bit, as an uninterrupted run."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import tensorflow as tf

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

_SCRIPT = SCRIPT_PREAMBLE + textwrap.dedent("""
    class Noisy(snt.scenarios.Supervised):
      # A subclassed step that also draws from the checkpointed generator.
      def train_step(self, data):
        inputs, targets = data
        noise = self.rng.normal(tf.shape(inputs), stddev=0.1)
        return super().train_step((inputs + noise, targets))

    rng = np.random.default_rng(0)
    x = rng.normal(size=(100, 6)).astype(np.float32)
    y = (x[:, 0] * x[:, 1] > 0).astype(np.int32)
    hidden, head = snt.Linear(16, name="hidden"), snt.Linear(2, name="head")

    class Net(snt.Module):
      def __init__(self):
        super().__init__(name="net")
        self.hidden, self.head = hidden, head
      def __call__(self, x):
        return self.head(tf.nn.relu(self.hidden(x)))

    model = Net()
    optimizer = keras.optimizers.Adam(0.01)
    loss = lambda o, t: tf.nn.sparse_softmax_cross_entropy_with_logits(t, o)
    train = Noisy(num_steps=60, batch_size=16, steps_per_call=3,
                  save_every=6, eval_every=12, save_dir=save_dir,
                  progress=False, hooks=[Slow()])
    train(model, optimizer, loss, (x, y), eval_data=(x, y))
    np.savez(out, *[v.numpy() for v in model.trainable_variables])
    print("FINISHED", train.step)
""")


def _root():
  return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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


def test_killed_and_preempted_runs_resume_bitwise(tmp_path):
  script = tmp_path / "train.py"
  script.write_text(_SCRIPT.format(root=_root()))
  whole = _start(script, tmp_path / "whole", tmp_path / "whole.npz", 0.0)
  # 0.5 s per call leaves the test ~8 s after the checkpoint it waits for
  # to send its signal before the run would end, even on a loaded machine.
  killed = _start(script, tmp_path / "killed", tmp_path / "killed.npz", 0.5)
  termed = _start(script, tmp_path / "termed", tmp_path / "termed.npz", 0.5)

  _wait_for_checkpoint(tmp_path / "killed", killed, at_least=12)
  killed.send_signal(signal.SIGKILL)
  killed.communicate()
  _wait_for_checkpoint(tmp_path / "termed", termed, at_least=6)
  termed.send_signal(signal.SIGTERM)
  _, termed_err = termed.communicate(timeout=60)
  assert termed.returncode == 128 + signal.SIGTERM, termed_err[-2000:]
  assert "caught SIGTERM" in termed_err
  assert "Run the same command again to resume" in termed_err

  resumed_killed = _start(script, tmp_path / "killed", tmp_path / "killed.npz",
                          0.0)
  resumed_termed = _start(script, tmp_path / "termed", tmp_path / "termed.npz",
                          0.0)
  for process in (whole, resumed_killed, resumed_termed):
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err[-3000:]
    assert "FINISHED 60" in out
    assert ("resuming from" in err) == (process is not whole)

  expected = _weights(tmp_path / "whole.npz")
  for name in ("killed", "termed"):
    got = _weights(tmp_path / f"{name}.npz")
    assert len(got) == len(expected) == 4
    for a, b in zip(expected, got):
      np.testing.assert_array_equal(a, b)
