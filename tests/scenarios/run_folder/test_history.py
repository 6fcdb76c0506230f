"""History: recording, saving and loading up to a step."""

import json
import os

import pytest
import tensorflow as tf

from sonnet_like.scenarios.run_folder import history


class _Scenario:
  num_steps = 25


def test_records_every_log_every_and_the_last_step(tmp_path):
  h = history.History(log_every=10)
  for step in (5, 10, 15, 20, 25):
    h.step_end(_Scenario(), step, {"loss": step / 10})
  h.eval_end(_Scenario(), 20, {"accuracy": 0.5})
  assert h.train == {"step": [10, 20, 25], "loss": [1.0, 2.0, 2.5]}
  assert h.eval == {"step": [20], "accuracy": [0.5]}
  h.stop_reason = "done"
  h.save(str(tmp_path))
  loaded = history.History.load(str(tmp_path), up_to_step=20)
  assert loaded.train == {"step": [10, 20], "loss": [1.0, 2.0]}
  assert loaded.eval == h.eval and loaded.stop_reason == "done"
  assert "last_eval={'step': 20, 'accuracy': 0.5}" in repr(loaded)
  assert history.History.load(str(tmp_path)).train == h.train  # All of it.


def test_load_without_file_names_it(tmp_path):
  with pytest.raises(FileNotFoundError, match=(
      f"^History.load: {tmp_path / 'history.json'} does not exist. Give the "
      "save_dir of a run")):
    history.History.load(str(tmp_path))


def test_save_is_atomic_and_leaves_no_temp_file(tmp_path):
  h = history.History()
  h.train = {"step": [1], "loss": [0.5]}
  h.save(str(tmp_path))
  h.train["step"].append(2)
  h.train["loss"].append(0.25)
  h.save(str(tmp_path))
  assert os.listdir(tmp_path) == ["history.json"]
  assert json.loads((tmp_path / "history.json").read_text())["train"] == {
      "step": [1, 2], "loss": [0.5, 0.25]}


def test_a_damaged_file_is_an_error_naming_it(tmp_path):
  (tmp_path / "history.json").write_text('{"train": {"step": [1, 2')
  h = history.History()
  with pytest.raises(history.HistoryFileError) as error:
    history.History.load(str(tmp_path))
  message = str(error.value)
  assert message.startswith(f"History.load: the history file "
                            f"{tmp_path / 'history.json'} is damaged (")
  assert "Expecting" in message and "rebuilds the file" in message
  with pytest.raises(history.HistoryFileError, match="Supervised: the "
                     "history file"):
    h.resume(str(tmp_path), 5, "Supervised", in_checkpoint=None)
  (tmp_path / "history.json").write_text("[1, 2]")
  with pytest.raises(history.HistoryFileError, match="not a saved History"):
    history.History.load(str(tmp_path))


def test_resume_prefers_the_checkpoint_copy_and_keeps_the_stop_reason(
    tmp_path):
  on_disk = history.History()
  on_disk.train = {"step": [2, 4], "loss": [1.0, 0.5]}  # Older than the ckpt.
  on_disk.stop_reason = "early stopping: ..."
  on_disk.save(str(tmp_path))
  copy = {"train": {"step": [2, 4, 6], "loss": [1.0, 0.5, 0.25]},
          "eval": {}, "stop_reason": ""}
  h = history.History()
  assert h.resume(str(tmp_path), 6, "GAN", in_checkpoint=copy) is None
  assert h.train == copy["train"] and h.stop_reason == "early stopping: ..."
  (tmp_path / "history.json").write_text("{")
  note = h.resume(str(tmp_path), 4, "GAN", in_checkpoint=copy)
  assert note.startswith(f"GAN: the history file {tmp_path / 'history.json'}"
                         " is damaged")
  assert h.train == {"step": [2, 4], "loss": [1.0, 0.5]}
  moved = [n for n in os.listdir(tmp_path) if n != "history.json"]
  assert len(moved) == 1 and moved[0] in note
  assert (tmp_path / moved[0]).read_text() == "{"  # Kept, not overwritten.


def test_history_state_round_trips_through_a_checkpoint(tmp_path):
  h = history.History()
  h.eval = {"step": [3], "accuracy": [0.75]}
  saved = tf.train.Checkpoint(h=history.HistoryState(h)).write(
      str(tmp_path / "c"))
  state = history.HistoryState(history.History())
  tf.train.Checkpoint(h=state).read(saved).assert_consumed()
  assert state.restored == h.to_dict()
