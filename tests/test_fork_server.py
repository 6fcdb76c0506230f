"""tests/fork_server.py: a forked child behaves as `python script.py` would
(argv, environment, output, exit status, signals), for the tests that use
it in place of new interpreters."""

import os
import signal
import textwrap

import pytest
import tensorflow as tf

from tests import fork_server

_SCRIPT = textwrap.dedent("""
    import json, os, signal, sys
    print(json.dumps({"argv": sys.argv[1:], "pid": os.getpid(),
                      "name": __name__, "value": os.environ.get("VALUE")}),
          flush=True)
    print("to stderr", file=sys.stderr, flush=True)
    what = sys.argv[1]
    if what == "kill":
      os.kill(os.getpid(), signal.SIGKILL)
    if what == "raise":
      raise ValueError("raised in the child")
    if what == "exit":
      sys.exit(143)
""")


@pytest.fixture(scope="module")
def server():
  with fork_server.ForkServer(["json"]) as forks:
    yield forks


@pytest.mark.parametrize("what,code", [
    ("end", 0), ("exit", 143), ("raise", 1), ("kill", -signal.SIGKILL)])
def test_a_child_runs_the_script_as_main_and_ends_as_python_would(
    server, tmp_path, what, code):
  script = tmp_path / "script.py"
  script.write_text(_SCRIPT)
  child = server.popen([script, what, "x"], dict(os.environ, VALUE="v"))
  out, err = child.communicate(timeout=60)
  assert child.returncode == code, err
  assert child.pid != os.getpid()
  assert (f'{{"argv": ["{what}", "x"], "pid": {child.pid}, '
          '"name": "__main__", "value": "v"}') in out
  assert "to stderr" in err
  assert ("ValueError: raised in the child" in err) == (what == "raise")


def test_children_run_side_by_side_and_poll_says_when_each_ended(
    server, tmp_path):
  script = tmp_path / "wait.py"
  script.write_text("import sys, time\ntime.sleep(float(sys.argv[1]))\n")
  slow, fast = (server.popen([script, seconds], dict(os.environ))
                for seconds in ("30", "0"))
  assert fast.wait(timeout=20) == 0
  assert slow.poll() is None
  os.kill(slow.pid, signal.SIGTERM)
  assert slow.wait(timeout=20) == -signal.SIGTERM


def test_preloading_that_starts_the_runtime_is_refused():
  tf.constant(1.0)  # Starts it in this process, as a preload could.
  with pytest.raises(RuntimeError, match="runtime started while preloading"):
    fork_server.check_not_started()
