"""lease: the one-writer lock of a folder on cloud storage (ram:// here)."""

import json
import socket
import time
import uuid

import pytest

from sonnet_like.core import files
from sonnet_like.scenarios.run_folder import folder_lock
from sonnet_like.scenarios.run_folder import lease


def _folder() -> str:
  path = f"ram://test_lease/{uuid.uuid4().hex}"
  files.makedirs(path)
  return path


def _leave_lease(folder, **changes):
  holder = dict(host="elsewhere", pid=1, since="earlier", command="train.py",
                token="t", renewed=time.time(), lease_seconds=60.0)
  holder.update(changes)
  files.write_atomic(files.join(folder, ".lock"), json.dumps(holder))


def test_a_fresh_lease_is_refused_naming_its_holder():
  folder = _folder()
  _leave_lease(folder)
  with pytest.raises(folder_lock.FolderLockedError) as error:
    lease.LeaseLock("Supervised", folder).acquire()
  text = str(error.value)
  assert text.startswith(f"Supervised: save_dir {folder} is in use by "
                         "process 1 on host elsewhere, since earlier "
                         "(train.py);")
  assert "a lease not renewed for 60 s" in text


def test_a_second_lock_in_this_process_is_refused():
  folder = _folder()
  with lease.LeaseLock("Supervised", folder, settle_seconds=0):
    with pytest.raises(folder_lock.FolderLockedError, match="this process"):
      lease.LeaseLock("Supervised", folder, settle_seconds=0).acquire()


def test_a_stale_lease_is_taken_over_with_a_message():
  folder = _folder()
  _leave_lease(folder, renewed=time.time() - 120)
  said = []
  with lease.LeaseLock("Supervised", folder, say=said.append,
                       settle_seconds=0) as lock:
    assert lock.held
  assert said == [f"Supervised: took over the lock of save_dir {folder} from "
                  "process 1 on host elsewhere, since earlier (train.py): "
                  "its lease ran out 120 s ago."]
  assert not files.exists(files.join(folder, ".lock"))


def test_a_dead_process_on_this_host_is_taken_over_at_once():
  folder = _folder()
  _leave_lease(folder, host=socket.gethostname(), pid=2 ** 22 + 7)
  said = []
  with lease.LeaseLock("Supervised", folder, say=said.append,
                       settle_seconds=0):
    pass
  assert said and said[0].endswith("its process is no longer running.")


def test_the_lease_is_renewed_while_held():
  folder = _folder()
  path = files.join(folder, ".lock")
  with lease.LeaseLock("Supervised", folder, lease_seconds=0.4,
                       settle_seconds=0):
    first = json.loads(files.read_text(path))["renewed"]
    time.sleep(0.5)  # Renewed every 0.1 s; stale after 0.4 s without.
    renewed = json.loads(files.read_text(path))["renewed"]
    with pytest.raises(folder_lock.FolderLockedError):
      lease.LeaseLock("Supervised", folder, settle_seconds=0).acquire()
  assert renewed > first


def test_a_lease_overwritten_by_a_racing_run_gives_way():
  folder = _folder()
  racer = lease.LeaseLock("Supervised", folder, settle_seconds=0.3)
  original_write = racer._write  # pylint: disable=protected-access

  def write_then_lose():
    original_write()
    _leave_lease(folder, token="other")  # The other run wrote after us.
  racer._write = write_then_lose  # pylint: disable=protected-access
  with pytest.raises(folder_lock.FolderLockedError, match="host elsewhere"):
    racer.acquire()
  assert not racer.held
