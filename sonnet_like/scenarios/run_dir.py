"""The folder of a run: checks, the one-writer lock, atomic writes, moving aside.

A scenario's `save_dir` holds a researcher's run, so before the first step the
engine checks that it is a folder (or can be created) and is writable, and
takes a lock in it so that a second process cannot write into it at the same
time. Files are written whole or not at all (`atomic_write`), and what must
make way is moved into a time-stamped subfolder (`move_aside`), never deleted.

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
from typing import Any, Callable, Iterable

try:
  import fcntl
except ImportError:  # Windows: the lock falls back to the process id check.
  fcntl = None

LOCK_FILE = ".lock"

NOT_A_FOLDER_ERROR = (
    "{owner}: save_dir {path} is a file, not a folder. Pass the path of a "
    "folder (it is created if missing) or move that file away.")

CANNOT_CREATE_ERROR = (
    "{owner}: cannot create save_dir {path} ({error}). Create it yourself, "
    "fix the permissions of its parent, or pick another save_dir.")

NOT_WRITABLE_ERROR = (
    "{owner}: save_dir {path} is not writable ({error}); no checkpoint could "
    "be saved there. Make it writable (chmod u+w {path}) or pick another "
    "save_dir.")

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


class FolderError(OSError):
  """`save_dir` is not a usable folder (a file, not creatable, read-only)."""


class FolderLockedError(RuntimeError):
  """Another run holds the lock of the folder."""


def check_folder(owner: str, path: str) -> None:
  """Makes sure `path` is a writable folder, creating it if needed.

  Args:
    owner: Who asks (a scenario's class name), for the error messages.
    path: The folder.

  Raises:
    FolderError: naming `owner` and `path` if it is a file, cannot be
      created or is not writable.
  """
  if os.path.exists(path) and not os.path.isdir(path):
    raise FolderError(NOT_A_FOLDER_ERROR.format(owner=owner, path=path))
  try:
    os.makedirs(path, exist_ok=True)
  except OSError as error:
    if os.path.isfile(path) or error.errno == errno.ENOTDIR:
      # A file on the way: `a/file/b`.
      raise FolderError(CANNOT_CREATE_ERROR.format(
          owner=owner, path=path, error="a part of the path is a file")
                        ) from error
    raise FolderError(CANNOT_CREATE_ERROR.format(
        owner=owner, path=path, error=error.strerror or error)) from error
  probe = os.path.join(path, f".write-test-{socket.gethostname()}-"
                       f"{os.getpid()}")
  try:
    with open(probe, "w") as f:
      f.write("ok")
    os.remove(probe)
  except OSError as error:
    raise FolderError(NOT_WRITABLE_ERROR.format(
        owner=owner, path=path, error=error.strerror or error)) from error


def atomic_write(path: str, text: str) -> None:
  """Writes `text` to `path` whole or not at all (temp file, fsync, rename)."""
  temp = f"{path}.tmp-{os.getpid()}"
  try:
    with open(temp, "w") as f:
      f.write(text)
      f.flush()
      os.fsync(f.fileno())
    os.replace(temp, path)
  except BaseException:
    if os.path.exists(temp):
      os.remove(temp)
    raise
  _sync_folder(os.path.dirname(path) or ".")


def _sync_folder(path: str) -> None:
  try:
    fd = os.open(path, os.O_RDONLY)
  except OSError:
    return
  try:
    os.fsync(fd)
  except OSError:  # Not every file system syncs folders.
    pass
  finally:
    os.close(fd)


def move_aside(path: str, names: Iterable[str], label: str) -> str:
  """Moves the entries `names` of folder `path` into `path/<label>-<time>/`.

  Returns:
    The new subfolder (a fresh one, never an existing folder).
  """
  stamp = time.strftime("%Y%m%d-%H%M%S")
  target = os.path.join(path, f"{label}-{stamp}")
  n = 1
  while os.path.exists(target):
    target = os.path.join(path, f"{label}-{stamp}-{n}")
    n += 1
  os.makedirs(target)
  for name in names:
    os.replace(os.path.join(path, name), os.path.join(target, name))
  _sync_folder(path)
  return target


def _process_alive(pid: int) -> bool:
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
    if fcntl is None and isinstance(pid, int) and _process_alive(pid):
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


def _write_holder(fd: int) -> None:
  # The flock keeps readers of a half-written file waiting (`_read_holder`).
  holder = {"host": socket.gethostname(), "pid": os.getpid(),
            "since": time.strftime("%Y-%m-%d %H:%M:%S"),
            "command": " ".join(sys.argv)[:300]}
  data = json.dumps(holder).encode()
  os.ftruncate(fd, 0)
  os.pwrite(fd, data, 0)
  os.fsync(fd)
