"""`Best`: the one notion of "the best evaluation so far" of a run.

`EarlyStopping` (how long since the best) and `keep_best` (the best
checkpoint kept aside, `run_folder/keep_best.py`) both judge an evaluation with it:
an eval metric, a mode ("min" or "max"; by default the metric's
direction, `default_mode`) and a `min_delta`, the smallest change that
counts as an improvement.

    >>> best = Best("EarlyStopping", "monitor", "accuracy")
    >>> best.mode, best.update({"accuracy": 0.5}, step=10)
    ('max', True)
    >>> best.update({"accuracy": 0.4}, step=20), best.value, best.step
    (False, 0.5, 10)
"""

import math
from typing import Mapping

MODES = ("min", "max")


class MetricNotFoundError(KeyError):
  """The metric to judge by is not among an evaluation's metrics."""

  def __str__(self) -> str:  # KeyError's own would quote the message.
    return str(self.args[0])


# Parts of a metric's name that say which way is better.
HIGHER_IS_BETTER = ("acc", "return", "reward", "score", "auc", "precision",
                    "recall", "f1", "iou", "coverage", "modes", "quality")
LOWER_IS_BETTER = ("loss", "error", "mse", "mae", "nll", "perplexity", "fid",
                   "regret", "distance")
# A spread is neither (the spread of returns).
NEITHER = ("std", "var")

NO_DIRECTION_ERROR = (
    "{owner}: {argument}={metric!r} does not say whether higher or lower is "
    "better; pass {mode_argument}='max' or 'min'. (Names containing "
    "{higher} are higher-is-better; {lower}, lower-is-better.)")


def default_mode(metric: str) -> str | None:
  """The metric's direction from its name: "max" where it contains one of
  `HIGHER_IS_BETTER` (accuracy, return, reward, score, ...), "min" where
  one of `LOWER_IS_BETTER` (loss, error, ...); None where its name says
  neither, both, or names a spread ("return_std")."""
  name = metric.lower()
  higher = any(part in name for part in HIGHER_IS_BETTER)
  lower = any(part in name for part in LOWER_IS_BETTER)
  if higher == lower or any(part in name for part in NEITHER):
    return None
  return "max" if higher else "min"


class Best:
  """The best value of one eval metric so far, and the step it was seen at.

  Args:
    owner: Who judges (a hook's or a scenario's name), for errors.
    argument: The argument naming the metric ("monitor", "keep_best").
    metric: The eval metric's name.
    mode: "min" or "max"; None: `default_mode(metric)` (a name that says
      neither is refused).
    min_delta: The smallest change that counts as an improvement.
    mode_argument: The argument naming the mode, for errors.
  """

  def __init__(self, owner: str, argument: str, metric: str,
               mode: str | None = None, min_delta: float = 0.0,
               mode_argument: str = "mode"):
    if not isinstance(metric, str) or not metric:
      raise ValueError(f"{owner}: {argument} must be the name of an eval "
                       f"metric, got {metric!r}.")
    if mode is None:
      mode = default_mode(metric)
      if mode is None:
        raise ValueError(NO_DIRECTION_ERROR.format(
            owner=owner, argument=argument, metric=metric,
            mode_argument=mode_argument,
            higher=", ".join(repr(p) for p in HIGHER_IS_BETTER),
            lower=", ".join(repr(p) for p in LOWER_IS_BETTER)))
    if mode not in MODES:
      raise ValueError(f"{owner}: {mode_argument} must be 'min' or 'max', "
                       f"got {mode!r}.")
    self.owner, self.argument = owner, argument
    self.metric, self.mode, self.min_delta = metric, mode, min_delta
    self.value: float | None = None
    self.step: int | None = None

  def value_of(self, metrics: Mapping[str, float]) -> float:
    """The metric's value in `metrics`, or an error listing the metrics."""
    if self.metric not in metrics:
      raise MetricNotFoundError(
          f"{self.owner}: {self.argument} {self.metric!r} is not an eval "
          f"metric; available: {sorted(metrics)}.")
    return float(metrics[self.metric])

  def improves(self, value: float) -> bool:
    """Whether `value` beats the best so far by more than `min_delta`.

    A NaN never does, and a best that is NaN (or none yet) is beaten by any
    other value.
    """
    if math.isnan(value):
      return False
    if self.value is None or math.isnan(self.value):
      return True
    if self.mode == "min":
      return value < self.value - self.min_delta
    return value > self.value + self.min_delta

  def update(self, metrics: Mapping[str, float], step: int) -> bool:
    """Takes an evaluation's `metrics`; whether it is the new best."""
    value = self.value_of(metrics)
    if not self.improves(value):
      return False
    self.value, self.step = value, step
    return True
