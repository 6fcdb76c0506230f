"""dm-sonnet's side of the error cases, run in a child process.

Some of dm-sonnet 2.0.2's mistakes reach a TensorFlow kernel, and on some
CPUs a kernel given bad input aborts the whole process (oneDNN's depthwise
convolution on a rank-3 input, for one) instead of raising. So the error-case
tests (`tests/test_side_by_side.py`) ask a child process what dm-sonnet does
with each case: the child runs the case and answers with what was raised,
or dies, which counts as "Sonnet crashes". A crashed child is replaced for
the next case.

Run as `python -m tests.sonnet_process MODULE`, the child takes the cases
from `MODULE.CASES` (`tests.error_cases` by default), reads case names on its
standard input, one a line, and writes one JSON line for each: first
`{"phase": ...}` as each step starts (so a crash is placed), then
`{"outcome": ...}`, each behind `_MARK` (TensorFlow may print to standard
output too).
"""

import dataclasses
import importlib
import json
import os
import subprocess
import sys
from typing import Any

_MARK = "sonnet_process: "
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@dataclasses.dataclass(frozen=True)
class Outcome:
  """What dm-sonnet did with one case.

  Attributes:
    phase: "build" or "use" where it raised or crashed; None if it ran.
    error: The exception type raised (resolved in this process); None if it
      ran or crashed.
    message: `str()` of the exception.
    crashed: How the child died ("signal 6", "exit 1"), if it did.
  """
  phase: str | None
  error: type | None = None
  message: str = ""
  crashed: str | None = None

  def __repr__(self):
    if self.crashed:
      return f"crashed in {self.phase} ({self.crashed})"
    if self.error is None:
      return "ran without an error"
    return f"{self.error.__name__} in {self.phase}: {self.message[:200]}"


def _type_path(error: BaseException) -> str:
  cls = type(error)
  return f"{cls.__module__}:{cls.__qualname__}"


def _resolve(path: str) -> type:
  module, _, qualname = path.partition(":")
  value = importlib.import_module(module)
  for part in qualname.split("."):
    value = getattr(value, part)
  return value


class SonnetProcess:
  """A child process that runs error cases with dm-sonnet, one at a time.

  Args:
    cases: The module whose `CASES` (a list of `error_cases.ErrorCase`)
      the child runs.
  """

  def __init__(self, cases: str = "tests.error_cases"):
    self._cases = cases
    self._child: subprocess.Popen | None = None

  def _start(self) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (_ROOT, os.environ.get("PYTHONPATH")) if p))
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return subprocess.Popen(
        [sys.executable, "-m", "tests.sonnet_process", self._cases], cwd=_ROOT, env=env,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True, bufsize=1)

  def outcome(self, name: str) -> Outcome:
    """What dm-sonnet does with the error case called `name`."""
    if self._child is None or self._child.poll() is not None:
      self._child = self._start()
    child = self._child
    child.stdin.write(name + "\n")
    child.stdin.flush()
    phase = None
    for line in child.stdout:
      if not line.startswith(_MARK):
        continue
      message = json.loads(line[len(_MARK):])
      if "phase" in message:
        phase = message["phase"]
        continue
      found = message["outcome"]
      if found is None:
        return Outcome(None)
      return Outcome(found["phase"], _resolve(found["type"]),
                     found["message"])
    code = child.wait()
    self._child = None
    died = f"signal {-code}" if code < 0 else f"exit {code}"
    return Outcome(phase, crashed=died)

  def close(self) -> None:
    if self._child is not None and self._child.poll() is None:
      self._child.stdin.close()
      self._child.wait(timeout=30)
    self._child = None


def _serve(module: str) -> None:
  """The child: answers case names read from standard input."""
  import sonnet  # pylint: disable=g-import-not-at-top

  def say(message: dict[str, Any]) -> None:
    sys.stdout.write(_MARK + json.dumps(message) + "\n")
    sys.stdout.flush()

  cases = {case.name: case
           for case in importlib.import_module(module).CASES}
  for line in sys.stdin:
    case = cases[line.strip()]
    outcome = None
    phase = "build"
    try:
      say({"phase": phase})
      made = case.build(sonnet)
      if case.use is not None:
        phase = "use"
        say({"phase": phase})
        case.use(sonnet, made)
    except Exception as e:  # pylint: disable=broad-except
      outcome = {"phase": phase, "type": _type_path(e), "message": str(e)}
    say({"outcome": outcome})


if __name__ == "__main__":
  _serve(sys.argv[1])
