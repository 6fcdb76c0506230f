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

  def request_stop(self, reason, final=False):
    self.reason, self.final = reason, final


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
  assert scenario.final  # Running the command again says it is done.
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


class _Crash(hooks.Hook):
  """Raises after `at` steps, like a process killed between checkpoints."""

  def __init__(self, at):
    self.at = at

  def step_end(self, scenario, step, logs):
    if step == self.at:
      raise RuntimeError("crash")


def _early_stopping_run(save_dir, crash_at=None):
  import sonnet_like as snt  # pylint: disable=g-import-not-at-top
  rng = np.random.default_rng(0)
  x = rng.normal(size=(64, 3)).astype(np.float32)
  y = (x[:, 0] > 0).astype(np.int32)
  tf.random.set_seed(0)
  model = snt.Linear(2, name="model")
  # mode="max" on a falling loss: the first evaluation stays the best, so
  # the hook waits, stops, and restores weights from long before.
  stopper = hooks.EarlyStopping(monitor="loss", mode="max", patience=4)
  extra = [stopper] + ([_Crash(crash_at)] if crash_at else [])
  train = snt.scenarios.Supervised(
      num_steps=60, batch_size=16, eval_every=5, save_every=5,
      save_dir=str(save_dir), progress=False, tensorboard=False, hooks=extra)
  loss = lambda logits, labels: tf.nn.sparse_softmax_cross_entropy_with_logits(
      labels, logits)
  history = train(model, snt.optimizers.SGD(0.5), loss, (x, y),
                  eval_data=(x, y))
  return model, stopper, history


def test_early_stopping_state_survives_a_restart(tmp_path):
  model, stopper, history = _early_stopping_run(tmp_path / "whole")
  assert history.stop_reason.startswith("early stopping")
  assert stopper.best_step == 5

  with pytest.raises(RuntimeError, match="crash"):
    _early_stopping_run(tmp_path / "cut", crash_at=20)  # Saved at 15.
  resumed, resumed_stopper, resumed_history = _early_stopping_run(
      tmp_path / "cut")
  assert resumed_stopper.best_step == 5
  assert resumed_stopper.best == stopper.best
  assert resumed_history.stop_reason == history.stop_reason
  for a, b in zip(model.variables, resumed.variables):
    np.testing.assert_array_equal(a.numpy(), b.numpy())


_EVENTS = (r"a Hook's events are state\(scenario\), begin\(scenario\), "
           r"step_end\(scenario, step, logs\), eval_end\(scenario, step, "
           r"metrics\), end\(scenario\); ")


@pytest.mark.parametrize("name, meant", [
    ("on_step_end", "step_end"), ("on_epoch_end", "step_end"),
    ("on_train_batch_end", "step_end"), ("after_step", "step_end"),
    ("on_train_begin", "begin"), ("on_test_end", "eval_end"),
    ("train_end", "end")])
def test_a_method_named_after_another_librarys_event_is_refused(name, meant):
  # Before, the class was made and the run trained to its end with the
  # method never called.
  with pytest.raises(TypeError, match=(
      rf"^Hook subclass Misnamed defines {name}, named like a hook event, "
      rf"but no scenario calls it: {_EVENTS}rename it to the event meant "
      rf"\({name} -> {meant}\), or start its name with _ if it is a helper "
      r"of your own\.$")):
    type("Misnamed", (hooks.Hook,), {name: lambda self, *args: None})


def test_every_misnamed_method_is_named_with_those_of_a_mixin():
  class Mixin:

    def before_step(self, scenario):
      pass

  with pytest.raises(TypeError, match=(
      r"^Hook subclass Both defines on_step_end, before_step, named like a "
      r"hook event, but no scenario calls them: .* rename them to the event "
      r"meant \(on_step_end -> step_end\), or start their names with _ if "
      r"they are helpers of your own\.$")):

    class Both(Mixin, hooks.Hook):  # pylint: disable=unused-variable

      def on_step_end(self, step, logs=None):
        pass


def test_our_events_private_helpers_and_flags_are_not_refused():
  class Fine(hooks.Hook):
    on_gpu = True  # Not a method.

    def begin(self, scenario):
      self._on_step_end(scenario)

    def step_end(self, scenario, step, logs):
      pass

    def _on_step_end(self, scenario):
      pass

    def send(self):  # Public, but not named like an event.
      pass

  Fine().begin(_FakeScenario())
  import sonnet_like as snt  # pylint: disable=g-import-not-at-top
  for hook in (snt.scenarios.EarlyStopping, snt.scenarios.CSVLogger,
               snt.scenarios.History, snt.scenarios.ProgressBar):
    assert not hooks._unknown_events(hook)  # pylint: disable=protected-access
