"""A save_dir never loses a run: each row of issue 13's table, end to end.

Supervised with a small MLP and `save_every=2`; the damage of each row is
done to the folder between two runs (or by a second process), and each ends
in a correct resume or a clear error before any training step, with every
checkpoint that was on disk still there and readable.
"""

import os
import pathlib
import shutil
import signal
import subprocess
import tempfile
import textwrap

import keras
import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.scenarios.run_folder import checkpointing
from sonnet_like.scenarios.run_folder import history as history_lib
from sonnet_like.scenarios.run_folder import run_dir
from tests import rl_toys
from tests.scenarios import test_resume
from tests.scenarios import toy_task
from tests.scenarios.run_folder import test_run_dir


class Steps(snt.scenarios.Hook):
  """Counts the compiled calls a run makes."""

  def __init__(self):
    self.calls = 0

  def step_end(self, scenario, step, logs):
    self.calls += 1


def _train(save_dir, num_steps=6, sizes=(8, 2), optimizer=None, steps=None,
           **kwargs):
  """Trains a fresh MLP; returns (scenario, model, counting hook)."""
  tf.random.set_seed(0)
  model = snt.nets.MLP(list(sizes), name="mlp")
  steps = steps or Steps()
  train = snt.scenarios.Supervised(
      num_steps=num_steps, batch_size=16, save_every=2, max_to_keep=10,
      save_dir=str(save_dir), progress=False, hooks=[steps], **kwargs)
  train(model, optimizer or keras.optimizers.SGD(0.1), toy_task.loss,
        toy_task.data(features=4))
  return train, model, steps


def _checkpoint_files(directory):
  """{relative path: bytes} of every checkpoint file under `directory`."""
  found = {}
  for root, _, names in os.walk(directory):
    for name in names:
      if name.startswith("ckpt-"):
        path = os.path.join(root, name)
        with open(path, "rb") as f:
          found[os.path.relpath(path, directory)] = f.read()
  return found


def _all_readable(directory, files):
  prefixes = {os.path.join(str(directory), f.split(".")[0]) for f in files}
  return all(checkpointing.readable(p) for p in prefixes)


def _refused(save_dir, error_type, **kwargs):
  """Runs again into a damaged folder: refused before a step, files kept."""
  before = _checkpoint_files(save_dir)
  steps = Steps()
  with pytest.raises(error_type) as error:
    _train(save_dir, num_steps=10, steps=steps, **kwargs)
  assert steps.calls == 0
  assert _checkpoint_files(save_dir) == before
  assert not os.path.exists(os.path.join(save_dir, run_dir.LOCK_FILE))
  return str(error.value)


def test_garbage_index_resumes_from_the_newest_data_files(tmp_path, capsys):
  _, straight, _ = _train(tmp_path / "straight", num_steps=10)
  save_dir = tmp_path / "run"
  _train(save_dir)
  before = _checkpoint_files(save_dir)
  assert sorted(before)[-1] == "ckpt-6.index"
  (save_dir / "checkpoint").write_text("garbage {{{")
  capsys.readouterr()
  train, model, steps = _train(save_dir, num_steps=10)
  err = capsys.readouterr().err
  assert "the checkpoint index" in err and "damaged" in err
  assert f"Supervised: resuming from {save_dir / 'ckpt-6'} at step 6" in err
  assert train.step == 10 and steps.calls == 4  # Steps 7 to 10.
  for a, b in zip(straight.variables, model.variables):
    np.testing.assert_array_equal(a.numpy(), b.numpy())
  after = _checkpoint_files(save_dir)
  assert {k: after[k] for k in before} == before  # Untouched, readable.
  assert _all_readable(save_dir, after)


def test_all_checkpoints_unreadable_is_refused(tmp_path):
  _train(tmp_path)
  for name in os.listdir(tmp_path):
    if name.startswith("ckpt-") and ".data-" in name:
      with open(tmp_path / name, "r+b") as f:
        f.truncate(3)
  message = _refused(str(tmp_path), checkpointing.NoReadableCheckpointError)
  assert message.startswith(f"Supervised: save_dir {tmp_path} holds "
                            "checkpoint data, but no checkpoint in it can be "
                            "read")
  for step in (2, 4, 6):
    assert f"ckpt-{step}: " in message
  assert "restart=True" in message


