"""The folder of a run: checks, the one-writer lock, atomic writes, moving aside.

A scenario's `save_dir` holds a researcher's run, so before the first step the
engine checks that it is a folder (or can be created) and is writable, and
takes a lock in it so that a second process cannot write into it at the same
time. Files are written whole or not at all (`files.write_atomic`), and what
must make way is moved into a time-stamped subfolder (`move_aside`), never
deleted. The folder may be on any file system TensorFlow reaches
(`core/files.py`): a local folder is locked with `flock`
(`folder_lock.FolderLock`), one on another file system (`gs://`, `s3://`,
`ram://`), where there is no `flock`, with a lease renewed while the run
trains (`lease.LeaseLock`).

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with lock("Example", folder):
    ...   files.exists(files.join(folder, LOCK_FILE))
    True
    >>> files.exists(files.join(folder, LOCK_FILE))  # Released.
    False
"""

import errno
import os
import socket
import time
from typing import Callable, Iterable

from sonnet_like.core import files
from sonnet_like.scenarios.run_folder import folder_lock
from sonnet_like.scenarios.run_folder import lease

# The lock's names, for the scenarios and their tests.
LOCK_FILE = folder_lock.LOCK_FILE
FolderLock = folder_lock.FolderLock
FolderLockedError = folder_lock.FolderLockedError

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


class FolderError(OSError):
  """`save_dir` is not a usable folder (a file, not creatable, read-only)."""


def check_folder(owner: str, path: str) -> None:
  """Makes sure `path` is a writable folder, creating it if needed.

  Args:
    owner: Who asks (a scenario's class name), for the error messages.
    path: The folder, on any file system TensorFlow reaches.

  Raises:
    FolderError: naming `owner` and `path` if it is a file, cannot be
      created or is not writable.
    files.NoFileSystemError: if no file system serves its scheme.
  """
  files.check_scheme(owner, "save_dir", path)
  if files.exists(path) and not files.isdir(path):
    raise FolderError(NOT_A_FOLDER_ERROR.format(owner=owner, path=path))
  try:
    files.makedirs(path)
  except Exception as error:  # OSError locally, tf.errors.OpError elsewhere.  # pylint: disable=broad-except
    if (isinstance(error, OSError) and error.errno == errno.ENOTDIR) or (
        files.is_local(path) and os.path.isfile(path)):
      # A file on the way: `a/file/b`.
      raise FolderError(CANNOT_CREATE_ERROR.format(
          owner=owner, path=path, error="a part of the path is a file")
                        ) from error
    raise FolderError(CANNOT_CREATE_ERROR.format(
        owner=owner, path=path, error=_reason(error))) from error
  probe = files.join(path, f".write-test-{socket.gethostname()}-"
                     f"{os.getpid()}")
  try:
    files.write_atomic(probe, "ok")
    files.remove(probe)
  except Exception as error:  # pylint: disable=broad-except
    raise FolderError(NOT_WRITABLE_ERROR.format(
        owner=owner, path=path, error=_reason(error))) from error


def _reason(error: Exception) -> str:
  return (getattr(error, "strerror", None) or getattr(error, "message", None)
          or str(error))


def move_aside(path: str, names: Iterable[str], label: str) -> str:
  """Moves the entries `names` of folder `path` into `path/<label>-<time>/`.

  Returns:
    The new subfolder (a fresh one, never an existing folder).
  """
  stamp = time.strftime("%Y%m%d-%H%M%S")
  target = files.join(path, f"{label}-{stamp}")
  n = 1
  while files.exists(target):
    target = files.join(path, f"{label}-{stamp}-{n}")
    n += 1
  files.makedirs(target)
  for name in names:
    files.move(files.join(path, name), files.join(target, name))
  files.sync_folder(path)
  return target


def lock(owner: str, path: str, say: Callable[[str], None] | None = None
         ) -> "folder_lock.FolderLock | lease.LeaseLock":
  """The lock of folder `path`: `flock` locally, a lease elsewhere.

  Not yet taken: call `acquire()` (or use it as a context manager).
  """
  if files.is_local(path):
    return folder_lock.FolderLock(owner, files.normalized(path), say=say)
  return lease.LeaseLock(owner, path, say=say)
