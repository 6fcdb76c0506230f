"""Checkpoints written from a snapshot in the background (async_save=True)."""

import json
import os
import signal
import textwrap
import threading
import uuid

import numpy as np
import pytest
import tensorflow as tf

import tests
import sonnet_like as snt
from sonnet_like.core import files
from sonnet_like.scenarios.run_folder import background_save
from sonnet_like.scenarios.run_folder import checkpointing
from sonnet_like.scenarios.run_folder import snapshot
from tests import fork_server
from tests import scenario_table
from tests.scenarios import test_scenario_table

ROW = scenario_table.BY_NAME["Supervised"]
# As the scenario table's runs (12 steps, 2 a call), so its uninterrupted
# run is the reference; a history record every 2 steps.
SETTINGS = dict(steps_per_call=2, save_every=4, log_every=2,
                async_save=True)


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
  """The scenario table's uninterrupted runs, shared with its tests."""
  return test_scenario_table.shared_uninterrupted(tmp_path_factory)


@pytest.mark.parametrize("where", ["local", "ram"])
def test_a_failed_write_is_raised_by_the_next_save_naming_its_step(
    where, tmp_path, monkeypatch):
  folder = (str(tmp_path) if where == "local" else
            f"ram://background_save/{uuid.uuid4().hex}")
  variable = tf.Variable(1.0)
  saver = checkpointing.Checkpointer(folder, {"v": variable}, max_to_keep=1,
                                     owner="Supervised", async_save=True)
  real_write = snapshot.Snapshot.write

  def broken_write(self, prefix):
    raise tf.errors.UnavailableError(None, None, "the bucket is gone")
  monkeypatch.setattr(snapshot.Snapshot, "write", broken_write)
  saver.save(1, after={"history.json": "{}"})
  assert saver.latest.endswith("ckpt-1")  # Until its write fails.
  with pytest.raises(background_save.BackgroundSaveError,
                     match=r"^Supervised: the checkpoint of step 1 was not "
                     r"written to .*UnavailableError: the bucket is gone"
                     ) as caught:
    saver.save(2)
  assert caught.value.step == 1
  assert isinstance(caught.value.__cause__, tf.errors.UnavailableError)
  assert saver.latest is None  # Nothing was written.
  assert sorted(files.listdir(folder)) == [".lock"]  # No index, no history.
  monkeypatch.setattr(snapshot.Snapshot, "write", real_write)
  for step in (2, 3):  # The next saves write again, and rotate.
    variable.assign(float(step))
    saver.save(step, after={"history.json": f"{step}"})
    variable.assign(-1.0)  # After the snapshot: not written.
  saver.wait()
  assert sorted(files.listdir(folder)) == [
      ".lock", "checkpoint", "ckpt-3.data-00000-of-00001", "ckpt-3.index",
      "history.json"]
  assert files.read_text(files.join(folder, "history.json")) == "3"
  monkeypatch.setattr(snapshot.Snapshot, "write", broken_write)
  saver.save(4)
  with pytest.raises(background_save.BackgroundSaveError, match="step 4"):
    saver.close()  # The end of a run raises the last write's error.
  restored = tf.Variable(0.0)
  with checkpointing.Checkpointer(folder, {"v": restored},
                                  say=lambda m: None) as loader:
    assert loader.restore().endswith("ckpt-3")
  assert float(restored) == 3.0


class _Recorder(snt.scenarios.Hook):
  """The run's state and history after each step; a write waits for it."""

  def __init__(self):
    self.states, self.history, self.last = {}, {}, 0
    self.changed = threading.Condition()

  def step_end(self, scenario, step, logs):
    self.states[step] = scenario_table.state_arrays(scenario)
    self.history[step] = json.loads(json.dumps(scenario.history.to_dict()))
    with self.changed:
      self.last = step
      self.changed.notify_all()


