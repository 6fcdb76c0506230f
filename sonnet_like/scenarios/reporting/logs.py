"""A compiled call's logs, as hooks read them, and the steps per second.

`Logs` turns the call's tensors into Python floats only when a hook reads
them (most calls end between log steps). `StepRate` adds
"steps_per_second": training steps per second of wall time since the
previous log step (so it includes the time spent in hooks, evaluations and
saves, as a user's clock does, and the first interval includes tracing).
The progress bar shows this same rate.
"""

import collections.abc
import time
from typing import Any

import tensorflow as tf


class Logs(collections.abc.Mapping):
  """A call's logs, turned into Python floats only when a hook reads them.

  In a population the values are the means over the members still
  training; `members()` gives every member's values (lists by name).
  """

  def __init__(self, tensors: dict[str, tf.Tensor],
               members: dict[str, tf.Tensor] | None = None):
    self._tensors, self._floats = tensors, {}
    self._members = members
    self.extra: dict[str, Any] = {}

  def members(self) -> dict[str, list[float]] | None:
    """Every member's logs by name (None outside a population)."""
    if self._members is None:
      return None
    return {name: [float(v) for v in value.numpy()]
            for name, value in self._members.items()}

  def __getitem__(self, key: str) -> float:
    if key not in self._floats:
      if key in self.extra:
        self._floats[key] = self.extra[key]()
      else:
        self._floats[key] = float(self._tensors[key])
    return self._floats[key]

  def __iter__(self):
    yield from self._tensors
    yield from self.extra

  def __len__(self) -> int:
    return len(self._tensors) + len(self.extra)

  def __repr__(self) -> str:
    return repr(dict(self))


class MemberMetrics(dict):
  """A population's evaluation: the means over the members still training
  (the dict, what hooks read) and every member's values (`members`).

  Args:
    members: Each metric's values, one per member.
    alive: Whether each member still trains.
  """

  def __init__(self, members: dict[str, list[float]], alive: Any):
    alive = [bool(a) for a in alive]
    super().__init__({
        name: (sum(v for v, a in zip(values, alive) if a) / sum(alive)
               if any(alive) else float("nan"))
        for name, values in members.items()})
    self.members = members


def members_of(values: Any) -> dict[str, list[float]] | None:
  """Every member's values of a call's `Logs` or a `MemberMetrics`
  evaluation, by name; None outside a population."""
  if isinstance(values, Logs):
    return values.members()
  return getattr(values, "members", None)


def every_series(values: Any) -> dict[str, float]:
  """`values` as a flat dict: the members' means as given, and in a
  population each member's own as "<name>/member_<i>" (what the loggers
  write: TensorBoard tags, CSV columns, MLflow keys)."""
  flat = dict(values)
  for name, each in (members_of(values) or {}).items():
    for member, value in enumerate(each):
      flat[f"{name}/member_{member}"] = float(value)
  return flat


class StepRate:
  """Training steps per second, measured from one log step to the next.

  Args:
    step: The step the loop starts at.
    log_every: The run's log interval: the clock restarts at its multiples.
  """

  def __init__(self, step: int, log_every: int):
    self.log_every = log_every
    self._start = (step, time.perf_counter())

  def add_to(self, logs: Logs, step: int) -> None:
    """Adds "steps_per_second" up to `step` (the end of a call) to `logs`."""
    now = time.perf_counter()
    start_step, start_time = self._start
    rate = (step - start_step) / max(now - start_time, 1e-9)
    logs.extra["steps_per_second"] = lambda: rate
    if step % self.log_every == 0:
      self._start = (step, now)
