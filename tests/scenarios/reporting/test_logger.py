"""Logger: the one base of the loggers (when it writes, and to whom)."""

import pytest

from sonnet_like.scenarios.reporting import logger as logger_lib


class _Scenario:
  is_chief, step, num_steps, log_every = True, 0, 5, 2


class _Recorder(logger_lib.Logger):

  def __init__(self, **kwargs):
    super().__init__(**kwargs)
    self.calls = []

  def open(self, scenario):
    self.calls.append(("open", scenario.step))

  def write(self, kind, step, values):
    self.calls.append((kind, step, values))

  def close(self, scenario):
    self.calls.append(("close",))


def test_writes_log_steps_the_last_step_and_evaluations_then_closes():
  recorder, scenario = _Recorder(log_every=3), _Scenario()
  recorder.begin(scenario)
  for step in range(1, 6):
    recorder.step_end(scenario, step, {"loss": float(step)})
  recorder.eval_end(scenario, 5, {"accuracy": 1.0})
  recorder.end(scenario)
  recorder.end(scenario)  # Closed once.
  assert recorder.calls == [("open", 0), ("train", 3, {"loss": 3.0}),
                            ("train", 5, {"loss": 5.0}),
                            ("eval", 5, {"accuracy": 1.0}), ("close",)]


def test_workers_neither_open_nor_write():
  recorder, scenario = _Recorder(), _Scenario()
  scenario.is_chief = False
  recorder.begin(scenario)
  recorder.step_end(scenario, 2, {"loss": 1.0})
  recorder.end(scenario)
  assert not recorder.calls


def test_a_logger_without_write_and_a_bad_log_every_are_named():
  with pytest.raises(NotImplementedError, match=r"^Empty: a Logger must "
                     r"override write\(kind, step, values\)\.$"):
    type("Empty", (logger_lib.Logger,), {})().step_end(_Scenario(), 2, {})
  with pytest.raises(ValueError, match=r"^_Recorder: log_every must be a "
                     r"positive int or None, got 0\.$"):
    _Recorder(log_every=0)
