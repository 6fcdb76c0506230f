"""`Logger`: the one base of every place a run's numbers are sent to.

A logger is a hook that receives, on the chief only, the train logs every
`log_every` steps (and at the last step) and the metrics of every
evaluation. A new one (TensorBoard, a CSV file and MLflow are built in)
overrides three methods:

    >>> class Printer(Logger):
    ...   def write(self, kind, step, values):
    ...     print(kind, step, {k: round(v, 2) for k, v in values.items()})
    >>> class _Run:  # What a scenario gives a hook; a real one in use.
    ...   is_chief, step, num_steps, log_every = True, 0, 4, 2
    >>> printer, run = Printer(), _Run()
    >>> printer.begin(run)
    >>> for step in (1, 2, 3, 4):
    ...   printer.step_end(run, step, {"loss": 1 / step})
    train 2 {'loss': 0.5}
    train 4 {'loss': 0.25}

In a population `values` hold the means over the members still training
and each member's own as "<name>/member_<i>" (`logs.every_series`): one
TensorBoard tag, CSV column or MLflow key per member.

`open` is called before the first step, when `scenario.step` is the step
the run starts from (after a resume, the restored step: a logger whose
store outlives a killed process can drop or skip what was logged after it,
see `CSVLogger` and `MLflowLogger`); `close` once when training stops,
whatever the reason.
"""

from typing import Any

from sonnet_like.scenarios import hooks
from sonnet_like.scenarios.reporting import logs as logs_lib


class Logger(hooks.Hook):
  """Base of the loggers: override `write`, and `open` / `close` if needed.

  Args:
    log_every: Write the train logs every this many steps; default the
      scenario's `log_every`. Eval metrics are written at every evaluation.
  """

  def __init__(self, log_every: int | None = None):
    if log_every is not None and (not isinstance(log_every, int) or
                                  isinstance(log_every, bool) or
                                  log_every < 1):
      raise ValueError(f"{type(self).__name__}: log_every must be a "
                       f"positive int or None, got {log_every!r}.")
    self.log_every = log_every
    self._is_open = False

  # ---- What a logger overrides. ----

  def open(self, scenario: Any) -> None:
    """Called on the chief before the first write; `scenario.step` is the
    step the run starts from (0, or the restored step)."""

  def write(self, kind: str, step: int, values: dict[str, float]) -> None:
    """Sends `values` of `step`; `kind` is "train" or "eval"."""
    raise NotImplementedError(
        f"{type(self).__name__}: a Logger must override write(kind, step, "
        "values).")

  def close(self, scenario: Any) -> None:
    """Called once when training stops (normally, by a signal or an
    error), if `open` was."""

  # ---- The hook: when to write. ----

  def _opened(self, scenario: Any) -> "Logger":
    if not self._is_open:
      self.open(scenario)
      self._is_open = True
    return self

  def begin(self, scenario):
    if scenario.is_chief:
      self._opened(scenario)

  def step_end(self, scenario, step, logs):
    every = self.log_every or scenario.log_every
    if scenario.is_chief and (step % every == 0 or
                              step == scenario.num_steps):
      self._opened(scenario).write("train", step,
                                   logs_lib.every_series(logs))

  def eval_end(self, scenario, step, metrics):
    if scenario.is_chief:
      self._opened(scenario).write("eval", step,
                                   logs_lib.every_series(metrics))

  def end(self, scenario):
    if self._is_open:
      self._is_open = False
      self.close(scenario)
