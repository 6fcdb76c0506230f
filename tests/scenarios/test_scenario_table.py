"""The cross-cutting tests of every scenario, driven by scenario_table.ROWS:
SIGTERM save-and-exit and bitwise resume after it and after SIGKILL, NaN
raise and skip, mirrored over two logical CPUs equal to one device (or
refused, for RL), and bad data named."""

import fcntl
import os
import signal
import textwrap

import numpy as np
import pytest
import tensorflow as tf

import tests
import sonnet_like as snt
from sonnet_like.scenarios.run_folder import run_dir
from tests import fork_server
from tests import optimizer_common
from tests import scenario_table

ROWS = scenario_table.ROWS
_IDS = [row.name for row in ROWS]
_SETTINGS = dict(steps_per_call=2)
_SAVE_EVERY = 4


def _saving(save_dir):
  return dict(_SETTINGS, save_dir=str(save_dir), save_every=_SAVE_EVERY)


class _Uninterrupted:
  """Each row trained once without interruption (`_SETTINGS`): its
  `state_arrays` and `model_arrays`, which the SIGTERM/SIGKILL and mirrored
  tests compare with.

  Computed once per test session, also across pytest-xdist workers: the
  first worker to need a row trains it under a file lock and leaves the
  arrays in a folder every worker of the session shares; the others wait
  for the lock and load them. (The SIGKILL test already relies on two
  processes computing a run bit for bit alike.)
  """

  def __init__(self, folder):
    self.folder = folder
    self.folder.mkdir(exist_ok=True)

  def _arrays(self, row, kind):
    path = self.folder / f"{row.name}.npz"
    with open(self.folder / f"{row.name}.lock", "w") as lock:
      fcntl.flock(lock, fcntl.LOCK_EX)
      if not path.exists():
        scenario = scenario_table.train(row, **_SETTINGS)
        arrays = {f"state_{i:03d}": a for i, a in
                  enumerate(scenario_table.state_arrays(scenario))}
        arrays.update({f"model_{i:03d}": a for i, a in
                       enumerate(scenario_table.model_arrays(scenario))})
        partial = self.folder / f"{row.name}.partial.npz"
        np.savez(partial, **arrays)
        os.replace(partial, path)
    with np.load(path) as saved:
      return [saved[key] for key in sorted(saved.files)
              if key.startswith(kind)]

  def state(self, row):
    return self._arrays(row, "state_")

  def model(self, row):
    return self._arrays(row, "model_")


def shared_uninterrupted(tmp_path_factory) -> _Uninterrupted:
  """The session's `_Uninterrupted`, in a folder every worker shares."""
  base = tmp_path_factory.getbasetemp()
  if os.environ.get("PYTEST_XDIST_WORKER"):  # basetemp/popen-gwN: share.
    base = base.parent
  return _Uninterrupted(base / "scenario_table_uninterrupted")


@pytest.fixture(scope="session")
def uninterrupted(tmp_path_factory):
  return shared_uninterrupted(tmp_path_factory)


def _assert_equal(expected, got):
  assert len(expected) == len(got) > 1
  for a, b in zip(expected, got):
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("row", ROWS, ids=_IDS)
def test_bad_data_is_one_error_naming_the_scenario_and_argument(row):
  with pytest.raises((TypeError, ValueError), match=row.bad_data_error):
    row.bad_data()


@pytest.mark.parametrize("row", ROWS, ids=_IDS)
def test_nonfinite_raise_stops_on_the_last_good_step(row, tmp_path):
  with pytest.raises(snt.scenarios.NonFiniteError,
                     match=f"^{row.owner}: non-finite loss or gradient at "
                     r"step \d+") as caught:
    scenario_table.train(row, poison=True, **_saving(tmp_path))
  step = caught.value.step
  assert step < row.num_steps
  latest = tf.train.latest_checkpoint(str(tmp_path))
  if step >= _SAVE_EVERY:  # The last good checkpoint is kept.
    assert latest is not None and int(latest.rsplit("-", 1)[1]) <= step


@pytest.mark.parametrize("row", ROWS, ids=_IDS)
def test_nonfinite_skip_counts_the_dropped_updates(row):
  scenario = scenario_table.train(row, poison=True, on_nonfinite="skip",
                                  **_SETTINGS)
  assert scenario.step == row.num_steps
  assert 0 < scenario.skipped_steps < row.num_steps
  for array in scenario_table.model_arrays(scenario):
    assert np.all(np.isfinite(array))


class _StateAtCalls(snt.scenarios.Hook):
  """Records the scenario's whole state before its first call and after
  each call, by step."""

  def __init__(self):
    self.scenario, self.at = None, {}

  def begin(self, scenario):
    self.scenario = scenario
    self.at[scenario.step] = scenario_table.state_arrays(scenario)

  def step_end(self, scenario, step, logs):
    self.at[step] = scenario_table.state_arrays(scenario)