def test_the_state_written_is_that_of_the_save_step(tmp_path, monkeypatch):
  # Each write waits until training is 2 steps past the save (but the
  # last), so live values would be those of a later step.
  recorder, written_at = _Recorder(), {}
  real_write = snapshot.Snapshot.write

  def late_write(self, prefix):
    step = int(prefix.rsplit("-", 1)[1])
    with recorder.changed:
      recorder.changed.wait_for(
          lambda: recorder.last >= step + 2 or step == ROW.num_steps, 60)
      written_at[step] = recorder.last
    real_write(self, prefix)
  monkeypatch.setattr(snapshot.Snapshot, "write", late_write)
  save_dir = str(tmp_path)
  scenario = scenario_table.train(ROW, save_dir=save_dir, max_to_keep=2,
                                  hooks=[recorder], **SETTINGS)
  assert written_at[4] >= 6 and written_at[8] >= 10 and 12 in written_at
  # Rotation: the index and the files keep the last two.
  assert sorted(n for n in os.listdir(save_dir) if n.startswith("ckpt-")) == [
      "ckpt-12.data-00000-of-00001", "ckpt-12.index",
      "ckpt-8.data-00000-of-00001", "ckpt-8.index"]
  with open(os.path.join(save_dir, "history.json")) as f:
    assert json.load(f)["train"]["step"] == [2, 4, 6, 8, 10, 12]
  # ckpt-8 holds step 8's weights, optimizer slots, random state, step and
  # history, though written at step 10.
  prefix = os.path.join(save_dir, "ckpt-8")
  state = tf.train.Checkpoint(**scenario.trackables(), rng=scenario.rng,
                              step=scenario.traced_step.step)
  state.read(prefix).expect_partial()
  assert scenario.step == 8
  test_scenario_table._assert_equal(  # pylint: disable=protected-access
      recorder.states[8], scenario_table.state_arrays(scenario))
  history = tf.train.load_checkpoint(prefix).get_tensor(
      f"{checkpointing.HISTORY_NAME}/.ATTRIBUTES/py_state")
  assert json.loads(history) == recorder.history[8]
  assert recorder.history[8]["train"]["step"] == [2, 4, 6, 8]
  # The data position: ckpt-8's is ckpt-12's less 4 batches.
  iterator = scenario.fed_data.iterator
  reader = tf.train.Checkpoint(data=iterator)
  reader.read(prefix).expect_partial()
  after_8 = [next(iterator) for _ in range(5)]
  reader.read(os.path.join(save_dir, "ckpt-12")).expect_partial()
  after_12 = next(iterator)
  for ours, theirs in zip(tf.nest.flatten(after_8[4]),
                          tf.nest.flatten(after_12)):
    np.testing.assert_array_equal(ours, theirs)
  assert not np.array_equal(after_8[0][0], after_12[0])


# Trains the Supervised row with async saves in argv[1]. ckpt-4 is written
# once step 6 is done; ckpt-8's write leaves half its data file and hangs,
# and the process SIGKILLs itself at step 10, during that write. Forked as
# the scenario table's killed runs are (test_scenario_table.KILLED_PRELOAD).
_KILLED_SCRIPT = textwrap.dedent("""
    import os, signal, sys, threading
    sys.path.insert(0, {root!r})
    import conftest  # TensorFlow set up as in the test process.
    import sonnet_like as snt
    from sonnet_like.scenarios.run_folder import snapshot
    from tests import scenario_table
    at_6, stuck = threading.Event(), threading.Event()
    real_write = snapshot.Snapshot.write

    def write(self, prefix):
      if prefix.endswith("ckpt-4"):
        at_6.wait(60)
      real_write(self, prefix)
      if prefix.endswith("ckpt-8"):
        data = prefix + ".data-00000-of-00001"
        with open(data, "r+b") as f:
          f.truncate(os.path.getsize(data) // 2)
        stuck.set()
        threading.Event().wait()  # Killed here.
    snapshot.Snapshot.write = write

    class Kill(snt.scenarios.Hook):
      def step_end(self, scenario, step, logs):
        if step >= 6:
          at_6.set()
        if step >= 10:
          stuck.wait(60)
          os.kill(os.getpid(), signal.SIGKILL)

    scenario_table.train(scenario_table.BY_NAME["Supervised"],
                         hooks=[Kill()], save_dir=sys.argv[1], **{settings})
    print("NOT KILLED", flush=True)
""")


def test_a_kill_during_a_write_resumes_bitwise_from_the_previous(
    tmp_path, capfd, uninterrupted):
  save_dir = tmp_path / "run"
  script = tmp_path / "train.py"
  script.write_text(_KILLED_SCRIPT.format(root=tests.ROOT,
                                          settings=SETTINGS))
  killed = fork_server.shared(test_scenario_table.KILLED_PRELOAD).popen(
      [script, save_dir], dict(os.environ))
  _, killed_err = killed.communicate(timeout=300)
  assert killed.returncode == -signal.SIGKILL, killed_err[-3000:]
  # The index and history.json are still those of step 4.
  assert tf.train.latest_checkpoint(str(save_dir)).endswith("ckpt-4")
  with open(save_dir / "history.json") as f:
    assert json.load(f)["train"]["step"] == [2, 4]
  capfd.readouterr()
  resumed = scenario_table.train(ROW, save_dir=str(save_dir), **SETTINGS)
  err = capfd.readouterr().err
  assert "Supervised: restoring" in err and "passed over ckpt-8" in err
  assert "resuming from" in err and "ckpt-4 at step 4" in err
  assert resumed.step == ROW.num_steps
  test_scenario_table._assert_equal(  # pylint: disable=protected-access
      uninterrupted.state(ROW), scenario_table.state_arrays(resumed))
