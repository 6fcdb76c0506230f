"""The cross-cutting tests of every scenario, driven by scenario_table.ROWS:
bitwise resume after SIGKILL, SIGTERM save-and-exit, NaN raise and skip,
mirrored over two logical CPUs equal to one device (or refused, for RL),
and bad data named."""

import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import tensorflow as tf

import tests
import sonnet_like as snt
from sonnet_like.scenarios import run_dir
from tests import optimizer_common
from tests import scenario_table
from tests.scenarios import test_resume

ROWS = scenario_table.ROWS
_IDS = [row.name for row in ROWS]
_SETTINGS = dict(steps_per_call=2)
_SAVE_EVERY = 4


def _saving(save_dir):
  return dict(_SETTINGS, save_dir=str(save_dir), save_every=_SAVE_EVERY)


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


class _Terminate(snt.scenarios.Hook):
  """Sends this process SIGTERM once `at` steps are done."""

  def __init__(self, at):
    self.at, self.sent = at, False

  def step_end(self, scenario, step, logs):
    if step >= self.at and not self.sent:
      self.sent = True
      os.kill(os.getpid(), signal.SIGTERM)


@pytest.mark.parametrize("row", ROWS, ids=_IDS)
def test_sigterm_saves_exits_143_and_the_rerun_ends_the_same(row, tmp_path):
  whole = scenario_table.state_arrays(scenario_table.train(row, **_SETTINGS))
  save_dir = str(tmp_path / "run")
  with pytest.raises(SystemExit) as exited:
    scenario_table.train(row, hooks=[_Terminate(6)], **_saving(save_dir))
  assert exited.value.code == 128 + signal.SIGTERM == 143
  latest = tf.train.latest_checkpoint(save_dir)
  assert latest.endswith("-6")  # Stopped and saved at the next boundary.
  resumed = scenario_table.train(row, **_saving(save_dir))
  assert resumed.step == row.num_steps
  assert resumed.history.stop_reason == "done"
  _assert_equal(whole, scenario_table.state_arrays(resumed))


@pytest.mark.parametrize("row", ROWS, ids=_IDS)
def test_mirrored_over_two_cpus_matches_one_device(row):
  strategy = optimizer_common._mirrored_strategy()  # pylint: disable=protected-access
  if not row.multi_replica:
    with pytest.raises(ValueError, match=f"^{row.owner}[: ].*default strategy "
                       "only, got MirroredStrategy with 2"):
      scenario_table.train(row, strategy=strategy)
    return
  one = scenario_table.model_arrays(scenario_table.train(row, **_SETTINGS))
  mirrored = scenario_table.train(row, strategy=strategy, **_SETTINGS)
  assert mirrored.strategy.num_replicas_in_sync == 2
  both = scenario_table.model_arrays(mirrored)
  assert len(one) == len(both)
  for a, b in zip(one, both):
    # Sums split in two differ in the last bits (contrastive: ~3e-6).
    np.testing.assert_allclose(b, a, rtol=1e-4, atol=row.mirrored_atol)


# ---- Bitwise resume after SIGKILL (subprocesses) ----

# Trains the rows named in argv[4] (comma-separated), each in
# save_dir/<row>, writing its state to <out>-<row>.npz; with argv[5] > 0 the
# process SIGKILLs itself once that many steps are done.
_SCRIPT = test_resume.SCRIPT_PREAMBLE + textwrap.dedent("""
    import signal
    kill_at = int(sys.argv[5])

    class Kill(snt.scenarios.Hook):
      def step_end(self, scenario, step, logs):
        if kill_at and step >= kill_at:
          os.kill(os.getpid(), signal.SIGKILL)

    from tests import scenario_table
    for name in sys.argv[4].split(","):
      row = scenario_table.BY_NAME[name]
      scenario = scenario_table.train(
          row, steps_per_call=2, save_every=4, hooks=[Slow(), Kill()],
          save_dir=os.path.join(save_dir, name))
      np.savez(f"{{out}}-{{name}}.npz",
               *scenario_table.state_arrays(scenario))
      print("FINISHED", name, scenario.step, flush=True)
""")


def _start(script, save_dir, out, names, kill_at=0):
  return subprocess.Popen(
      [sys.executable, str(script), str(save_dir), str(out), "0",
       ",".join(names), str(kill_at)], stdout=subprocess.PIPE,
      stderr=subprocess.PIPE, text=True)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
  """Every row trained without interruption, in one process."""
  folder = tmp_path_factory.mktemp("uninterrupted")
  script = folder / "train.py"
  script.write_text(_SCRIPT.format(root=tests.ROOT))
  return script, folder, _start(script, folder / "runs", folder / "w", _IDS)


@pytest.mark.parametrize("row", ROWS, ids=_IDS)
def test_killed_run_resumes_bitwise(row, uninterrupted, tmp_path):
  script, folder, whole = uninterrupted

  # Killed at step 6, between the checkpoint of step 4 and that of step 8:
  # steps 5 and 6 are lost with the process, the lock file is left behind.
  killed = _start(script, tmp_path, tmp_path / "k", [row.name], kill_at=6)
  killed.communicate(timeout=300)
  assert killed.returncode == -signal.SIGKILL
  assert tf.train.latest_checkpoint(str(tmp_path / row.name)).endswith("-4")
  assert (tmp_path / row.name / run_dir.LOCK_FILE).exists()
  resumed = _start(script, tmp_path, tmp_path / "k", [row.name])
  out, err = resumed.communicate(timeout=300)
  assert resumed.returncode == 0, err[-3000:]
  assert f"FINISHED {row.name} {row.num_steps}" in out
  assert f"{row.owner}: resuming from" in err
  assert (f"{row.owner}: took over the lock of save_dir {tmp_path / row.name} "
          f"from process {killed.pid} on host") in err
  if whole.returncode is None:
    _, whole_err = whole.communicate(timeout=600)
    assert whole.returncode == 0, whole_err[-3000:]
  expected = test_resume._weights(f"{folder / 'w'}-{row.name}.npz")  # pylint: disable=protected-access
  _assert_equal(expected, test_resume._weights(f"{tmp_path / 'k'}-{row.name}.npz"))  # pylint: disable=protected-access