@pytest.mark.parametrize("changed, path", [
    (dict(sizes=(8, 8, 2)), "model/_layers/2: in the program"),
    (dict(sizes=(2,)), "model/_layers/1: in the checkpoint"),
    (dict(optimizer="adam"), "optimizer/_momentums: in the program"),
])
def test_another_model_or_optimizer_is_refused(tmp_path, changed, path):
  _train(tmp_path, num_steps=4)
  if changed.get("optimizer") == "adam":
    changed = dict(optimizer=keras.optimizers.Adam(0.1))
  message = _refused(str(tmp_path), checkpointing.CheckpointMismatchError,
                     **changed)
  assert message.startswith(f"Supervised: checkpoint {tmp_path / 'ckpt-4'} "
                            "does not match what is being trained")
  assert path in message and "restart=True" in message


def test_save_dir_that_is_a_file_is_refused_before_training(tmp_path):
  path = tmp_path / "run"
  path.write_text("not a folder")
  steps = Steps()
  with pytest.raises(run_dir.FolderError) as error:
    _train(path, steps=steps)
  assert str(error.value).startswith(
      f"Supervised: save_dir {path} is a file, not a folder.")
  assert steps.calls == 0 and path.read_text() == "not a folder"


def test_damaged_history_is_rebuilt_from_the_checkpoint(tmp_path, capsys):
  _train(tmp_path, log_every=2)
  text = (tmp_path / "history.json").read_text()
  (tmp_path / "history.json").write_text(text[:24])  # Cut short.
  capsys.readouterr()
  train, _, _ = _train(tmp_path, num_steps=10, log_every=2)
  err = capsys.readouterr().err
  assert f"Supervised: the history file {tmp_path / 'history.json'} is " \
         "damaged" in err and "rebuilt the history from the checkpoint" in err
  assert train.step == 10
  assert train.history.train["step"] == [2, 4, 6, 8, 10]  # All of them.
  saved = history_lib.History.read(str(tmp_path / "history.json"))
  assert saved["train"]["step"] == train.history.train["step"]
  damaged = [n for n in os.listdir(tmp_path) if ".damaged-" in n]
  assert (tmp_path / damaged[0]).read_text() == text[:24]


def test_restart_moves_the_old_run_aside(tmp_path, capsys):
  _train(tmp_path, num_steps=4)
  before = _checkpoint_files(tmp_path)
  capsys.readouterr()
  train, _, steps = _train(tmp_path, num_steps=4, restart=True)
  assert "restart=True: moved the previous run" in capsys.readouterr().err
  assert train.step == 4 and steps.calls == 4
  aside = [d for d in os.listdir(tmp_path) if d.startswith("restart-")]
  moved = _checkpoint_files(tmp_path / aside[0])
  assert moved == before and _all_readable(tmp_path / aside[0], moved)
  with pytest.raises(ValueError, match="Supervised: restart=True needs a "
                     "save_dir"):
    snt.scenarios.Supervised(num_steps=1, restart=True)


# ---- Real processes: two runs at once, a stale lock, a read-only folder.

_SCRIPT = test_resume.SCRIPT_PREAMBLE + textwrap.dedent("""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 4)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int32)
    model = snt.nets.MLP([8, 2], name="mlp")
    loss = lambda o, t: tf.nn.sparse_softmax_cross_entropy_with_logits(t, o)
    train = snt.scenarios.Supervised(num_steps=12, batch_size=16,
                                     save_every=2, max_to_keep=10,
                                     save_dir=save_dir, progress=False,
                                     hooks=[Slow()])
    train(model, keras.optimizers.SGD(0.1), loss, (x, y))
    np.savez(out, *[v.numpy() for v in model.trainable_variables])
    print("FINISHED", train.step)
""")


def _script(tmp_path):
  script = tmp_path / "train.py"
  script.write_text(_SCRIPT.format(root=test_resume._root()))  # pylint: disable=protected-access
  return script


def test_a_run_is_refused_while_another_process_holds_the_folder(tmp_path):
  # This process holds the lock as a running scenario does; a run started in
  # another process is refused before training, naming this one. (Lock
  # races and the takeover of a killed run's lock: test_run_dir.py and every
  # row of test_scenario_table.py.)
  script, save_dir = _script(tmp_path), tmp_path / "run"
  save_dir.mkdir()
  with run_dir.FolderLock("Supervised", str(save_dir)):
    refused = test_resume._start(script, save_dir, tmp_path / "r.npz", 0.0)  # pylint: disable=protected-access
    out, err = refused.communicate(timeout=180)
  assert refused.returncode == 1, err[-2000:]
  assert "FINISHED" not in out
  assert (f"FolderLockedError: Supervised: save_dir {save_dir} is in use by "
          f"process {os.getpid()} on host") in err
  assert os.listdir(save_dir) == []  # The lock file went with the release.


