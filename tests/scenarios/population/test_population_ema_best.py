"""`ema` and `keep_best` per member of a population: each member averages
its own weights (as the solo run of its seed does) and keeps its weights
at its own best evaluation."""

import json
import os

import numpy as np
import tensorflow as tf

import sonnet_like as snt
from tests.scenarios.population import test_supervised_population

TOLERANCE = 1e-5  # Member i against the solo run with seed i (float32).
PEAKS = {0: 4, 1: 2, 2: 6}  # Seed -> the step of its best evaluation.
BONUS = {0: 0.0, 1: 2.0, 2: 1.0}  # Seed 1 has the best kept score.


def _data(rows=128):
  rng = np.random.default_rng(0)
  x = rng.normal(size=(rows, 5)).astype(np.float32)
  return x, (x[:, 0] + x[:, 1] > 0).astype(np.int64)


def _loss(logits, labels):
  return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)


def _supervised(**settings):
  scenario = snt.scenarios.Supervised(
      num_steps=12, batch_size=16, log_every=4, eval_every=12,
      progress=False, tensorboard=False, ema=0.8, **settings)
  scenario(snt.nets.MLP([8, 2], name="mlp"), snt.optimizers.Adam(0.01),
           _loss, _data(), eval_data=_data())
  return scenario


def _values(module):
  return [v.numpy() for v in module.variables]


def _gap(a, b):
  return max(float(np.max(np.abs(x - y))) for x, y in zip(a, b))


def test_each_members_average_is_its_solo_runs_and_is_what_it_serves(
    tmp_path):
  population = _supervised(population=[3, 5],
                           export_dir=str(tmp_path / "export"))
  x = _data(4)[0]
  # What each member's own export serves (a classifier's outputs and
  # classes), stacked.
  served = tf.saved_model.load(str(tmp_path / "export"))(x)["outputs"]
  for i, seed in enumerate([3, 5]):
    solo = _supervised(seed=seed)
    with solo.ema_weights():
      averaged = _values(solo.model)
    with population.ema_weights():
      assert _gap(_values(population.member(i)), averaged) < TOLERANCE
      np.testing.assert_allclose(served[i], population.member(i)(x),
                                 rtol=1e-5, atol=1e-6)
    assert _gap(_values(population.member(i)), averaged) > 1e-3  # Raw.
    # Evaluation uses the averages, in the run and after it.
    assert abs(population.history.member_eval["loss"][-1][i] -
               solo.history.eval["loss"][-1]) < TOLERANCE
    after = population.evaluate(population.member(i), _data(), _loss)
    assert abs(after["loss"] - solo.evaluate(solo.model, _data(), _loss)[
        "loss"]) < TOLERANCE


_Scaled = test_supervised_population._Scaled  # pylint: disable=protected-access


class _Peaked(_Scaled):
  """Regression whose evaluation peaks at the step `PEAKS[seed]`; a member
  whose step reaches `nan_at` gets a NaN loss (a swept setting)."""

  nan_at = 10**9

  def train_step(self, x):
    bad = tf.where(self.traced_step.step >= self.nan_at, np.nan, 0.0)
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean((self.model(x) - x) ** 2) + bad
    self.optimizer.apply(tape.gradient(loss, self.model.variables),
                         self.model.variables)
    return {"loss": loss}

  def evaluate_now(self):
    return {"score": BONUS[self.seed] - abs(self.step - PEAKS[self.seed])}

  def export(self, directory):
    return snt.export.save_module(self.model, directory, tf.zeros([1, 5]))


class _Seen(snt.scenarios.Hook):
  """Every member's weights (at evaluations) and averages (every step)."""

  def __init__(self):
    self.weights, self.averages, self.alive = {}, {}, {}

  def eval_end(self, scenario, step, metrics):
    self.weights[step] = [_values(scenario.member(i)) for i in range(3)]

  def step_end(self, scenario, step, logs):
    average = scenario.ema_of("model")
    self.averages[step] = [a.numpy() for a in average.averages]
    self.alive[step] = scenario.members.alive.numpy().tolist()


def _peaked(steps=6, **settings):
  seen = _Seen()
  scenario = _Peaked(num_steps=steps, eval_every=2, progress=False,
                     tensorboard=False, hooks=[seen], ema=0.5, **settings)
  scenario(snt.Linear(5, name="linear"), snt.optimizers.SGD(0.1),
           _data(64)[0])
  return scenario, seen


def test_a_stopped_members_average_stays():
  grid = snt.scenarios.Population([0, 1, 2], nan_at=[99, 3, 99])
  scenario, seen = _peaked(population=grid)
  assert scenario.members.alive.numpy().tolist() == [True, False, True]
  died = min(s for s, alive in seen.alive.items() if not alive[1])
  before, after = seen.averages[died - 1], seen.averages[max(seen.averages)]
  for a, b in zip(before, after):
    np.testing.assert_array_equal(a[1], b[1])  # Member 1's: unchanged.
  assert any(np.abs(a[0] - b[0]).max() > 1e-4  # The others' move on.
             for a, b in zip(before, after))
  weights = scenario.member(1).trainable_variables
  assert any(np.abs(w.numpy() - a[1]).max() > 1e-4  # An unmasked update
             for w, a in zip(weights, after))  # would have moved it.


def test_each_member_keeps_its_weights_at_its_own_best(tmp_path):
  folder = str(tmp_path / "run")
  scenario, seen = _peaked(population=3, keep_best="score",
                           best_mode="max", save_dir=folder,
                           export_dir=str(tmp_path / "export"))
  with open(os.path.join(folder, "best", "best.json")) as f:
    record = json.load(f)
  assert record["steps"] == [PEAKS[i] for i in range(3)]
  final = [_values(scenario.member(i)) for i in range(3)]
  x = _data(4)[0]
  served = tf.saved_model.load(str(tmp_path / "export"))(x)
  with scenario.kept_best():
    for i in range(3):
      member = scenario.member(i)
      assert _gap(_values(member), seen.weights[PEAKS[i]][i]) == 0.0
      with scenario.ema_weights():  # The export: averages at the best.
        np.testing.assert_allclose(served[i], member(x), rtol=1e-6)
    assert scenario.best("score") is scenario.member(1)  # Kept values.
  assert _gap(_values(scenario.member(1)), seen.weights[PEAKS[1]][1]) > 1e-3
  for i in range(3):  # Afterwards, the final weights again.
    assert _gap(_values(scenario.member(i)), final[i]) == 0.0


def test_resume_keeps_the_averages_and_each_members_best_bitwise(tmp_path):
  settings = dict(population=3, keep_best="score", best_mode="max")
  whole, _ = _peaked(save_dir=str(tmp_path / "whole"), **settings)
  folder = str(tmp_path / "resumed")
  _peaked(steps=4, save_dir=folder, **settings)
  resumed, _ = _peaked(save_dir=folder, **settings)
  average, again = whole.ema_of("model"), resumed.ema_of("model")
  for a, b in zip(average.averages, again.averages):
    np.testing.assert_array_equal(a.numpy(), b.numpy())
  with whole.kept_best() as best, resumed.kept_best() as best_again:
    assert best_again["steps"] == best["steps"] == [4, 2, 6]
    for a, b in zip(whole.members.stacked, resumed.members.stacked):
      np.testing.assert_array_equal(a.numpy(), b.numpy())
