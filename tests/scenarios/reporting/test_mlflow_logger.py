"""MLflowLogger against a real local MLflow store: a run killed with SIGKILL
and resumed continues the same MLflow run, each step logged exactly once; a
population's every member; stores it cannot use named before the first
step; a tracking server (a small fake of MLflow's REST API on loopback)
lost in the middle of a run."""

import http.server
import json
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
import urllib.parse
import warnings

import numpy as np
import pytest
import tensorflow as tf

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


# ---- Stores it cannot use, named before the first step. ----

_WORKS = (r"pass a store that works, e\.g\. "
          r"tracking_uri='sqlite:///runs/x/mlflow\.db' \(a SQLite file, no "
          r"server needed\) or the http:// address of a tracking server that "
          r"answers\.$")


class _Steps(snt.scenarios.Hook):

  def __init__(self):
    self.steps = []

  def step_end(self, scenario, step, logs):
    self.steps.append(step)


def test_a_server_that_is_not_there_is_named_in_seconds_before_a_step():
  # Before: "Connection refused" after 245 s of MLflow's retries.
  data = np.ones((8, 3), np.float32)
  steps = _Steps()
  scenario = snt.scenarios.Supervised(
      num_steps=2, batch_size=4, progress=False, tensorboard=False,
      hooks=[steps, snt.scenarios.MLflowLogger(
          tracking_uri="http://127.0.0.1:1")])
  start = time.monotonic()
  with pytest.raises(ValueError, match=(
      r"^MLflowLogger cannot use tracking_uri 'http://127\.0\.0\.1:1': no "
      r"server answers there \(Connection refused\); start it first, or "
      + _WORKS)):
    scenario(snt.Linear(1), snt.optimizers.SGD(0.1), "mse", (data, data[:, :1]))
  assert time.monotonic() - start < 10
  assert not steps.steps and scenario.step == 0


def test_a_server_that_accepts_but_never_answers_is_named(monkeypatch):
  monkeypatch.setattr(mlflow_logger, "PROBE_SECONDS", 0.5)
  with socket.socket() as silent:  # Listens, never answers.
    silent.bind(("127.0.0.1", 0))
    silent.listen()
    uri = f"http://127.0.0.1:{silent.getsockname()[1]}"
    with pytest.raises(ValueError, match=(
        rf"^MLflowLogger cannot use tracking_uri '{uri}': no server answers "
        r"there \(no answer within 0\.5 s\); start it first, or ")):
      snt.scenarios.MLflowLogger(tracking_uri=uri).begin(_Scenario())


@pytest.mark.parametrize("uri, why, fix", [
    ("sqllite:///runs/m.db", r"MLflow keeps runs in no store of scheme "
     r"'sqllite' \(it has sqlite, postgresql, mysql, mssql, http, https, "
     r"databricks, databricks-uc, uc\)",
     r"write tracking_uri='sqlite:///runs/m\.db' if that was meant, or "),
    ("./mlruns", r"it is a file store, which MLflow 3 refuses \(it keeps "
     r"runs in a database or a tracking server\)",
     r"write tracking_uri='sqlite:///\./mlruns/mlflow\.db' to keep them "
     r"beside it, or "),
    ("file:///tmp/mlruns", r"it is a file store, which MLflow 3 refuses "
     r"\(.*\)",
     r"write tracking_uri='sqlite:////tmp/mlruns/mlflow\.db' to keep them "
     r"beside it, or "),
])
def test_a_store_mlflow_has_not_is_named_with_one_that_works(uri, why, fix):
  # Before: MLflow's own errors from inside MLflow, at the first write.
  if uri.startswith(("./", "file:")) and mlflow_logger._mlflow_major() < 3:  # pylint: disable=protected-access
    pytest.skip("MLflow 2 keeps file stores")
  with pytest.raises(ValueError, match=(
      rf"^MLflowLogger cannot use tracking_uri '{uri}': {why}; {fix}"
      + _WORKS)):
    snt.scenarios.MLflowLogger(tracking_uri=uri)


def test_a_sqlite_file_it_cannot_write_is_named(tmp_path):
  (tmp_path / "afile").write_text("")  # A file where a folder must be.
  uri = f"sqlite:///{tmp_path}/afile/m.db"
  logger = snt.scenarios.MLflowLogger(tracking_uri=uri)
  with pytest.raises(ValueError, match=(
      rf"^MLflowLogger cannot use tracking_uri '{uri}': its SQLite file "
      rf"{tmp_path}/afile/m\.db cannot be written \((FileExistsError|"
      r"NotADirectoryError): .*\); " + _WORKS)):
    logger.begin(_Scenario())


# ---- A tracking server lost in the middle of a run. ----


