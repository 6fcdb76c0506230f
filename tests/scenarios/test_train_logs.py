"""What a user expects in the training logs (issue 30): the training
metrics given for evaluation, and steps per second."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.scenarios.reporting import logs as logs_lib

_RNG = np.random.default_rng(0)
X = _RNG.normal(size=(256, 6)).astype("float32")
Y = (X[:, 0] > 0).astype("int64")


def test_supervised_logs_accuracy_and_metric_functions_on_training_batches():
  tf.random.set_seed(0)
  stateful = keras.metrics.SparseCategoricalAccuracy()  # Eval only.
  scenario = snt.scenarios.Supervised(num_steps=40, batch_size=32,
                                      eval_every=40, log_every=1,
                                      progress=False)
  three = lambda outputs, targets: 3.0 * tf.ones_like(outputs[:, 0])
  positives = lambda outputs, targets: tf.cast(targets, tf.float32)
  history = scenario(snt.Linear(2), keras.optimizers.Adam(0.01),
                     keras.losses.SparseCategoricalCrossentropy(
                         from_logits=True), (X, Y), eval_data=(X, Y),
                     metrics={"three": three, "positives": positives,
                              "sca": stateful})
  train = history.train
  assert {"loss", "accuracy", "three", "positives",
          "steps_per_second"} <= set(train)
  assert "sca" not in train and "sca" in history.eval
  assert train["three"] == [3.0] * 40  # Batch means of the function.
  shares = np.array(train["positives"]) * 32  # Whole counts of a batch.
  np.testing.assert_allclose(shares, np.round(shares), atol=1e-5)
  assert len(set(train["positives"])) > 1
  assert np.mean(train["accuracy"][:5]) + 0.1 < np.mean(train["accuracy"][-5:])


def test_steps_per_second_are_logged_by_every_scenario():
  tf.random.set_seed(0)
  scenario = snt.scenarios.Supervised(num_steps=20, batch_size=32,
                                      log_every=10, progress=False)
  history = scenario(snt.Linear(1), snt.optimizers.SGD(0.1), "mse",
                     (X, X[:, :1]))
  rates = history.train["steps_per_second"]
  assert len(rates) == 2 and all(r > 0 and np.isfinite(r) for r in rates)


def test_step_rate_counts_from_the_previous_log_step(monkeypatch):
  clock = iter([0.0, 2.0, 3.0, 4.0])
  monkeypatch.setattr(logs_lib.time, "perf_counter", lambda: next(clock))
  rate = logs_lib.StepRate(step=100, log_every=10)  # Resumed at step 100.
  seen = []
  for step in (105, 110, 115):
    logs = logs_lib.Logs({})
    rate.add_to(logs, step)
    seen.append(logs["steps_per_second"])
  # 5 steps in 2 s; 10 steps in 3 s (still from step 100); then 5 in 1 s.
  assert seen == pytest.approx([2.5, 10 / 3, 5.0])


def test_the_learning_rate_is_logged_without_a_schedule_setting():
  # A Keras optimizer's own schedule, read at its iterations, and a snt
  # optimizer's constant rate.
  decay = keras.optimizers.schedules.ExponentialDecay(0.1, decay_steps=10,
                                                      decay_rate=0.5)
  for optimizer, expected in (
      (keras.optimizers.SGD(decay), [0.1 * 0.5 ** (s / 10) for s in (9, 19)]),
      (snt.optimizers.SGD(0.05), [0.05, 0.05])):
    tf.random.set_seed(0)
    scenario = snt.scenarios.Supervised(num_steps=20, batch_size=32,
                                        log_every=10, progress=False)
    history = scenario(snt.Linear(1), optimizer, "mse", (X, X[:, :1]))
    # Logged with the step's update: the rate that update used.
    np.testing.assert_allclose(history.train["learning_rate"], expected,
                               rtol=1e-5)
