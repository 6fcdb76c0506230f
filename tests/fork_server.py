"""Child processes that do not import TensorFlow again.

A test that needs processes of their own (to SIGKILL one, or to make a
cluster of workers) pays ~4 s of CPU a process for `import tensorflow`
alone. A `ForkServer` is one helper process that imports the given modules
once, before TensorFlow's runtime starts (no device, no thread pool, no
eager context: `check_not_started` below), then forks a child for each
script it is asked to run. Each child is a process of its own (its own pid,
exit status and signals) whose TensorFlow runtime starts in it, as in a
fresh `python script.py`: the script runs as `__main__` with the given
argv and environment (read when the runtime starts, e.g. `TF_CONFIG`), and
the interpreter ends as after a script (`atexit`, finalisers).

What a forked child does not get anew: Python's hash seed and whatever the
preloaded modules computed at import. Tests about fresh processes as such
(seeds across processes) start real ones.

    server = fork_server.shared(["tensorflow", "sonnet_like"])
    child = server.popen([script, "arg"], env=dict(os.environ))
    out, err = child.communicate(timeout=300)
    child.returncode  # As subprocess.Popen's: -9 after a SIGKILL.
"""

import atexit
import json
import os
import pathlib
import select
import subprocess
import sys
import tempfile
import time
from typing import Sequence

import tests

_READY = "READY"


def check_not_started() -> None:
  """Raises if TensorFlow's runtime has started in this process: a fork
  would then copy its thread pools without their threads."""
  tf = sys.modules.get("tensorflow")
  if tf is None:
    return
  from tensorflow.python.eager import context  # pylint: disable=g-import-not-at-top
  if context.context()._initialized:  # pylint: disable=protected-access
    raise RuntimeError("fork_server: TensorFlow's runtime started while "
                       "preloading; a forked child would hang")


class Child:
  """A forked child, with the part of `subprocess.Popen` the tests use."""

  def __init__(self, server: "ForkServer", pid: int, out: pathlib.Path,
               err: pathlib.Path):
    self._server, self.pid, self._out, self._err = server, pid, out, err
    self.returncode: int | None = None

  def poll(self) -> int | None:
    self._server._read(timeout=0)  # pylint: disable=protected-access
    return self.returncode

  def wait(self, timeout: float | None = None) -> int:
    deadline = None if timeout is None else time.monotonic() + timeout
    while self.returncode is None:
      left = None if deadline is None else deadline - time.monotonic()
      if left is not None and left <= 0:
        raise subprocess.TimeoutExpired(f"forked child {self.pid}", timeout)
      self._server._read(timeout=left)  # pylint: disable=protected-access
    return self.returncode

  def communicate(self, timeout: float | None = None) -> tuple[str, str]:
    """Waits for the end; the child's whole stdout and stderr."""
    self.wait(timeout)
    return (self._out.read_text(errors="replace"),
            self._err.read_text(errors="replace"))


class ForkServer:
  """A helper process that imports `preload` once and forks children."""

  def __init__(self, preload: Sequence[str], env: dict | None = None):
    self._folder = pathlib.Path(tempfile.mkdtemp(prefix="fork_server_"))
    self._children: dict[int, Child] = {}
    self._count = 0
    self._buffer = b""
    with open(self._folder / "server.err", "wb") as err:
      self._process = subprocess.Popen(
          [sys.executable, "-c",
           f"import sys; sys.path.insert(0, {tests.ROOT!r}); "
           "from tests import fork_server; fork_server.serve()", *preload],
          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
          cwd=tests.ROOT, env=env)
    line = self._line(timeout=300)
    if line != _READY:
      self.close()
      raise RuntimeError(
          f"fork_server: preloading {list(preload)} failed: "
          f"{(self._folder / 'server.err').read_text()[-3000:]}")

  def __enter__(self) -> "ForkServer":
    return self

  def __exit__(self, *exc_info) -> None:
    self.close()

  def popen(self, argv: Sequence[str], env: dict) -> Child:
    """Runs the script `argv[0]` with `argv` in a forked child."""
    self._count += 1
    out = self._folder / f"{self._count}.out"
    err = self._folder / f"{self._count}.err"
    request = {"argv": [str(a) for a in argv], "env": env,
               "out": str(out), "err": str(err), "cwd": os.getcwd()}
    self._process.stdin.write((json.dumps(request) + "\n").encode())
    self._process.stdin.flush()
    while True:  # Ends seen meanwhile are recorded by `_line`.
      line = self._line(timeout=60)
      if line.startswith("STARTED "):
        child = Child(self, int(line.split()[1]), out, err)
        self._children[child.pid] = child
        return child

  def close(self) -> None:
    if self._process.poll() is None:
      self._process.stdin.close()
      try:
        self._process.wait(timeout=30)
      except subprocess.TimeoutExpired:
        self._process.kill()
        self._process.wait()
    self._process.stdout.close()

  def _line(self, timeout: float | None) -> str:
    """The server's next line that is not a child's end (those are
    recorded); raises if none comes within `timeout`."""
    while True:
      line = self._next_line(timeout)
      if line is None:
        raise RuntimeError(
            f"fork_server: no answer within {timeout} s; its stderr: "
            f"{(self._folder / 'server.err').read_text()[-3000:]}")
      if not self._ended(line):
        return line

  def _read(self, timeout: float | None) -> None:
    """Records the children's ends the server reports within `timeout`."""
    line = self._next_line(timeout)
    while line is not None:
      if not self._ended(line):
        raise RuntimeError(f"fork_server: unexpected {line!r}")
      line = self._next_line(0)

  def _ended(self, line: str) -> bool:
    if not line.startswith("ENDED "):
      return False
    _, pid, code = line.split()
    self._children[int(pid)].returncode = int(code)
    return True

  def _next_line(self, timeout: float | None) -> str | None:
    deadline = None if timeout is None else time.monotonic() + timeout
    fd = self._process.stdout.fileno()
    while b"\n" not in self._buffer:
      left = None if deadline is None else max(0, deadline - time.monotonic())
      if not select.select([fd], [], [], left)[0]:
        return None
      chunk = os.read(fd, 65536)
      if not chunk:
        raise RuntimeError(
            "fork_server: the server ended; its stderr: "
            f"{(self._folder / 'server.err').read_text()[-3000:]}")
      self._buffer += chunk
    line, self._buffer = self._buffer.split(b"\n", 1)
    return line.decode()