class _FakeServer:
  """The few calls of MLflow's REST API the logger makes, on loopback;
  `stop()` and `start()` take it away and bring it back on its port."""

  def __init__(self):
    self.metrics, self.status, self._server = [], None, None
    self.port = self.start()

  def start(self) -> int:
    fake = self

    class Handler(http.server.BaseHTTPRequestHandler):

      def log_message(self, *args):
        del args

      def _answer(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

      def do_GET(self):  # pylint: disable=invalid-name
        path = urllib.parse.urlsplit(self.path).path
        if path.endswith("/runs/get"):
          self._answer(200, {"run": {"info": fake.info, "data": {}}})
        else:  # get-by-name: no such experiment yet; /health.
          self._answer(404, {"error_code": "RESOURCE_DOES_NOT_EXIST"})

      def do_POST(self):  # pylint: disable=invalid-name
        path = urllib.parse.urlsplit(self.path).path
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if path.endswith("/runs/log-batch"):
          fake.metrics += [(m["key"], m["value"], int(m["step"]))
                           for m in body["metrics"]]
        elif path.endswith("/runs/update"):
          fake.status = body["status"]
        self._answer(200, {"experiment_id": "1", "run_info": fake.info,
                           "run": {"info": fake.info, "data": {}}})

    self._server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", getattr(self, "port", 0)), Handler)
    threading.Thread(target=self._server.serve_forever, args=(0.05,),
                     daemon=True).start()
    return self._server.server_address[1]

  info = {"run_id": "r", "run_uuid": "r", "experiment_id": "1",
          "status": "RUNNING", "lifecycle_stage": "active", "start_time": 0}

  def stop(self):
    self._server.shutdown()
    self._server.server_close()

  def steps(self, key):
    return [(step, value) for k, value, step in self.metrics if k == key]


class _Outage(snt.scenarios.Hook):
  """Takes the server away after step `away` and back after `back`."""

  def __init__(self, server, away, back=None):
    self.server, self.away, self.back = server, away, back

  def step_end(self, scenario, step, logs):
    if step == self.away:
      self.server.stop()
    if step == self.back:
      self.server.start()


def _lost(caught):
  return [str(w.message) for w in caught
          if str(w.message).startswith("MLflowLogger: the tracking server")]


def test_a_server_lost_mid_run_gets_every_record_when_it_answers_again(
    monkeypatch):
  monkeypatch.setattr(mlflow_logger, "RETRY_SECONDS", 0.0)
  server = _FakeServer()
  data = np.random.default_rng(0).normal(size=(32, 3)).astype("float32")
  scenario = snt.scenarios.Supervised(
      num_steps=8, batch_size=8, log_every=1, progress=False,
      tensorboard=False, hooks=[_Outage(server, away=2, back=5),
                                snt.scenarios.MLflowLogger(
                                    f"http://127.0.0.1:{server.port}")])
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    history = scenario(snt.Linear(1), snt.optimizers.SGD(0.1), "mse",
                       (data, data[:, :1]))
  assert scenario.step == 8  # Training went on.
  assert _lost(caught) == [  # Said once.
      f"MLflowLogger: the tracking server at http://127.0.0.1:{server.port} "
      "stopped answering at step 2 (Connection refused); training goes on, "
      "and the logger keeps what it cannot send and sends it when the "
      "server answers again (it tries every 0 s)."]
  logged = server.steps("train/loss")  # Steps 2-4 kept, sent at 5.
  assert [step for step, _ in logged] == list(range(1, 9))
  np.testing.assert_allclose([v for _, v in logged], history.train["loss"],
                             rtol=1e-6)
  assert server.status == "FINISHED"
  server.stop()


def test_a_server_still_lost_at_the_end_drops_the_records_with_a_count():
  server = _FakeServer()
  logger, scenario = snt.scenarios.MLflowLogger(
      f"http://127.0.0.1:{server.port}"), _Scenario()
  scenario.num_steps = 3
  logger.begin(scenario)
  logger.step_end(scenario, 1, {"loss": 1.0})
  server.stop()
  start = time.monotonic()
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for step in (2, 3):
      logger.step_end(scenario, step, {"loss": float(step)})
    assert logger.unsent == 2
    scenario.step = 3
    logger.end(scenario)
  assert time.monotonic() - start < 5
  assert _lost(caught)[1] == (
      f"MLflowLogger: the tracking server at http://127.0.0.1:{server.port} "
      "did not answer when training ended (Connection refused), so MLflow "
      "run r is not marked ended, and 2 records of steps 2 to 3 were never "
      "sent to it (the run's history.json has them).")
  assert logger.dropped == 2 and server.steps("train/loss") == [(1, 1.0)]


# ---- A population: every member's series. ----


def test_a_population_of_3_logs_3_series_of_eval_accuracy(resumed):
  # Before, only the members' means were logged. (The store of `resumed`:
  # a new SQLite store costs MLflow seconds of migrations.)
  rng = np.random.default_rng(0)
  x = rng.normal(size=(64, 3)).astype(np.float32)
  y = (x[:, 0] > 0).astype(np.int64)
  uri = f"sqlite:///{resumed[0]}/mlflow.db"
  logger = snt.scenarios.MLflowLogger(tracking_uri=uri,
                                      experiment="population")
  scenario = snt.scenarios.Supervised(
      num_steps=6, batch_size=16, log_every=3, eval_every=3, progress=False,
      tensorboard=False, population=3, hooks=[logger])
  history = scenario(
      snt.Linear(2, name="model"), snt.optimizers.SGD(0.5),
      lambda logits, labels: tf.nn.sparse_softmax_cross_entropy_with_logits(
          labels, logits), (x, y), eval_data=(x, y))
  client = tracking.MlflowClient(uri)
  keys = set(client.get_run(logger.run_id).data.metrics)
  assert sorted(k for k in keys if k.startswith("eval/accuracy")) == [
      "eval/accuracy", "eval/accuracy/member_0", "eval/accuracy/member_1",
      "eval/accuracy/member_2"]
  for kind, table in (("eval", history.member_eval),
                      ("train", history.member_train)):
    name = "accuracy" if kind == "eval" else "loss"
    for i in range(3):
      series = sorted((m.step, m.value) for m in client.get_metric_history(
          logger.run_id, f"{kind}/{name}/member_{i}"))
      assert [step for step, _ in series] == table["step"]
      np.testing.assert_allclose([value for _, value in series],
                                 [row[i] for row in table[name]], rtol=1e-6)
  assert len({tuple(row) for row in history.member_eval["accuracy"]} |
             {tuple(row) for row in history.member_train["loss"]}) > 1
