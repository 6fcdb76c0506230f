"""The one-writer lock of a local run folder: a lock file held with `flock`.

The file names its holder (host, process id, command), so a second run is
refused with a message that says who holds the folder, and a lock left by a
killed process on the same host is taken over. This file needs nothing but
the standard library (tests start processes that load it alone). Folders on
other file systems use a lease instead (`lease.py`).

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with FolderLock("Example", folder) as lock:
    ...   os.path.exists(os.path.join(folder, LOCK_FILE))
    True
    >>> os.path.exists(os.path.join(folder, LOCK_FILE))  # Released.
    False
"""

import errno
import json
import os
import socket
import sys
import time
from typing import Any, Callable

try:
  import fcntl
except ImportError:  # Windows: the lock falls back to the process id check.
  fcntl = None

LOCK_FILE = ".lock"

LOCKED_ERROR = (
    "{owner}: save_dir {path} is in use by {holder}; only one run at a time "
    "may write into a folder. Wait for that run to end, stop it, or pick "
    "another save_dir.{stale}")

OTHER_HOST_HINT = (
    " The lock was taken on another host, so it cannot be checked from "
    "here: if that run is no longer running, delete {lock}.")

TAKEN_OVER_MESSAGE = (
    "{owner}: took over the lock of save_dir {path} from {holder}, which is "
    "no longer running.")


class FolderLockedError(RuntimeError):
  """Another run holds the lock of the folder."""


def process_alive(pid: int) -> bool:
  """Whether process `pid` on this host is still running."""
  try:
    os.kill(pid, 0)
  except ProcessLookupError:
    return False
  except PermissionError:  # Alive, owned by someone else.
    return True
  return True


def describe_holder(holder: dict[str, Any] | None) -> str:
  """`process 12 on host h since <time> (train.py ...)` from lock contents."""
  if not holder:
    return "another process (the lock file names none)"
  pid, host = holder.get("pid"), holder.get("host")
  mine = pid == os.getpid() and host == socket.gethostname()
  text = ("this process (an earlier run in it still holds the folder)"
          if mine else f"process {pid} on host {host}")
  if holder.get("since"):
    text += f", since {holder['since']}"
  if holder.get("command") and not mine:
    text += f" ({holder['command']})"
  return text


class FolderLock:
  """A lock file in a folder naming its holder (host, process id, command).

  Held with `flock` as long as the process lives, so a lock left by a killed
  process on the same host is free again and is taken over with a message.
  A lock naming another host is never taken over (its process cannot be
  checked from here): the error says to delete the file if that run is gone.

  Args:
    owner: Who locks (a scenario's class name), for messages and errors.
    path: The folder (must exist).
    say: Where messages go (default: stderr).
  """

  def __init__(self, owner: str, path: str,
               say: Callable[[str], None] | None = None):
    self.owner, self.path = owner, path
    self.lock_path = os.path.join(path, LOCK_FILE)
    self._say = say or (lambda m: print(m, file=sys.stderr, flush=True))
    self._fd: int | None = None

  @property
  def held(self) -> bool:
    return self._fd is not None

  def _error(self, holder: dict[str, Any] | None) -> FolderLockedError:
    other_host = holder and holder.get("host") != socket.gethostname()
    stale = OTHER_HOST_HINT.format(lock=self.lock_path) if other_host else ""
    return FolderLockedError(LOCKED_ERROR.format(
        owner=self.owner, path=self.path, holder=describe_holder(holder),
        stale=stale))

  def acquire(self) -> "FolderLock":
    """Takes the lock or raises `FolderLockedError` naming the holder."""
    if self._fd is not None:
      return self
    for _ in range(10):
      fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
      try:
        locked = self._flock(fd)
        if not locked:
          raise self._error(_read_holder(fd, wait=True))
        # The holder may have removed the file while we waited for it.
        if not _same_file(fd, self.lock_path):
          os.close(fd)
          continue
        holder = _read_holder(fd)
        if holder and not self._takes_over(holder):
          raise self._error(holder)
        _write_holder(fd)
      except BaseException:
        if self._fd is None:
          os.close(fd)
        raise
      self._fd = fd
      return self
    raise self._error(None)

  def _flock(self, fd: int) -> bool:
    if fcntl is None:
      return True
    try:
      fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
      if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
        return False
      return True  # No flock here (some network file systems): pid check.
    return True

  def _takes_over(self, holder: dict[str, Any]) -> bool:
    """Whether a lock file left behind (we hold its flock) may be taken."""
    if holder.get("host") != socket.gethostname():
      return False
    pid = holder.get("pid")
    if fcntl is None and isinstance(pid, int) and process_alive(pid):
      return False
    self._say(TAKEN_OVER_MESSAGE.format(owner=self.owner, path=self.path,
                                        holder=describe_holder(holder)))
    return True

  def release(self) -> None:
    """Removes the lock file and frees the lock (no-op if not held)."""
    fd, self._fd = self._fd, None
    if fd is None:
      return
    try:
      if _same_file(fd, self.lock_path):
        os.remove(self.lock_path)
    finally:
      os.close(fd)

  def __enter__(self) -> "FolderLock":
    return self.acquire()

  def __exit__(self, *exc_info) -> None:
    self.release()


def _same_file(fd: int, path: str) -> bool:
  try:
    return os.path.samestat(os.fstat(fd), os.stat(path))
  except FileNotFoundError:
    return False


def _read_holder(fd: int, wait: bool = False) -> dict[str, Any] | None:
  """The lock's contents; with `wait`, gives a starting holder time to write."""
  for _ in range(20 if wait else 1):
    try:
      text = os.pread(fd, 65536, 0).decode("utf-8", "replace")
      holder = json.loads(text)
      if isinstance(holder, dict):
        return holder
    except (OSError, ValueError):
      pass
    if wait:
      time.sleep(0.05)
  return None


def this_holder() -> dict[str, Any]:
  """Who holds a lock taken by this process: host, pid, since, command."""
  return {"host": socket.gethostname(), "pid": os.getpid(),
          "since": time.strftime("%Y-%m-%d %H:%M:%S"),
          "command": " ".join(sys.argv)[:300]}


def _write_holder(fd: int) -> None:
  # The flock keeps readers of a half-written file waiting (`_read_holder`).
  data = json.dumps(this_holder()).encode()
  os.ftruncate(fd, 0)
  os.pwrite(fd, data, 0)
  os.fsync(fd)
