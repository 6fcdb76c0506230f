"""Hook base class and EarlyStopping."""

import numpy as np
import pytest
import tensorflow as tf

from sonnet_like.scenarios import hooks


class _FakeScenario:

  def __init__(self):
    self.w = tf.Variable(0.0)
    self.reason = None

  def model_variables(self):
    return [self.w]

  def request_stop(self, reason):
    self.reason = reason


def test_base_hook_methods_are_no_ops():
  hook, scenario = hooks.Hook(), _FakeScenario()
  assert hook.begin(scenario) is None
  assert hook.step_end(scenario, 1, {}) is None
  assert hook.eval_end(scenario, 1, {}) is None
  assert hook.end(scenario) is None


def test_early_stopping_stops_and_restores_the_best_weights():
  scenario = _FakeScenario()
  hook = hooks.EarlyStopping(monitor="accuracy", patience=1)
  assert hook.mode == "max"
  for step, (w, accuracy) in enumerate([(1.0, 0.5), (2.0, 0.9), (3.0, 0.8),
                                        (4.0, 0.85)], start=1):
    scenario.w.assign(w)
    hook.eval_end(scenario, step * 10, {"accuracy": accuracy})
    assert (scenario.reason is None) == (step < 4)
  assert "accuracy has not improved for 2 evaluations" in scenario.reason
  assert "best 0.9 at step 20" in scenario.reason
  hook.end(scenario)
  assert scenario.w.numpy() == 2.0
  assert hook.best == 0.9 and hook.best_step == 20


def test_early_stopping_min_delta_and_min_mode():
  scenario = _FakeScenario()
  hook = hooks.EarlyStopping(patience=0, min_delta=0.1, restore_best=False)
  assert hook.mode == "min"
  hook.eval_end(scenario, 1, {"loss": 1.0})
  hook.eval_end(scenario, 2, {"loss": 0.95})  # Within min_delta.
  assert scenario.reason is not None
  scenario.w.assign(7.0)
  hook.end(scenario)
  assert scenario.w.numpy() == 7.0


@pytest.mark.parametrize("kwargs, match", [
    (dict(mode="up"), "mode must be 'min' or 'max', got 'up'"),
    (dict(patience=-1), "patience must be a non-negative int, got -1"),
])
def test_early_stopping_errors(kwargs, match):
  with pytest.raises(ValueError, match="EarlyStopping: " + match):
    hooks.EarlyStopping(**kwargs)


def test_early_stopping_unknown_metric():
  hook = hooks.EarlyStopping(monitor="f1")
  with pytest.raises(KeyError, match=r"available: \['loss'\]"):
    hook.eval_end(_FakeScenario(), 1, {"loss": np.float32(1.0)})
