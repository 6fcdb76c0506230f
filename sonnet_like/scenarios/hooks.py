"""Hooks: code that runs at fixed points of a scenario's loop.

A hook overrides any of `begin`, `step_end`, `eval_end` and `end`. The
engine calls `step_end` after every compiled call (which may cover several
steps), `eval_end` after each evaluation and before that call's `step_end`.
A hook stops training with `scenario.request_stop(reason, final=...)`. A
hook whose state decides the rest of the run returns it from
`state(scenario)`, and the engine checkpoints it with everything else.

A subclass that defines a public method named like another library's event
(`on_step_end`, `on_epoch_end`, `after_step`, `train_end`, ...) is refused
when the class is defined: no scenario would ever call it.
"""

from typing import Any

import numpy as np
import tensorflow as tf

from sonnet_like.scenarios import best as best_lib

# The events a scenario calls, with their signatures.
EVENTS = {
    "state": "state(scenario)",
    "begin": "begin(scenario)",
    "step_end": "step_end(scenario, step, logs)",
    "eval_end": "eval_end(scenario, step, metrics)",
    "end": "end(scenario)",
}

UNKNOWN_EVENT_ERROR = (
    "Hook subclass {owner} defines {names}, named like a hook event, but "
    "no scenario calls {them}: a Hook's events are {events}; rename {them} "
    "to the event meant{suggestions}, or start {their} with _ if "
    "{it_is} of your own.")

# Names of another library's events (Keras' `on_epoch_end`, ignite's
# `after_step`, a hand-made `train_end`): a hook defining one meant an event.
_EVENT_PREFIXES = ("on_", "after_", "before_")
_EVENT_SUFFIXES = ("_begin", "_end", "_start", "_started", "_ended")

# For the message: which of our events a foreign name most likely meant.
_MEANT = (({"eval", "evaluate", "evaluation", "validation", "valid", "val",
            "test"}, "eval_end"),
          ({"begin", "start", "started"}, "begin"),
          ({"step", "batch", "epoch", "iteration", "iter"}, "step_end"),
          ({"end", "ended", "finish", "train", "fit"}, "end"))


def _looks_like_an_event(name: str) -> bool:
  return name not in EVENTS and not name.startswith("_") and (
      name.startswith(_EVENT_PREFIXES) or name.endswith(_EVENT_SUFFIXES))


def _meant(name: str) -> str | None:
  words = set(name.split("_"))
  if words & {"batch", "step", "epoch", "iteration"} and (
      words & {"begin", "start", "before"}):
    return None  # Before each step: there is no such event.
  return next((event for keys, event in _MEANT if words & keys), None)


def _unknown_events(cls: type) -> list[str]:
  """The public methods of `cls` (and of its mixins) named like an event."""
  names = []
  for klass in cls.__mro__:
    if klass in (Hook, object):
      continue
    for name, value in vars(klass).items():
      if (name not in names and _looks_like_an_event(name) and
          (callable(value) or isinstance(value, (staticmethod, classmethod)))):
        names.append(name)
  return names


class Hook:
  """Base class: every method is a no-op.

  A subclass overrides the events it needs, as named here:
  `state(scenario)`, `begin(scenario)`, `step_end(scenario, step, logs)`,
  `eval_end(scenario, step, metrics)` and `end(scenario)`.

  Raises:
    TypeError: when a subclass is defined with a public method named like
      another library's event (`on_step_end`, `after_step`, `train_end`),
      which no scenario would call.
  """

  def __init_subclass__(cls, **kwargs: Any):
    super().__init_subclass__(**kwargs)
    names = _unknown_events(cls)
    if names:
      meant = [f"{name} -> {_meant(name)}" for name in names if _meant(name)]
      one = len(names) == 1
      raise TypeError(UNKNOWN_EVENT_ERROR.format(
          owner=cls.__name__, names=", ".join(names),
          them="it" if one else "them",
          their="its name" if one else "their names",
          it_is="it is a helper" if one else "they are helpers",
          events=", ".join(EVENTS.values()),
          suggestions=f" ({', '.join(meant)})" if meant else ""))

  def state(self, scenario: Any) -> tf.Module | None:
    """What to checkpoint for this hook, or None (called before restore)."""
    del scenario
    return None

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
      evaluation (refused for a population: use `keep_best=`).
  """

  def __init__(self, monitor: str = "loss", mode: str | None = None,
               patience: int = 3, min_delta: float = 0.0,
               restore_best: bool = True):
    self._best = best_lib.Best("EarlyStopping", "monitor", monitor, mode,
                               min_delta)
    if not isinstance(patience, int) or patience < 0:
      raise ValueError(f"EarlyStopping: patience must be a non-negative int, "
                       f"got {patience!r}.")
    self.monitor, self.mode, self.patience = monitor, self._best.mode, patience
    self.min_delta, self.restore_best = min_delta, restore_best
    self._best_values: list[np.ndarray] | None = None
    self._waited = 0
    self._state: tf.Module | None = None

  def state(self, scenario):
    """Best value and step, evaluations waited and best weights, as variables.

    Without them a resumed run would forget how long it has waited and which
    weights were best.
    """
    state = tf.Module(name="early_stopping")
    state.best = tf.Variable(np.nan, dtype=tf.float64, trainable=False)
    state.best_step = tf.Variable(-1, dtype=tf.int64, trainable=False)
    state.waited = tf.Variable(0, dtype=tf.int64, trainable=False)
    state.weights = [tf.Variable(tf.zeros(v.shape, v.dtype), trainable=False)
                     for v in scenario.model_variables()
                     ] if self.restore_best else []
    self._state = state
    return state

  def begin(self, scenario):
    if self.restore_best and getattr(scenario, "population", None):
      raise ValueError(
          f"EarlyStopping: restore_best=True keeps one model's best weights, "
          f"but {type(scenario).__name__} trains a population, whose members "
          "each have their own: pass keep_best=<metric> to the scenario for "
          "each member's best, and restore_best=False to stop the whole "
          "population on the members' mean.")
    state = self._state
    if state is None or state.best_step.numpy() < 0:
      return
    self._best.value = float(state.best.numpy())
    self._best.step = int(state.best_step.numpy())
    self._waited = int(state.waited.numpy())
    if self.restore_best:
      self._best_values = [w.numpy() for w in state.weights]

  def _save_state(self) -> None:
    state = self._state
    if state is None:
      return
    state.best.assign(self.best)
    state.best_step.assign(self.best_step)
    state.waited.assign(self._waited)
    if self.restore_best:
      for variable, value in zip(state.weights, self._best_values):
        variable.assign(value)

  @property
  def best(self) -> float | None:
    """The best value of `monitor` so far (`best.Best`, shared with
    `keep_best`)."""
    return self._best.value

  @property
  def best_step(self) -> int | None:
    """The step of the best evaluation so far."""
    return self._best.step

  def eval_end(self, scenario, step, metrics):
    if self._best.update(metrics, step):
      self._waited = 0
      if self.restore_best:
        self._best_values = [v.numpy() for v in scenario.model_variables()]
      self._save_state()
      return
    self._waited += 1
    self._save_state()
    if self._waited > self.patience:
      scenario.request_stop(
          f"early stopping: {self.monitor} has not improved for "
          f"{self._waited} evaluations (best {self.best:.4g} at step "
          f"{self.best_step})", final=True)

  def end(self, scenario):
    if self.restore_best and self._best_values is not None:
      for variable, value in zip(scenario.model_variables(),
                                 self._best_values):
        variable.assign(value)
