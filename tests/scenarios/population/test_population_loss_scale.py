"""A population under "mixed_float16": each member has its own dynamic
loss scale, and member i is the solo run with seed i (its overflows, its
halvings, its count of finite updates)."""

import numpy as np
import tensorflow as tf

import sonnet_like as snt
from tests.scenarios.population import test_supervised_population

TOLERANCE = 1e-5


class _Weighted(test_supervised_population._Scaled):  # pylint: disable=protected-access
  """Regression whose loss is `weight` times the error (a heavier member's
  scaled gradients overflow sooner) and NaN at step `nan_at`: settings a
  sweep may change."""

  weight, nan_at = 1.0, -1

  def train_step(self, x):
    with tf.GradientTape() as tape:
      error = tf.reduce_mean((self.forward(self.model, x) - x) ** 2)
      loss = tf.where(tf.equal(self.traced_step.step, self.nan_at),
                      float("nan"), self.weight * error)
    grads = self.gradients(tape, loss, self.model.variables)
    self.apply_update(self.optimizer, grads, self.model.variables, loss=loss)
    return {"loss": loss}


def _run(initial_scale, population=None, seed=0, steps=12, save_dir=None,
         **settings):
  """A solo run takes the swept settings as keywords."""
  saved = {name: getattr(_Weighted, name) for name in settings}
  for name, value in settings.items():
    setattr(_Weighted, name, value)
  try:
    scenario = _Weighted(
        num_steps=steps, log_every=1, progress=False, tensorboard=False,
        seed=seed, population=population, on_nonfinite="skip",
        save_dir=save_dir,
        precision=snt.scenarios.Precision("mixed_float16",
                                          initial_scale=initial_scale,
                                          growth_interval=3))
    data = np.random.default_rng(0).normal(size=(64, 5)).astype(np.float32)
    history = scenario(snt.Linear(5, name="denoiser"),
                       snt.optimizers.Adam(0.01), data)
  finally:
    for name, value in saved.items():
      setattr(_Weighted, name, value)
  return scenario, history


_close = test_supervised_population._close  # pylint: disable=protected-access


def test_each_member_overflows_and_halves_its_own_scale():
  weights = [1.0, 3000.0]
  population, history = _run(2.0 ** 20, snt.scenarios.Population(
      [0, 1], weight=weights))
  solos = [_run(2.0 ** 20, seed=i, weight=w) for i, w in enumerate(weights)]
  for i, (solo, solo_history) in enumerate(solos):
    assert _close(population.member(i), solo.model) < TOLERANCE
    assert [s[i] for s in history.member_train["loss_scale"]] == (
        solo_history.train["loss_scale"])
  assert population.loss_scale == [s.loss_scale for s, _ in solos]
  assert population.overflowed_updates == [
      s.overflowed_updates for s, _ in solos]
  # The heavier member overflowed more often, at the other's expense nothing.
  assert population.overflowed_updates[1] > population.overflowed_updates[0]
  assert population.skipped_steps == 0  # Overflows are not non-finite.


def test_a_non_finite_loss_restarts_only_that_members_count():
  # Without overflows (scale 2), the scale doubles every 3 finite updates;
  # member 1's NaN loss at step 7 is skipped and restarts its count.
  population, history = _run(2.0, snt.scenarios.Population(
      [0, 0], nan_at=[-1, 7]))
  for i, nan_at in enumerate([-1, 7]):
    solo, solo_history = _run(2.0, nan_at=nan_at)
    assert [s[i] for s in history.member_train["loss_scale"]] == (
        solo_history.train["loss_scale"])
    assert _close(population.member(i), solo.model) < TOLERANCE
  scales = np.array(history.member_train["loss_scale"])
  assert not np.array_equal(scales[:, 0], scales[:, 1])


def test_a_resumed_population_goes_on_with_each_members_scale(tmp_path,
                                                              capfd):
  grid = snt.scenarios.Population([0, 1], weight=[1.0, 3000.0])
  whole, _ = _run(2.0 ** 20, grid)
  _run(2.0 ** 20, grid, steps=5, save_dir=str(tmp_path))
  capfd.readouterr()
  resumed, _ = _run(2.0 ** 20, grid, save_dir=str(tmp_path))
  assert "at step 5" in "".join(capfd.readouterr())  # It resumed.
  assert resumed.loss_scale == whole.loss_scale
  assert resumed.overflowed_updates == whole.overflowed_updates
  for i in range(2):
    assert _close(resumed.member(i), whole.member(i)) == 0.0