_SHARED: dict[tuple[str, ...], ForkServer] = {}


def shared(preload: Sequence[str]) -> ForkServer:
  """This process's server for `preload`, started at the first call (each
  pytest-xdist worker has its own) and closed when the process ends."""
  key = tuple(preload)
  if key not in _SHARED:
    if not _SHARED:
      atexit.register(_close_shared)
    _SHARED[key] = ForkServer(key)
  return _SHARED[key]


def _close_shared() -> None:
  for server in _SHARED.values():
    server.close()


_ANSWERS = [1]  # The server's fd for its answers (a copy of its stdout).


def _say(text: str) -> None:
  os.write(_ANSWERS[0], (text + "\n").encode())


def serve() -> None:
  """The server's loop: requests on stdin, one JSON object a line; answers
  `STARTED pid` for each, and `ENDED pid code` when a child ends (`code`
  as `Popen.returncode`: -N for a signal N)."""
  import importlib  # pylint: disable=g-import-not-at-top
  import runpy  # pylint: disable=g-import-not-at-top
  # What the modules print goes to stderr, not among the answers.
  _ANSWERS[0] = os.dup(1)
  os.dup2(2, 1)
  for name in sys.argv[1:]:
    importlib.import_module(name)
  check_not_started()
  _say(_READY)
  requests, buffer, running = sys.stdin.fileno(), b"", set()
  while True:
    ready = select.select([requests], [], [], 0.02 if running else None)[0]
    for pid in list(running):
      done, status = os.waitpid(pid, os.WNOHANG)
      if done:
        running.discard(pid)
        _say(f"ENDED {pid} {os.waitstatus_to_exitcode(status)}")
    if not ready:
      continue
    chunk = os.read(requests, 65536)
    if not chunk:  # The tests are done: wait for the children, then end.
      for pid in running:
        os.waitpid(pid, 0)
      return
    buffer += chunk
    while b"\n" in buffer:
      line, buffer = buffer.split(b"\n", 1)
      request = json.loads(line)
      sys.stdout.flush()
      sys.stderr.flush()
      pid = os.fork()
      if pid == 0:
        _child(request, runpy)
      running.add(pid)
      _say(f"STARTED {pid}")


def _child(request: dict, runpy) -> None:
  """In the forked child: becomes `python argv[0] argv[1:]`, never returns
  (the script's end, or its exception, ends the interpreter as usual)."""
  devnull = os.open(os.devnull, os.O_RDONLY)
  os.dup2(devnull, 0)
  os.close(devnull)
  os.close(_ANSWERS[0])
  for fd, path in ((1, request["out"]), (2, request["err"])):
    opened = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(opened, fd)
    os.close(opened)
  sys.stdin = open(os.devnull)
  os.chdir(request["cwd"])
  os.environ.clear()
  os.environ.update(request["env"])
  sys.argv = list(request["argv"])
  sys.path[0] = os.path.dirname(os.path.abspath(sys.argv[0]))
  runpy.run_path(sys.argv[0], run_name="__main__")
  raise SystemExit(0)
