"""catch_stop_signals: a flag instead of an exit, handlers restored after."""

import os
import signal
import threading

import pytest

from sonnet_like.scenarios.run_folder import signals

if threading.current_thread() is not threading.main_thread():
  pytest.skip("signal handlers need the main thread", allow_module_level=True)


def test_sigterm_and_sigint_set_the_flag():
  before = signal.getsignal(signal.SIGTERM)
  with signals.catch_stop_signals() as flag:
    assert not flag
    os.kill(os.getpid(), signal.SIGTERM)
    assert flag and flag.signal_name == "SIGTERM"
  with signals.catch_stop_signals() as flag:
    os.kill(os.getpid(), signal.SIGINT)
    assert flag.signal_name == "SIGINT"
  assert signal.getsignal(signal.SIGTERM) is before
  assert signals.EXIT_CODES == {"SIGTERM": 143, "SIGINT": 130}


def test_second_ctrl_c_interrupts():
  with signals.catch_stop_signals() as flag:
    os.kill(os.getpid(), signal.SIGINT)
    try:
      os.kill(os.getpid(), signal.SIGINT)
      raise AssertionError("a second Ctrl-C must raise KeyboardInterrupt")
    except KeyboardInterrupt:
      pass
  assert flag.signal_name == "SIGINT"


def test_disabled_installs_nothing():
  before = signal.getsignal(signal.SIGTERM)
  with signals.catch_stop_signals(enabled=False) as flag:
    assert signal.getsignal(signal.SIGTERM) is before
  assert not flag


def test_in_a_cluster_every_worker_takes_the_agreed_answer():
  votes = []

  def agree(stop):  # Stands in for the all-reduce: another worker stops.
    votes.append(stop)
    return len(votes) >= 2

  with signals.catch_stop_signals(agree=agree) as flag:
    assert not flag.agreed() and not flag
    os.kill(os.getpid(), signal.SIGTERM)
    assert not flag  # A signal waits for the next agreed boundary.
    assert flag.agreed() and flag
  assert votes == [False, True] and flag.signal_name == "SIGTERM"
  other = signals.StopFlag(agree=lambda stop: True)
  assert other.agreed() and other.signal_name == signals.OTHER_WORKER
  assert other.exit_code == signals.PREEMPTED_EXIT_CODE == 143


def test_a_termination_watcher_stops_the_run_like_sigterm(tmp_path):
  import numpy as np  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import sonnet_like as snt  # pylint: disable=g-import-not-at-top

  class Steps(snt.scenarios.Hook):
    step = 0

    def step_end(self, scenario, step, logs):
      Steps.step = step

  x = np.random.default_rng(0).normal(size=(32, 3)).astype(np.float32)
  y = (x[:, 0] > 0).astype(np.int32)
  loss = lambda o, t: tf.nn.sparse_softmax_cross_entropy_with_logits(t, o)
  train = snt.scenarios.Supervised(
      num_steps=20, batch_size=8, save_every=10, save_dir=str(tmp_path),
      progress=False, hooks=[Steps()],
      termination_watcher=lambda: Steps.step >= 3)
  with pytest.raises(SystemExit) as exit_:
    train(snt.Linear(2), snt.optimizers.SGD(0.1), loss, (x, y))
  assert exit_.value.code == 143
  assert tf.train.latest_checkpoint(str(tmp_path)).endswith("ckpt-3")
  assert train.history.stop_reason == signals.WATCHER
  with pytest.raises(TypeError, match="termination_watcher must be a "
                     "callable"):
    snt.scenarios.Supervised(num_steps=2, termination_watcher=True)
