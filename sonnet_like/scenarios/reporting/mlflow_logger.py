"""`MLflowLogger`: the train logs and eval metrics of a run in MLflow.

Metrics are named "train/<log>" and "eval/<metric>" and carry the
scenario's step. By default the store is a SQLite file in the run's folder
(`save_dir/mlflow.db`; view it with `mlflow ui --backend-store-uri
sqlite:///<save_dir>/mlflow.db`); `tracking_uri` sends them elsewhere (a
tracking server, Databricks, another database).

A run killed and started again continues the same MLflow run: its id is
kept in `save_dir/logs/mlflow_run.json` (`restart=True` moves `logs/`
aside, so a restarted run gets a new MLflow run). MLflow cannot delete a
metric's points, so the steps the killed process logged after its last
checkpoint are kept and not logged again when the resumed run trains them
a second time (with exact resume they have the same values, all but
"steps_per_second"): each step is logged once, none is missing.

mlflow is an optional dependency (the `mlflow` extra), imported when a
logger is made, never when sonnet_like is imported.
"""

import json
import os
import sys
import time
from typing import Any

from sonnet_like.core import files
from sonnet_like.scenarios.reporting import logger

NO_MLFLOW_ERROR = (
    "MLflowLogger needs the mlflow package, which is not installed. Install "
    "it with the mlflow extra (`pip install sonnet_like[mlflow]`) or `pip "
    "install mlflow`.")

NO_STORE_ERROR = (
    "MLflowLogger: {why}, so there is no default store (a SQLite file in "
    "the run's folder). Pass tracking_uri=... (e.g. "
    "'sqlite:////tmp/mlflow.db' or a tracking server's http:// address){or_}.")

RUN_FILE = "mlflow_run.json"  # In save_dir/logs: the MLflow run's id.


def _imported() -> Any:
  try:
    from mlflow import tracking  # pylint: disable=g-import-not-at-top
  except ImportError as error:
    raise ImportError(NO_MLFLOW_ERROR) from error
  return tracking


class MLflowLogger(logger.Logger):
  """Logs train logs and eval metrics to an MLflow run, resumed with the run.

  Args:
    tracking_uri: Where MLflow stores the run; default a SQLite file in the
      scenario's `save_dir` (`sqlite:///<save_dir>/mlflow.db`).
    experiment: The MLflow experiment's name (created when missing).
    run_name: The MLflow run's name; default the `save_dir` folder's name.
    params: Parameters to record once, when the MLflow run is created.
    log_every: Write the train logs every this many steps; default the
      scenario's `log_every`.

  Attributes:
    run_id: The MLflow run's id, once the training has begun.

  Raises:
    ImportError: mlflow is not installed (naming the `mlflow` extra).
  """

  def __init__(self, tracking_uri: str | None = None,
               experiment: str = "sonnet_like", run_name: str | None = None,
               params: dict[str, Any] | None = None,
               log_every: int | None = None):
    super().__init__(log_every)
    self._tracking = _imported()
    self.tracking_uri, self.experiment = tracking_uri, experiment
    self.run_name, self.params = run_name, dict(params or {})
    self.run_id: str | None = None
    self._client: Any = None
    self._logged: dict[str, int] = {}  # Each metric's last logged step.

  def _store(self, save_dir: str | None) -> str:
    if self.tracking_uri:
      return self.tracking_uri
    if not save_dir:
      raise ValueError(NO_STORE_ERROR.format(
          why="the scenario has no save_dir", or_=", or give the scenario "
          "a save_dir"))
    if not files.is_local(files.normalized(save_dir)):
      raise ValueError(NO_STORE_ERROR.format(
          why=f"save_dir {save_dir} is not a local folder (SQLite needs "
          "one)", or_=""))
    files.makedirs(save_dir)
    path = os.path.abspath(files.normalized(save_dir))
    return f"sqlite:///{os.path.join(path, 'mlflow.db')}"

  def open(self, scenario):
    save_dir = scenario.save_dir
    uri = self._store(save_dir)
    self._client = self._tracking.MlflowClient(tracking_uri=uri)
    record = files.join(save_dir, "logs", RUN_FILE) if save_dir else None
    if record and files.exists(record):
      saved = json.loads(files.read_text(record))
      if saved.get("tracking_uri") == uri and self._resume(saved["run_id"]):
        return
    experiment = self._client.get_experiment_by_name(self.experiment)
    experiment_id = (experiment.experiment_id if experiment else
                     self._client.create_experiment(self.experiment))
    name = self.run_name or (os.path.basename(
        files.normalized(save_dir).rstrip("/")) if save_dir else None)
    run = self._client.create_run(experiment_id, run_name=name, tags={
        "sonnet_like.scenario": type(scenario).__name__,
        "sonnet_like.save_dir": str(save_dir)})
    self.run_id, self._logged = run.info.run_id, {}
    if record:
      files.makedirs(files.parent(record))
      files.write_atomic(record, json.dumps(
          {"tracking_uri": uri, "run_id": self.run_id}))
    for key, value in self.params.items():
      self._client.log_param(self.run_id, key, value)

  def _resume(self, run_id: str) -> bool:
    """Continues MLflow run `run_id`; False if the store does not have it."""
    try:
      run = self._client.get_run(run_id)
    except Exception:  # MlflowException: deleted, or another store.  # pylint: disable=broad-except
      return False
    self.run_id = run_id
    self._logged = {
        key: max(m.step for m in self._client.get_metric_history(run_id, key))
        for key in run.data.metrics}
    self._client.update_run(run_id, status="RUNNING")
    return True

  def write(self, kind, step, values):
    from mlflow import entities  # pylint: disable=g-import-not-at-top
    now = int(time.time() * 1000)
    metrics = [entities.Metric(f"{kind}/{name}", float(value), now, step)
               for name, value in values.items()
               if step > self._logged.get(f"{kind}/{name}", -1)]
    if metrics:
      self._client.log_batch(self.run_id, metrics=metrics)
      for metric in metrics:
        self._logged[metric.key] = step

  def close(self, scenario):
    if sys.exc_info()[0] is not None:  # Ended by an error.
      status = "FAILED"
    elif scenario.step < scenario.num_steps and (
        scenario.history is not None and scenario.history.stop_reason):
      status = "KILLED"  # Stopped by a signal: to be resumed.
    else:
      status = "FINISHED"
    self._client.set_terminated(self.run_id, status)
