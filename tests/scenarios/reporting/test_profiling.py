"""profile_steps: a profiler trace of an exact window of steps in the logs."""

import glob
import os

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt


class _Calls(snt.scenarios.Hook):
  """Records the step count after each compiled call."""

  def __init__(self):
    self.steps = []

  def step_end(self, scenario, step, logs):
    self.steps.append(step)


def _run(save_dir, **settings):
  rng = np.random.default_rng(0)
  x = rng.normal(size=(64, 3)).astype(np.float32)
  y = (x[:, 0] > 0).astype(np.int32)
  calls = _Calls()
  train = snt.scenarios.Supervised(
      num_steps=12, batch_size=16, steps_per_call=5, save_dir=str(save_dir),
      progress=False, hooks=[calls], **settings)
  loss = lambda logits, labels: tf.nn.sparse_softmax_cross_entropy_with_logits(
      labels, logits)
  train(snt.Linear(2), snt.optimizers.SGD(0.1), loss, (x, y))
  return calls.steps


def test_the_window_is_traced_into_the_logs(tmp_path, capfd):
  steps = _run(tmp_path, profile_steps=(3, 7))
  assert steps == [3, 7, 12]  # Calls cut at the window's ends.
  traces = glob.glob(str(tmp_path / "logs" / "plugins" / "profile" / "*" /
                         "*.xplane.pb"))
  assert len(traces) == 1 and os.path.getsize(traces[0]) > 0
  assert "profiled steps 3-7 into" in capfd.readouterr().err


def test_without_a_window_calls_are_not_cut(tmp_path):
  assert _run(tmp_path) == [5, 10, 12]
  assert not os.path.exists(tmp_path / "logs" / "plugins")


@pytest.mark.parametrize("window", [(5, 3), (0, 13), (-1, 2), (2, 2),
                                    "ab", (1, 2, 3), (1.0, 2)])
def test_a_bad_window_is_refused(window):
  with pytest.raises(ValueError, match=r"^Supervised: profile_steps must be "
                     r"a pair \(start, stop\) of steps with 0 <= start < stop "
                     r"<= num_steps=12, got "):
    snt.scenarios.Supervised(12, save_dir="x", profile_steps=window)


def test_it_needs_a_save_dir():
  with pytest.raises(ValueError, match="^GAN: profile_steps writes the trace "
                     "into save_dir/logs and needs a save_dir"):
    snt.scenarios.GAN(12, profile_steps=(1, 2))


def test_another_profiler_running_is_named(tmp_path):
  tf.profiler.experimental.start(str(tmp_path / "mine"))
  try:
    with pytest.raises(RuntimeError, match="^Supervised: profile_steps: "
                       "another TensorFlow profiler is already running"):
      _run(tmp_path / "run", profile_steps=(0, 2))
  finally:
    tf.profiler.experimental.stop()
