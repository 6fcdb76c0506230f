"""MLflowLogger against a real local MLflow store: a run killed with SIGKILL
and resumed continues the same MLflow run, each step logged exactly once."""

import json
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import sonnet_like as snt
from sonnet_like.scenarios.reporting import csv_logger
from sonnet_like.scenarios.reporting import mlflow_logger

tracking = pytest.importorskip("mlflow.tracking")

# Steps of 2, cut at evaluations (every 3) and saves (every 4): the killed
# process logs train steps 2, 4, 6 and evals 3, 6, then dies at step 6; its
# last checkpoint is step 4, so the resumed run trains 5 and 6 again.
_SETTINGS = dict(num_steps=10, steps_per_call=2, log_every=2, eval_every=3,
                 save_every=4, batch_size=8, progress=False,
                 tensorboard=False)

_KILLED = textwrap.dedent("""
    import os, signal, sys
    sys.path.insert(0, {here!r})
    import test_mlflow_logger as t
    import sonnet_like as snt

    class Kill(snt.scenarios.Hook):
      def step_end(self, scenario, step, logs):
        if step >= 6:
          os.kill(os.getpid(), signal.SIGKILL)

    t.train(sys.argv[1], Kill())
    print("NOT KILLED", flush=True)
""")


def train(save_dir, *hooks):
  """The tiny run, with an MLflow and a CSV logger (and `hooks` last)."""
  data = np.random.default_rng(0).normal(size=(32, 3)).astype("float32")
  train = snt.scenarios.Supervised(
      save_dir=save_dir, hooks=[snt.scenarios.MLflowLogger(),
                                snt.scenarios.CSVLogger(), *hooks],
      **_SETTINGS)
  train(snt.Linear(1, name="model"), snt.optimizers.SGD(0.1), "mse",
        (data, data.sum(1, keepdims=True)), eval_data=(data[:8], data[:8, :1]))
  return train


@pytest.fixture(scope="module")
def resumed(tmp_path_factory):
  """The run killed at step 6 in a process of its own, then resumed here."""
  save_dir = str(tmp_path_factory.mktemp("mlflow") / "run")
  here = str(__import__("pathlib").Path(__file__).parent)
  killed = subprocess.run(
      [sys.executable, "-c", _KILLED.format(here=here), save_dir],
      capture_output=True, text=True, timeout=300, check=False)
  assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
  with open(f"{save_dir}/logs/{mlflow_logger.RUN_FILE}") as f:
    first_id = json.load(f)["run_id"]
  return save_dir, first_id, train(save_dir)


def test_a_killed_and_resumed_run_logs_each_step_once(resumed):
  save_dir, first_id, scenario = resumed
  assert scenario.step == 10
  client = tracking.MlflowClient(f"sqlite:///{save_dir}/mlflow.db")
  runs = client.search_runs(
      [client.get_experiment_by_name("sonnet_like").experiment_id])
  assert [run.info.run_id for run in runs] == [first_id]  # Continued.
  assert runs[0].info.status == "FINISHED"
  expected = {"train/loss": [2, 4, 6, 8, 10],
              "train/learning_rate": [2, 4, 6, 8, 10],
              "train/steps_per_second": [2, 4, 6, 8, 10],
              "eval/loss": [3, 6, 9, 10]}
  history = {key: client.get_metric_history(first_id, key)
             for key in runs[0].data.metrics}
  assert {k: sorted(m.step for m in v) for k, v in history.items()} == (
      expected)
  # Steps 5-6 were trained twice; the first logging stands, and equals the
  # resumed run's (exact resume).
  logged = {m.step: m.value for m in history["train/loss"]}
  np.testing.assert_allclose([logged[s] for s in (2, 4, 6, 8, 10)],
                             scenario.history.train["loss"], rtol=1e-5)
  # The CSV files hold one row per step too: the resumed run's.
  assert csv_logger.read(f"{save_dir}/logs/train.csv")["step"] == [
      2, 4, 6, 8, 10]
  assert csv_logger.read(f"{save_dir}/logs/eval.csv")["step"] == [3, 6, 9, 10]


class _Scenario:
  is_chief, step, num_steps, log_every, save_dir, history = (
      True, 0, 2, 1, None, None)


def test_a_tracking_uri_sends_the_run_there(resumed):
  uri = f"sqlite:///{resumed[0]}/mlflow.db"  # A store that exists already.
  logger, scenario = snt.scenarios.MLflowLogger(
      tracking_uri=uri, experiment="elsewhere", run_name="named",
      params={"learning_rate": 0.1}), _Scenario()
  logger.begin(scenario)
  logger.step_end(scenario, 2, {"loss": 0.5})
  logger.end(scenario)
  client = tracking.MlflowClient(uri)
  run = client.get_run(logger.run_id)
  assert run.info.run_name == "named" and run.data.metrics == {
      "train/loss": 0.5}
  assert run.data.params == {"learning_rate": "0.1"}
  assert client.get_experiment(run.info.experiment_id).name == "elsewhere"


def test_without_a_store_or_a_local_folder_the_error_says_what_to_pass():
  scenario = _Scenario()
  with pytest.raises(ValueError, match=r"^MLflowLogger: the scenario has no "
                     r"save_dir, so there is no default store .* Pass "
                     r"tracking_uri=\.\.\."):
    snt.scenarios.MLflowLogger().begin(scenario)
  scenario.save_dir = "ram://runs/a"
  with pytest.raises(ValueError, match=r"save_dir ram://runs/a is not a "
                     r"local folder \(SQLite needs one\)"):
    snt.scenarios.MLflowLogger().begin(scenario)


def test_without_mlflow_the_error_names_the_extra(monkeypatch):
  monkeypatch.setitem(sys.modules, "mlflow", None)  # Import fails.
  with pytest.raises(ImportError, match=r"^MLflowLogger needs the mlflow "
                     r"package, which is not installed\. Install it with the "
                     r"mlflow extra \(`pip install sonnet_like\[mlflow\]`\)"):
    snt.scenarios.MLflowLogger()


def test_the_mlflow_run_ends_failed_on_an_error_killed_on_a_signal(resumed):
  uri = f"sqlite:///{resumed[0]}/mlflow.db"
  failed, killed = (snt.scenarios.MLflowLogger(tracking_uri=uri),
                    snt.scenarios.MLflowLogger(tracking_uri=uri))
  scenario = _Scenario()
  scenario.history = snt.scenarios.History()
  failed.begin(scenario)
  killed.begin(scenario)
  scenario.step = 1  # Of 2: stopped early.
  with pytest.raises(RuntimeError):
    try:
      raise RuntimeError("the step failed")
    finally:  # As the engine ends its hooks.
      failed.end(scenario)
  scenario.history.stop_reason = "SIGTERM"  # As the engine records it.
  killed.end(scenario)
  client = tracking.MlflowClient(uri)
  assert [client.get_run(logger.run_id).info.status
          for logger in (failed, killed)] == ["FAILED", "KILLED"]