def test_read_only_save_dir_is_refused_before_training(tmp_path):
  # Root writes through permission bits: the run is made as user nobody,
  # in a folder of /tmp (pytest's tmp_path is closed to other users).
  python, kwargs = test_run_dir.as_nobody()
  base = tempfile.mkdtemp(prefix="read_only_run_")
  kwargs["env"]["HOME"] = base
  save_dir = os.path.join(base, "run")
  os.mkdir(save_dir)
  script = _script(pathlib.Path(base))
  os.chmod(base, 0o755)
  os.chmod(save_dir, 0o555)
  try:
    result = subprocess.run([python, str(script), save_dir,
                             os.path.join(base, "out.npz"), "0"],
                            capture_output=True, text=True, timeout=180,
                            **kwargs)
    test_run_dir.skip_if_not_importable(
        result, ("numpy", "tensorflow", "keras", "sonnet_like"))
    assert result.returncode == 1, result.stderr[-2000:]
    assert (f"FolderError: Supervised: save_dir {save_dir} is not writable "
            "(Permission denied)") in result.stderr
    assert os.listdir(save_dir) == []
  finally:
    os.chmod(save_dir, 0o755)
    shutil.rmtree(base)


# ---- GAN and RL share the engine's path: one damaged folder each.


def test_gan_refuses_a_changed_discriminator(tmp_path):
  def run(hidden):
    tf.random.set_seed(0)
    generator = snt.nets.MLP([8, 2], name="generator")
    discriminator = snt.nets.MLP([hidden, 1], name="discriminator")
    gan = snt.scenarios.GAN(num_steps=2, batch_size=16, latent_size=3,
                            save_every=2, save_dir=str(tmp_path),
                            progress=False)
    gan(generator, discriminator, keras.optimizers.Adam(1e-3),
        keras.optimizers.Adam(1e-3), np.zeros((64, 2), np.float32))
  run(8)
  before = _checkpoint_files(tmp_path)
  with pytest.raises(checkpointing.CheckpointMismatchError) as error:
    run(16)
  message = str(error.value)
  assert message.startswith("GAN: checkpoint ")
  assert "discriminator/_layers/0/w: checkpoint float32[2, 8], program " \
         "float32[2, 16]" in message
  assert _checkpoint_files(tmp_path) == before


def test_ppo_refuses_a_folder_where_nothing_reads(tmp_path):
  def run():
    ppo = snt.scenarios.PPO(num_env_steps=4 * 5 * 2, num_envs=4,
                            rollout_length=5, save_every=1,
                            save_dir=str(tmp_path), progress=False)
    ppo(snt.Linear(2, name="actor"), snt.Linear(1, name="critic"),
        keras.optimizers.Adam(0.01), rl_toys.Guess(4))
    return ppo
  assert run().step == 2
  for name in os.listdir(tmp_path):
    if name.endswith(".index"):
      with open(tmp_path / name, "r+b") as f:
        f.write(b"\xff" * 16)
  before = _checkpoint_files(tmp_path)
  with pytest.raises(checkpointing.NoReadableCheckpointError,
                     match=f"PPO: save_dir {tmp_path} holds checkpoint data"):
    run()
  assert _checkpoint_files(tmp_path) == before


def test_a_preempted_run_releases_its_lock(tmp_path):
  script, save_dir = _script(tmp_path), tmp_path / "run"
  termed = test_resume._start(script, save_dir, tmp_path / "t.npz", 0.5)  # pylint: disable=protected-access
  test_resume._wait_for_checkpoint(save_dir, termed, at_least=2)  # pylint: disable=protected-access
  assert (save_dir / run_dir.LOCK_FILE).exists()
  termed.send_signal(signal.SIGTERM)
  _, err = termed.communicate(timeout=60)
  assert termed.returncode == 128 + signal.SIGTERM, err[-2000:]
  assert not (save_dir / run_dir.LOCK_FILE).exists()  # Released on sys.exit.