@pytest.mark.parametrize("row", ROWS, ids=_IDS)
def test_nonfinite_per_call_check_undoes_the_whole_call(row):
  if row.train is scenario_table.train_supervised_float16:
    pytest.skip("A loss scale checks every update (nonfinite_check='step').")
  states = _StateAtCalls()
  with pytest.raises(snt.scenarios.NonFiniteError,
                     match=f"^{row.owner}: non-finite loss or gradient at "
                     r"step \d+ .*That compiled call was undone") as caught:
    scenario_table.train(row, poison=True, steps_per_call=4,
                         nonfinite_check="call", hooks=[states])
  scenario = states.scenario
  assert scenario.checks_per_call
  assert scenario.step <= caught.value.step < scenario.step + 4
  # Every variable (models, optimizers, env, buffers, generator) is as it
  # was when the failed call began.
  _assert_equal(states.at[scenario.step],
                scenario_table.state_arrays(scenario))


class _Terminate(snt.scenarios.Hook):
  """Sends this process SIGTERM once `at` steps are done."""

  def __init__(self, at):
    self.at, self.sent = at, False

  def step_end(self, scenario, step, logs):
    if step >= self.at and not self.sent:
      self.sent = True
      os.kill(os.getpid(), signal.SIGTERM)


@pytest.mark.parametrize("row", ROWS, ids=_IDS)
def test_mirrored_over_two_cpus_matches_one_device(row, uninterrupted):
  strategy = optimizer_common._mirrored_strategy()  # pylint: disable=protected-access
  if not row.multi_replica:
    with pytest.raises(ValueError, match=f"^{row.owner}[: ].*default strategy "
                       "only, got MirroredStrategy with 2"):
      scenario_table.train(row, strategy=strategy)
    return
  one = uninterrupted.model(row)
  mirrored = scenario_table.train(row, strategy=strategy, **_SETTINGS)
  assert mirrored.strategy.num_replicas_in_sync == 2
  both = scenario_table.model_arrays(mirrored)
  assert len(one) == len(both)
  for a, b in zip(one, both):
    # Sums split in two differ in the last bits (contrastive: ~3e-6).
    np.testing.assert_allclose(b, a, rtol=1e-4, atol=row.mirrored_atol)


# ---- SIGTERM, then SIGKILL: bitwise resume after each ----

# Trains the row named in argv[2] in argv[1]/<row> (resuming what is there)
# and SIGKILLs itself once argv[3] steps are done. Its TensorFlow is set up
# as this process's (two logical CPUs, no op determinism), so the two
# compute bit for bit alike. It runs in a process of its own forked by a
# `fork_server` that has imported KILLED_PRELOAD (TensorFlow's runtime
# starts in the child), which saves each row ~4 s of `import tensorflow`.
KILLED_PRELOAD = ("conftest", "sonnet_like", "tests.scenario_table")
_KILLED_SCRIPT = textwrap.dedent("""
    import os, signal, sys
    sys.path.insert(0, {root!r})
    import conftest  # TensorFlow set up as in this test process.
    import sonnet_like as snt
    from tests import scenario_table
    save_dir, name, kill_at = sys.argv[1], sys.argv[2], int(sys.argv[3])

    class Kill(snt.scenarios.Hook):
      def step_end(self, scenario, step, logs):
        if step >= kill_at:
          os.kill(os.getpid(), signal.SIGKILL)

    scenario_table.train(scenario_table.BY_NAME[name], steps_per_call=2,
                         save_every=4, hooks=[Kill()],
                         save_dir=os.path.join(save_dir, name))
    print("NOT KILLED", flush=True)
""")


@pytest.mark.parametrize("row", ROWS, ids=_IDS)
def test_sigterm_then_sigkill_resume_bitwise(row, tmp_path, capfd,
                                             uninterrupted):
  # One run's folder through both interruptions (each launch costs a trace
  # of the row). A SIGTERM at step 6 here: it saves at that boundary and
  # exits 143.
  save_dir = tmp_path / row.name
  with pytest.raises(SystemExit) as exited:
    scenario_table.train(row, hooks=[_Terminate(6)], **_saving(save_dir))
  assert exited.value.code == 128 + signal.SIGTERM == 143
  assert tf.train.latest_checkpoint(str(save_dir)).endswith("-6")
  # A process of its own resumes from step 6 and is killed at step 10,
  # between the checkpoint of step 8 and that of step 12: steps 9 and 10
  # are lost with it, and its lock file is left behind.
  script = tmp_path / "train.py"
  script.write_text(_KILLED_SCRIPT.format(root=tests.ROOT))
  killed = fork_server.shared(KILLED_PRELOAD).popen(
      [script, tmp_path, row.name, "10"], dict(os.environ))
  _, killed_err = killed.communicate(timeout=300)
  assert killed.returncode == -signal.SIGKILL, killed_err[-3000:]
  assert f"{row.owner}: resuming from" in killed_err
  assert tf.train.latest_checkpoint(str(save_dir)).endswith("-8")
  assert (save_dir / run_dir.LOCK_FILE).exists()
  # Run again (here), it resumes from step 8, takes the dead process's lock
  # over and ends bit for bit where a run never interrupted ends.
  capfd.readouterr()
  resumed = scenario_table.train(row, **_saving(save_dir))
  err = capfd.readouterr().err
  assert resumed.step == row.num_steps
  assert resumed.history.stop_reason == "done"
  assert f"{row.owner}: resuming from" in err
  assert (f"{row.owner}: took over the lock of save_dir {save_dir} "
          f"from process {killed.pid} on host") in err
  _assert_equal(uninterrupted.state(row), scenario_table.state_arrays(resumed))
