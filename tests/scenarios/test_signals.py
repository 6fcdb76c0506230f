"""catch_stop_signals: a flag instead of an exit, handlers restored after."""

import os
import signal
import threading

import pytest

from sonnet_like.scenarios import signals

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
