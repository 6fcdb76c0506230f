"""Turn SIGTERM (preemption) and SIGINT (Ctrl-C) into a stop request.

While `catch_stop_signals` is active, either signal only sets a flag; the
engine asks the flag at each call boundary (`StopFlag.agreed`), saves a
checkpoint, says how to resume and exits. A second Ctrl-C interrupts at
once. A `termination_watcher` (a callable returning True once the platform
has announced the end of this machine, as TensorFlow's `TerminationConfig`
takes) stops the run the same way.

In a cluster every worker must stop at the same step, since saving takes
them all: the flag's `agree` function combines the workers' answers (an
all-reduce), so a notice on any worker stops every worker at the same
boundary, and each exits with `PREEMPTED_EXIT_CODE`, the code a cluster
manager reads as "restart me".
"""

import contextlib
import signal
import threading
from typing import Callable, Iterator

# 128 + SIGTERM: what a process ended by SIGTERM reports, and what every
# worker of a preempted run exits with ("restart me").
PREEMPTED_EXIT_CODE = 128 + signal.SIGTERM
EXIT_CODES = {"SIGTERM": PREEMPTED_EXIT_CODE,
              "SIGINT": 128 + signal.SIGINT}

WATCHER = "a termination notice (termination_watcher)"
OTHER_WORKER = "a stop on another worker"


class StopFlag:
  """Whether to stop, and why.

  Args:
    agree: Combines this worker's "stop?" with every other worker's (True
      if any says so); None for a single process.
    watcher: Returns True once this machine is about to be taken away.
  """

  def __init__(self, agree: Callable[[bool], bool] | None = None,
               watcher: Callable[[], bool] | None = None):
    self.signal_name: str | None = None
    self._agree, self._watcher = agree, watcher
    self._stopping = False

  def agreed(self) -> bool:
    """Whether to stop now: the same answer on every worker of a cluster.

    Called at each call boundary; in a cluster it is a collective, so every
    worker calls it at the same boundaries.
    """
    if self.signal_name is None and self._watcher is not None and (
        self._watcher()):
      self.signal_name = WATCHER
    stop = self.signal_name is not None
    if self._agree is not None:
      stop = self._agree(stop)
      if stop and self.signal_name is None:
        self.signal_name = OTHER_WORKER
    self._stopping = stop
    return stop

  @property
  def exit_code(self) -> int:
    return EXIT_CODES.get(self.signal_name, PREEMPTED_EXIT_CODE)

  def __bool__(self) -> bool:
    """Whether to stop: in one process, once a signal is caught; in a
    cluster, the last agreed answer (a signal after it waits for the next
    boundary, so that every worker gives the same answer)."""
    if self._agree is None:
      return self._stopping or self.signal_name is not None
    return self._stopping


@contextlib.contextmanager
def catch_stop_signals(enabled: bool = True,
                       agree: Callable[[bool], bool] | None = None,
                       watcher: Callable[[], bool] | None = None
                       ) -> Iterator[StopFlag]:
  """Installs the handlers (main thread only) and restores the old ones."""
  flag = StopFlag(agree, watcher)
  if not enabled or threading.current_thread() is not threading.main_thread():
    yield flag
    return
  previous = {}

  def handler(signum, frame):
    name = signal.Signals(signum).name
    if flag.signal_name is not None and name == "SIGINT":
      signal.default_int_handler(signum, frame)  # Second Ctrl-C: at once.
    flag.signal_name = name

  for sig in (signal.SIGTERM, signal.SIGINT):
    previous[sig] = signal.signal(sig, handler)
  try:
    yield flag
  finally:
    for sig, old in previous.items():
      signal.signal(sig, old)
