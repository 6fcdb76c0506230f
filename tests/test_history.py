"""History: recording, saving and loading up to a step."""

from sonnet_like.scenarios import history


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
  loaded = history.History()
  loaded.load(str(tmp_path), up_to_step=20)
  assert loaded.train == {"step": [10, 20], "loss": [1.0, 2.0]}
  assert loaded.eval == h.eval and loaded.stop_reason == "done"
  assert "last_eval={'step': 20, 'accuracy': 0.5}" in repr(loaded)


def test_load_without_file_keeps_it_empty(tmp_path):
  h = history.History()
  h.load(str(tmp_path), up_to_step=5)
  assert h.to_dict() == {"train": {}, "eval": {}, "stop_reason": ""}
