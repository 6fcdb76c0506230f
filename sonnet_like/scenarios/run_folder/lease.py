"""The one-writer lock of a run folder on cloud storage: a renewed lease.

Object stores (`gs://`, `s3://`) and `ram://` have no `flock`, so the lock
there is a lease file, `.lock`, naming its holder (host, process id,
command) with the time it was last renewed. A thread renews it while the run
trains. Another run is refused while the lease is fresh; once it has not
been renewed for `lease_seconds` (its holder was preempted or killed) it is
taken over with a message. A holder on this host that is no longer running
is taken over at once. Hosts compare their clocks: they must agree to well
within `lease_seconds` (NTP does).

Two runs that start within a moment of each other on an empty folder could
both write a lease; each reads the lease back after `settle_seconds` and
the one whose lease is not there gives way.

    >>> lock = LeaseLock("Example", "ram://lease_doctest")
    >>> with lock:
    ...   files.exists("ram://lease_doctest/.lock")
    True
    >>> files.exists("ram://lease_doctest/.lock")  # Released.
    False
"""

import json
import os
import socket
import sys
import threading
import time
import uuid
from typing import Any, Callable

from sonnet_like.core import files
from sonnet_like.scenarios.run_folder import folder_lock

LEASE_SECONDS = 60.0

LEASE_HINT = (
    " Its lease was renewed {age:.0f} s ago; a lease not renewed for "
    "{lease:.0f} s (a preempted or killed run) is taken over.")

TAKEN_OVER_MESSAGE = (
    "{owner}: took over the lock of save_dir {path} from {holder}: {why}.")


class LeaseLock:
  """A lease file in a folder on any file system; renewed while held.

  Args:
    owner: Who locks (a scenario's class name), for messages and errors.
    path: The folder (must exist).
    say: Where messages go (default: stderr).
    lease_seconds: How long a lease lasts without renewal; it is renewed
      every quarter of that.
    settle_seconds: How long to wait before reading a new lease back.
  """

  def __init__(self, owner: str, path: str,
               say: Callable[[str], None] | None = None,
               lease_seconds: float = LEASE_SECONDS,
               settle_seconds: float = 0.2):
    self.owner, self.path = owner, path
    self.lock_path = files.join(path, folder_lock.LOCK_FILE)
    self.lease_seconds, self.settle_seconds = lease_seconds, settle_seconds
    self._say = say or (lambda m: print(m, file=sys.stderr, flush=True))
    self._token: str | None = None
    self._stop = threading.Event()
    self._renewer: threading.Thread | None = None

  @property
  def held(self) -> bool:
    return self._token is not None

  def _read(self) -> dict[str, Any] | None:
    try:
      holder = json.loads(files.read_text(self.lock_path))
    except Exception:  # Missing, half-written or not ours: no holder.  # pylint: disable=broad-except
      return None
    return holder if isinstance(holder, dict) else None

  def _write(self) -> None:
    holder = dict(folder_lock.this_holder(), token=self._token,
                  renewed=time.time(), lease_seconds=self.lease_seconds)
    files.write_atomic(self.lock_path, json.dumps(holder))

  def _error(self, holder: dict[str, Any] | None,
             age: float | None = None) -> folder_lock.FolderLockedError:
    hint = "" if age is None else LEASE_HINT.format(
        age=max(age, 0.0), lease=_lease_of(holder, self.lease_seconds))
    return folder_lock.FolderLockedError(folder_lock.LOCKED_ERROR.format(
        owner=self.owner, path=self.path,
        holder=folder_lock.describe_holder(holder), stale=hint))

  def _why_free(self, holder: dict[str, Any]) -> str | None:
    """Why a lease found in the folder may be taken over, or None."""
    age = time.time() - float(holder.get("renewed", 0.0))
    if age > _lease_of(holder, self.lease_seconds):
      return f"its lease ran out {age:.0f} s ago"
    pid = holder.get("pid")
    if (holder.get("host") == socket.gethostname() and pid != os.getpid()
        and isinstance(pid, int) and not folder_lock.process_alive(pid)):
      return "its process is no longer running"
    return None

  def acquire(self) -> "LeaseLock":
    """Takes the lease or raises `FolderLockedError` naming the holder."""
    if self.held:
      return self
    holder = self._read()
    if holder is not None:
      why = self._why_free(holder)
      if why is None:
        raise self._error(holder, time.time() - float(
            holder.get("renewed", 0.0)))
      self._say(TAKEN_OVER_MESSAGE.format(
          owner=self.owner, path=self.path,
          holder=folder_lock.describe_holder(holder), why=why))
    self._token = uuid.uuid4().hex
    self._write()
    time.sleep(self.settle_seconds)
    found = self._read()
    if not found or found.get("token") != self._token:
      self._token = None
      raise self._error(found)
    self._stop.clear()
    self._renewer = threading.Thread(target=self._renew, daemon=True,
                                     name=f"lease {self.lock_path}")
    self._renewer.start()
    return self

  def _renew(self) -> None:
    while not self._stop.wait(self.lease_seconds / 4):
      try:
        self._write()
      except Exception as error:  # A failed renewal: said, retried.  # pylint: disable=broad-except
        self._say(f"{self.owner}: could not renew the lease {self.lock_path}"
                  f" ({error}); retrying.")

  def release(self) -> None:
    """Stops renewing and removes the lease (no-op if not held)."""
    if not self.held:
      return
    self._stop.set()
    if self._renewer is not None:
      self._renewer.join()
      self._renewer = None
    found = self._read()
    token, self._token = self._token, None
    if found and found.get("token") == token:
      files.remove(self.lock_path)

  def __enter__(self) -> "LeaseLock":
    return self.acquire()

  def __exit__(self, *exc_info) -> None:
    self.release()


def _lease_of(holder: dict[str, Any] | None, default: float) -> float:
  try:
    return float((holder or {}).get("lease_seconds", default))
  except (TypeError, ValueError):
    return default
