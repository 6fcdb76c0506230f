"""run_dir: folder checks, the lock (with real processes), moving aside."""

import json
import os
import signal
import socket
import subprocess
import sys
import shutil
import tempfile
import textwrap

import pytest

from sonnet_like.scenarios.run_folder import run_dir
import tests

ROOT = tests.ROOT

# Loads folder_lock.py alone (no TensorFlow), so a process starts in ~50 ms.
_HOLDER = textwrap.dedent("""
    import importlib.util, sys, time
    spec = importlib.util.spec_from_file_location(
        "folder_lock", {path!r})
    folder_lock = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(folder_lock)
    try:
      lock = folder_lock.FolderLock("Supervised", sys.argv[1]).acquire()
    except folder_lock.FolderLockedError as error:
      print(error, file=sys.stderr)
      sys.exit(3)
    print("LOCKED", flush=True)
    time.sleep(float(sys.argv[2]))
    lock.release()
""").format(path=os.path.join(ROOT, "sonnet_like", "scenarios", "run_folder",
                              "folder_lock.py"))


def _start(folder, seconds):
  return subprocess.Popen([sys.executable, "-c", _HOLDER, str(folder),
                           str(seconds)], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)


def test_check_folder_creates_and_refuses_files(tmp_path):
  run_dir.check_folder("Supervised", str(tmp_path / "a" / "b"))
  assert (tmp_path / "a" / "b").is_dir()
  (tmp_path / "file").write_text("x")
  with pytest.raises(run_dir.FolderError) as error:
    run_dir.check_folder("Supervised", str(tmp_path / "file"))
  assert str(error.value).startswith(
      f"Supervised: save_dir {tmp_path / 'file'} is a file, not a folder.")
  with pytest.raises(run_dir.FolderError, match="a part of the path is a "
                     "file"):
    run_dir.check_folder("Supervised", str(tmp_path / "file" / "run"))
  assert os.listdir(tmp_path / "a" / "b") == []  # The probe is gone.


def as_nobody():
  """The interpreter and `subprocess` arguments of an unprivileged process.

  Root writes through permission bits, so read-only folders are tried as
  user nobody, with a system Python given this interpreter's `sys.path`
  (the venv's may sit in /root; `skip_if_not_importable` skips when user
  nobody cannot import from there: that is the machine's layout, not the
  library's behaviour).
  """
  env = dict(os.environ)
  if os.geteuid() != 0:
    return sys.executable, dict(env=env)
  python = shutil.which("python3", path="/usr/bin:/bin:/usr/local/bin")
  if python is None:
    pytest.skip("root without a system python3 to run as user nobody")
  env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
  return python, dict(user=65534, group=65534, cwd="/", env=env)


def skip_if_not_importable(result, imports):
  """Skips when the script of `result`, run as `as_nobody()` gives, failed
  because user nobody could not import one of `imports` (judged from the
  script's own result, not a probe process beside it: `import tensorflow`
  is ~4 s of CPU)."""
  last = (result.stderr.strip().splitlines() or [""])[-1]
  if result.returncode != 0 and any(
      last == f"ModuleNotFoundError: No module named '{name}'"
      for name in imports):
    pytest.skip(f"user nobody cannot import from this interpreter's "
                f"sys.path: {last}")


def test_check_folder_refuses_a_read_only_folder():
  # As root, permission bits do not stop writes: check as user nobody, in a
  # folder of /tmp (pytest's tmp_path is closed to other users).
  folder = tempfile.mkdtemp(prefix="read_only_")
  code = textwrap.dedent("""
      import importlib.util, sys
      spec = importlib.util.spec_from_file_location("run_dir", sys.argv[1])
      run_dir = importlib.util.module_from_spec(spec)
      spec.loader.exec_module(run_dir)
      try:
        run_dir.check_folder("Supervised", sys.argv[2])
      except run_dir.FolderError as error:
        print(error)
  """)
  script = os.path.join(ROOT, "sonnet_like", "scenarios", "run_folder",
                        "run_dir.py")
  python, kwargs = as_nobody()
  os.chmod(folder, 0o555)
  try:
    out = subprocess.run([python, "-c", code, script, folder],
                         capture_output=True, text=True, check=True,
                         **kwargs).stdout
  finally:
    os.chmod(folder, 0o755)
    shutil.rmtree(folder)
  assert out.startswith(f"Supervised: save_dir {folder} is not writable (")
  assert "Permission denied" in out and "chmod u+w" in out


def test_a_second_process_is_refused_and_named(tmp_path):
  first = _start(tmp_path, 30)
  assert first.stdout.readline().strip() == "LOCKED"
  try:
    second = _start(tmp_path, 0)
    _, err = second.communicate(timeout=30)
    assert second.returncode == 3
    assert err.startswith(f"Supervised: save_dir {tmp_path} is in use by "
                          f"process {first.pid} on host "
                          f"{socket.gethostname()}, since ")
    assert "only one run at a time" in err
  finally:
    first.kill()
    first.communicate()


def test_a_lock_left_by_a_killed_process_is_taken_over(tmp_path):
  first = _start(tmp_path, 30)
  assert first.stdout.readline().strip() == "LOCKED"
  first.send_signal(signal.SIGKILL)
  first.communicate()
  left = json.loads((tmp_path / run_dir.LOCK_FILE).read_text())
  assert left["pid"] == first.pid
  second = _start(tmp_path, 0)
  out, err = second.communicate(timeout=30)
  assert second.returncode == 0 and "LOCKED" in out
  assert (f"Supervised: took over the lock of save_dir {tmp_path} from "
          f"process {first.pid} on host") in err
  assert "which is no longer running" in err
  assert not (tmp_path / run_dir.LOCK_FILE).exists()  # Released at the end.


def test_two_processes_started_together_get_one_lock(tmp_path):
  processes = [_start(tmp_path, 5) for _ in range(4)]
  codes = [p.wait(timeout=60) for p in processes]
  for p in processes:
    p.communicate()
  assert sorted(codes) == [0, 3, 3, 3]


def test_a_lock_from_another_host_is_not_taken_over(tmp_path):
  (tmp_path / run_dir.LOCK_FILE).write_text(json.dumps(
      {"host": "elsewhere", "pid": 1, "since": "yesterday"}))
  with pytest.raises(run_dir.FolderLockedError) as error:
    run_dir.FolderLock("GAN", str(tmp_path)).acquire()
  message = str(error.value)
  assert "GAN: save_dir" in message and "process 1 on host elsewhere" in (
      message)
  assert f"delete {tmp_path / run_dir.LOCK_FILE}" in message


def test_release_removes_the_file_and_allows_the_next(tmp_path):
  lock = run_dir.FolderLock("Supervised", str(tmp_path))
  with lock:
    assert lock.held
    holder = json.loads((tmp_path / run_dir.LOCK_FILE).read_text())
    assert holder["pid"] == os.getpid()
  assert not lock.held and not (tmp_path / run_dir.LOCK_FILE).exists()
  with run_dir.FolderLock("Supervised", str(tmp_path)):
    pass


def test_move_aside_uses_a_fresh_folder(tmp_path):
  for name in ("a", "b"):
    (tmp_path / name).write_text(name)
  first = run_dir.move_aside(str(tmp_path), ["a"], "old")
  second = run_dir.move_aside(str(tmp_path), ["b"], "old")
  assert first != second and os.path.basename(first).startswith("old-")
  assert open(os.path.join(first, "a")).read() == "a"
  assert open(os.path.join(second, "b")).read() == "b"
