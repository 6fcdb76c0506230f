"""Hooks in a population's run: they read members with `member(i)`; the
scenario's modules hold no member's values between steps and say so."""

import numpy as np
import pytest

import sonnet_like as snt
from tests.scenarios.population import test_supervised_population as base


class _Peek(snt.scenarios.Hook):
  """Reads `scenario.model` (the template) after every call."""

  def step_end(self, scenario, step, logs):
    scenario.model.variables[0].numpy()


class _Members(snt.scenarios.Hook):
  """Keeps every member's first kernel after every call."""

  def __init__(self):
    self.seen = []

  def step_end(self, scenario, step, logs):
    self.seen.append([scenario.member(i).variables[0].numpy()
                      for i in range(scenario.population.size)])


def test_a_hook_reading_the_scenarios_model_is_told_to_use_member():
  # Before, it read zeros: the template holds no member's weights.
  with pytest.raises(ValueError, match=r"^Supervised: mlp/.* was read "
                     r"during a population's run, outside its compiled "
                     r"step\..*scenario\.member\(i\)"):
    base._train(population=2, hooks=[_Peek()])  # pylint: disable=W0212


def test_a_hook_reads_each_member_with_member():
  hook = _Members()
  population, _, _ = base._train(population=[0, 1], hooks=[hook])  # pylint: disable=W0212
  assert len(hook.seen) == base.STEPS
  for i in range(2):
    np.testing.assert_array_equal(hook.seen[-1][i],
                                  population.member(i).variables[0].numpy())
  assert not np.array_equal(hook.seen[0][0], hook.seen[-1][0])  # Trained.


def test_early_stopping_stops_the_population_on_the_members_mean():
  x, y = base._data(128)  # pylint: disable=W0212
  with pytest.raises(ValueError, match="^EarlyStopping: restore_best=True "
                     ".*keep_best=<metric>"):
    base._train(population=2, eval_data=(x, y), steps=20,  # pylint: disable=W0212
                hooks=[snt.scenarios.EarlyStopping("loss")])
  stopping = snt.scenarios.EarlyStopping("loss", mode="max", patience=0,
                                         restore_best=False)
  scenario = snt.scenarios.Supervised(
      num_steps=40, batch_size=16, eval_every=5, progress=False,
      tensorboard=False, population=2, hooks=[stopping])
  history = scenario(snt.nets.MLP([8, 2]), snt.optimizers.Adam(0.01),
                     base._loss, (x, y), eval_data=(x, y))  # pylint: disable=W0212
  # The mean loss falls, so "max" never improves after the first: stopped
  # at the second evaluation.
  assert scenario.step == 10 and stopping.best_step == 5
  assert history.eval["loss"][0] == pytest.approx(
      np.mean(history.member_eval["loss"][0]))
