"""Turn SIGTERM (preemption) and SIGINT (Ctrl-C) into a stop request.

While `catch_stop_signals` is active, either signal only sets a flag; the
engine checks it at the next step boundary, saves a checkpoint, says how to
resume and exits. A second Ctrl-C interrupts at once.
"""

import contextlib
import signal
import threading
from typing import Iterator

EXIT_CODES = {"SIGTERM": 128 + signal.SIGTERM, "SIGINT": 128 + signal.SIGINT}


class StopFlag:
  """Which signal arrived, if any."""

  def __init__(self):
    self.signal_name: str | None = None

  def __bool__(self) -> bool:
    return self.signal_name is not None


@contextlib.contextmanager
def catch_stop_signals(enabled: bool = True) -> Iterator[StopFlag]:
  """Installs the handlers (main thread only) and restores the old ones."""
  flag = StopFlag()
  if not enabled or threading.current_thread() is not threading.main_thread():
    yield flag
    return
  previous = {}

  def handler(signum, frame):
    name = signal.Signals(signum).name
    if flag and name == "SIGINT":  # Second Ctrl-C: give up waiting.
      signal.default_int_handler(signum, frame)
    flag.signal_name = name

  for sig in (signal.SIGTERM, signal.SIGINT):
    previous[sig] = signal.signal(sig, handler)
  try:
    yield flag
  finally:
    for sig, old in previous.items():
      signal.signal(sig, old)
