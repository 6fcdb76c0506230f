"""Hooks: code that runs at fixed points of a scenario's loop.

A hook overrides any of `begin`, `step_end`, `eval_end` and `end`. The
engine calls `step_end` after every compiled call (which may cover several
steps), `eval_end` after each evaluation and before that call's `step_end`.
A hook stops training with `scenario.request_stop(reason)`.
"""

from typing import Any

import numpy as np


class Hook:
  """Base class: every method is a no-op."""

  def begin(self, scenario: Any) -> None:
    """Called once before the first step (after any restore)."""

  def step_end(self, scenario: Any, step: int, logs: dict[str, float]) -> None:
    """Called after each compiled call; `step` counts the steps done."""

  def eval_end(self, scenario: Any, step: int,
               metrics: dict[str, float]) -> None:
    """Called after each evaluation with its metrics."""

  def end(self, scenario: Any) -> None:
    """Called once when training stops, whatever the reason."""


class EarlyStopping(Hook):
  """Stops when an eval metric has not improved for `patience` evaluations.

  Args:
    monitor: Name of the eval metric, e.g. "loss" or "accuracy".
    mode: "min" or "max"; by default "max" for names containing "acc",
      otherwise "min".
    patience: How many evaluations without improvement to allow.
    min_delta: The smallest change that counts as an improvement.
    restore_best: At the end, put back the model weights of the best
      evaluation.
  """

  def __init__(self, monitor: str = "loss", mode: str | None = None,
               patience: int = 3, min_delta: float = 0.0,
               restore_best: bool = True):
    if mode is None:
      mode = "max" if "acc" in monitor else "min"
    if mode not in ("min", "max"):
      raise ValueError(f"EarlyStopping: mode must be 'min' or 'max', got "
                       f"{mode!r}.")
    if not isinstance(patience, int) or patience < 0:
      raise ValueError(f"EarlyStopping: patience must be a non-negative int, "
                       f"got {patience!r}.")
    self.monitor, self.mode, self.patience = monitor, mode, patience
    self.min_delta, self.restore_best = min_delta, restore_best
    self.best: float | None = None
    self.best_step: int | None = None
    self._best_values: list[np.ndarray] | None = None
    self._waited = 0

  def _improved(self, value: float) -> bool:
    if self.best is None:
      return True
    if self.mode == "min":
      return value < self.best - self.min_delta
    return value > self.best + self.min_delta

  def eval_end(self, scenario, step, metrics):
    if self.monitor not in metrics:
      raise KeyError(f"EarlyStopping: monitor {self.monitor!r} is not an eval "
                     f"metric; available: {sorted(metrics)}.")
    value = metrics[self.monitor]
    if self._improved(value):
      self.best, self.best_step, self._waited = value, step, 0
      if self.restore_best:
        self._best_values = [v.numpy() for v in scenario.model_variables()]
      return
    self._waited += 1
    if self._waited > self.patience:
      scenario.request_stop(
          f"early stopping: {self.monitor} has not improved for "
          f"{self._waited} evaluations (best {self.best:.4g} at step "
          f"{self.best_step})")

  def end(self, scenario):
    if self.restore_best and self._best_values is not None:
      for variable, value in zip(scenario.model_variables(),
                                 self._best_values):
        variable.assign(value)
