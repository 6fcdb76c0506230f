"""`MLflowLogger`: the train logs and eval metrics of a run in MLflow.

Metrics are named "train/<log>" and "eval/<metric>" and carry the
scenario's step. In a population those are the means over the members
still training, and every member's own series is logged beside them, one
metric key per member (as `Logger` gives them): "eval/accuracy/member_0",
"eval/accuracy/member_1", ... (member i is `scenario.member(i)`; the
values are `history.member_train` and `history.member_eval`'s). By default
the store is a SQLite file in the run's folder (`save_dir/mlflow.db`; view
it with `mlflow ui --backend-store-uri sqlite:///<save_dir>/mlflow.db`);
`tracking_uri` sends them elsewhere (a tracking server, Databricks,
another database).

The store is checked before the first step, so a wrong one costs seconds,
not a run: a scheme MLflow has no store for (`sqllite://`), a file store
(`./mlruns`, `file://...`: MLflow 3 refuses them), a SQLite file that
cannot be written, or a server that does not answer within
`PROBE_SECONDS` is one error naming the URI and a store that works.

A server that stops answering in the middle of a run does not stop the
training: the logger warns once, keeps the records it could not send, and
sends them, in order, at the first write after the server answers again
(it tries again every `RETRY_SECONDS`; at most `KEEP_LIMIT` records are
kept, the oldest dropped beyond that). If the server still does not answer
when training ends, the logger warns with the number of records it never
sent (the run's `history.json` has them). Its writes are made with no
MLflow retries and a `WRITE_TIMEOUT_SECONDS` timeout (MLflow's
`MLFLOW_HTTP_REQUEST_*` variables, set only around its calls and only when
the user has not set them), so a lost server costs a step at most that.

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

import contextlib
import difflib
import importlib.metadata
import json
import os
import ssl
import sys
import time
from typing import Any, Iterator
import urllib.error
import urllib.parse
import urllib.request
import warnings

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

BAD_URI_ERROR = (
    "MLflowLogger cannot use tracking_uri {uri!r}: {why}; {fix}pass a store "
    "that works, e.g. tracking_uri='sqlite:///runs/x/mlflow.db' (a SQLite "
    "file, no server needed) or the http:// address of a tracking server "
    "that answers.")

SERVER_LOST_WARNING = (
    "MLflowLogger: the tracking server at {uri} stopped answering at step "
    "{step} ({reason}); training goes on, and the logger keeps what it "
    "cannot send and sends it when the server answers again (it tries every "
    "{every:g} s).")

UNSENT_WARNING = (
    "MLflowLogger: the tracking server at {uri} did not answer when "
    "training ended ({reason}), so MLflow run {run_id} is not marked "
    "ended{unsent}.")

RUN_FILE = "mlflow_run.json"  # In save_dir/logs: the MLflow run's id.

PROBE_SECONDS = 3.0  # How long a server has to answer before the run.
WRITE_TIMEOUT_SECONDS = 10  # An MLflow request's timeout while training.
RETRY_SECONDS = 30.0  # After a failed write, how long until the next try.
RETRY_PROBE_SECONDS = 1.0  # Then, how long the server has to answer.
KEEP_LIMIT = 100_000  # Records kept while the server does not answer.
BATCH_LIMIT = 1000  # MLflow's most metrics in one log_batch.

# The schemes MLflow keeps runs in (plugins add theirs through the
# "mlflow.tracking_store" entry points); "" and "file" are file stores.
_DATABASES = ("sqlite", "postgresql", "mysql", "mssql")
_SERVERS = ("http", "https")
_HOSTED = ("databricks", "databricks-uc", "uc")
_DATABASE_PORTS = {"postgresql": 5432, "mysql": 3306, "mssql": 1433}


def _imported() -> Any:
  try:
    from mlflow import tracking  # pylint: disable=g-import-not-at-top
  except ImportError as error:
    raise ImportError(NO_MLFLOW_ERROR) from error
  return tracking


def _mlflow_major() -> int:
  from mlflow import version  # pylint: disable=g-import-not-at-top
  return int(version.VERSION.split(".")[0])


def _plugin_schemes() -> set[str]:
  return {entry.name for entry in
          importlib.metadata.entry_points(group="mlflow.tracking_store")}


def _scheme(uri: str) -> str:
  """The store's kind: "sqlite" for "sqlite+pysqlite://", "" for a path
  (a Windows drive letter is a path too)."""
  scheme = urllib.parse.urlsplit(uri).scheme.lower()
  return "" if len(scheme) == 1 else scheme.split("+")[0]


def _sqlite_path(uri: str) -> str | None:
  """The file of a sqlite URI; None in memory."""
  if "://" not in uri:
    return None
  rest = uri.split("://", 1)[1].split("?", 1)[0]
  path = rest[1:] if rest.startswith("/") else rest
  return None if path in ("", ":memory:") else path


def _file_store_path(uri: str) -> str:
  if _scheme(uri) == "file":
    return urllib.request.url2pathname(urllib.parse.urlsplit(uri).path)
  return uri


def _check_scheme(uri: str) -> None:
  """Raises `BAD_URI_ERROR` when MLflow cannot keep runs at `uri`'s kind
  of store (no I/O: a typo, or a file store under MLflow 3)."""
  scheme = _scheme(uri)
  if scheme in ("", "file"):
    if _mlflow_major() < 3:
      return
    folder = _file_store_path(uri).rstrip("/\\") or "."
    example = f"sqlite:///{os.path.join(folder, 'mlflow.db')}"
    raise ValueError(BAD_URI_ERROR.format(
        uri=uri, why="it is a file store, which MLflow 3 refuses (it keeps "
        "runs in a database or a tracking server)",
        fix=f"write tracking_uri='{example}' to keep them beside it, or "))
  known = (*_DATABASES, *_SERVERS, *_HOSTED)
  if scheme in known or scheme in _plugin_schemes():
    return
  close = difflib.get_close_matches(scheme, known, n=1)
  fix = (f"write tracking_uri='{close[0]}{uri[uri.index(':'):]}' if that "
         "was meant, or ") if close else ""
  raise ValueError(BAD_URI_ERROR.format(
      uri=uri, why=f"MLflow keeps runs in no store of scheme {scheme!r} "
      f"(it has {', '.join(known)})", fix=fix))


def _check_writable(uri: str) -> None:
  """Makes the folders of a SQLite file and opens it (SQLite takes an empty
  file as a new database), so a path it cannot write is named now."""
  path = _sqlite_path(uri)
  if path is None:
    return
  try:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "ab"):
      pass
  except OSError as error:
    raise ValueError(BAD_URI_ERROR.format(
        uri=uri, why=f"its SQLite file {path} cannot be written "
        f"({type(error).__name__}: {error.strerror or error})",
        fix="")) from None


def _not_answering(uri: str, seconds: float) -> str | None:
  """Why the server of `uri` does not answer within `seconds`, or None
  when it answers (with any HTTP status) or is not one we can reach."""
  parts = urllib.parse.urlsplit(uri)
  scheme = _scheme(uri)
  if scheme in _SERVERS:
    request = urllib.request.Request(uri.rstrip("/") + "/health",
                                     method="GET")
    try:
      with urllib.request.urlopen(request, timeout=seconds):
        return None
    except urllib.error.HTTPError:
      return None  # It answered (401, 404, ...): MLflow will say more.
    except urllib.error.URLError as error:
      if isinstance(error.reason, ssl.SSLError):
        return None  # It answered; TLS settings are MLflow's to judge.
      return _reason(error.reason, seconds)
    except OSError as error:  # A timeout while reading the answer.
      return _reason(error, seconds)
  if scheme in _DATABASE_PORTS and parts.hostname:
    import socket  # pylint: disable=g-import-not-at-top
    port = parts.port or _DATABASE_PORTS[scheme]
    try:
      with socket.create_connection((parts.hostname, port), timeout=seconds):
        return None
    except OSError as error:
      return _reason(error, seconds)
  return None


def _reason(error: Any, seconds: float) -> str:
  if isinstance(error, TimeoutError) or "timed out" in str(error):
    return f"no answer within {seconds:g} s"
  if isinstance(error, OSError) and error.strerror:
    return error.strerror
  return str(error)


@contextlib.contextmanager
def _impatient() -> Iterator[None]:
  """MLflow's HTTP requests without retries and with a short timeout,
  unless the user chose those settings."""
  wanted = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0",
            "MLFLOW_HTTP_REQUEST_TIMEOUT": str(WRITE_TIMEOUT_SECONDS)}
  added = [name for name in wanted if name not in os.environ]
  os.environ.update({name: wanted[name] for name in added})
  try:
    yield
  finally:
    for name in added:
      os.environ.pop(name, None)


class MLflowLogger(logger.Logger):
  """Logs train logs and eval metrics to an MLflow run, resumed with the run.

  In a population, every member's series as well, under
  "<kind>/<name>/member_<i>" (see the module's docstring). A server that
  stops answering during training does not stop it: the records are kept
  and sent when it answers again.

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
    unsent: How many records wait for the server to answer again.
    dropped: How many records were dropped (beyond `KEEP_LIMIT`, or
      unsent when training ended).

  Raises:
    ImportError: mlflow is not installed (naming the `mlflow` extra).
    ValueError: `tracking_uri` is of a kind MLflow has no store for, or
      (before the first step) cannot be written or does not answer.
  """

  def __init__(self, tracking_uri: str | None = None,
               experiment: str = "sonnet_like", run_name: str | None = None,
               params: dict[str, Any] | None = None,
               log_every: int | None = None):
    super().__init__(log_every)
    self._tracking = _imported()
    if tracking_uri is not None and not isinstance(tracking_uri, str):
      raise TypeError("MLflowLogger: tracking_uri must be a string or None, "
                      f"got {tracking_uri!r}.")
    if tracking_uri:
      _check_scheme(tracking_uri)
    self.tracking_uri, self.experiment = tracking_uri, experiment
    self.run_name, self.params = run_name, dict(params or {})
    self.run_id: str | None = None
    self.dropped = 0
    self._uri: str | None = None
    self._client: Any = None
    self._logged: dict[str, int] = {}  # Each metric's last logged step.
    self._unsent: list[Any] = []
    self._lost: str | None = None  # Why the server stopped answering.
    self._next_try = 0.0

  @property
  def unsent(self) -> int:
    """How many records wait for the server to answer again."""
    return len(self._unsent)

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
    uri = self._uri = self._store(save_dir)
    if _scheme(uri) == "sqlite":
      _check_writable(uri)
    why = _not_answering(uri, PROBE_SECONDS)
    if why is not None:
      raise ValueError(BAD_URI_ERROR.format(
          uri=uri, why=f"no server answers there ({why})",
          fix="start it first, or "))
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
    for metric in metrics:
      self._logged[metric.key] = step
    self._unsent += metrics
    if len(self._unsent) > KEEP_LIMIT:
      self.dropped += len(self._unsent) - KEEP_LIMIT
      del self._unsent[:len(self._unsent) - KEEP_LIMIT]
    if self._lost is not None:  # Try again only when it answers.
      if time.monotonic() < self._next_try:
        return
      if _not_answering(self._uri, RETRY_PROBE_SECONDS) is not None:
        self._next_try = time.monotonic() + RETRY_SECONDS
        return
    self._send(step)

  def _send(self, step: int) -> bool:
    """Sends the unsent records in order; False if the server does not
    answer (then they stay, and the first loss is said once)."""
    try:
      with _impatient():
        while self._unsent:
          self._client.log_batch(self.run_id,
                                 metrics=self._unsent[:BATCH_LIMIT])
          del self._unsent[:BATCH_LIMIT]
    except Exception:  # MlflowException, requests' errors.  # pylint: disable=broad-except
      why = self._lost_because()
      if self._lost is None:
        warnings.warn(SERVER_LOST_WARNING.format(
            uri=self._uri, step=step, reason=why, every=RETRY_SECONDS),
                      RuntimeWarning, stacklevel=4)
      self._lost = why
      self._next_try = time.monotonic() + RETRY_SECONDS
      return False
    self._lost = None
    return True

  def _lost_because(self) -> str:
    """Why the server does not answer; re-raises the error being handled
    if it does (then the error is not a lost server's)."""
    why = _not_answering(self._uri, PROBE_SECONDS)
    if why is None:
      raise  # pylint: disable=misplaced-bare-raise
    return why

  def close(self, scenario):
    if sys.exc_info()[0] is not None:  # Ended by an error.
      status = "FAILED"
    elif scenario.step < scenario.num_steps and (
        scenario.history is not None and scenario.history.stop_reason):
      status = "KILLED"  # Stopped by a signal: to be resumed.
    else:
      status = "FINISHED"
    if not self._unsent or self._send(scenario.step):
      try:
        with _impatient():
          self._client.set_terminated(self.run_id, status)
        return
      except Exception:  # pylint: disable=broad-except
        self._lost = self._lost_because()
    steps = [metric.step for metric in self._unsent]
    warnings.warn(UNSENT_WARNING.format(
        uri=self._uri, reason=self._lost, run_id=self.run_id,
        unsent=f", and {len(steps)} records of steps {min(steps)} to "
        f"{max(steps)} were never sent to it (the run's history.json has "
        "them)" if steps else ""), RuntimeWarning, stacklevel=3)
    self.dropped += len(steps)
    self._unsent = []
