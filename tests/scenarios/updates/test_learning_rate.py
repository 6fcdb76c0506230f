"""learning_rate_schedule: every optimizer takes it, it is logged, and a
resumed run continues the curve exactly."""

import glob
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.scenarios import schedules

OPTIMIZERS = {
    "snt.SGD": lambda: snt.optimizers.SGD(0.4),
    "snt.Adam": lambda: snt.optimizers.Adam(0.4),
    "snt.Momentum": lambda: snt.optimizers.Momentum(0.4, 0.9),
    "snt.RMSProp": lambda: snt.optimizers.RMSProp(0.4),
    "keras.SGD": lambda: keras.optimizers.SGD(0.4),
    "keras.Adam": lambda: keras.optimizers.Adam(0.4),
}


def _data():
  rng = np.random.default_rng(0)
  x = rng.normal(size=(64, 3)).astype(np.float32)
  return x, (x.sum(axis=1) > 0).astype(np.int32)


def _loss(logits, labels):
  return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)


def _train(optimizer, num_steps=10, **settings):
  tf.random.set_seed(0)
  model = snt.Linear(2, name="linear")
  train = snt.scenarios.Supervised(num_steps, batch_size=16, progress=False,
                                   **settings)
  train(model, optimizer, _loss, _data())
  return train, model


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_every_optimizer_takes_the_schedule(name):
  # A zero factor: no weight moves, whatever the optimizer's own rate.
  train, model = _train(OPTIMIZERS[name](),
                        learning_rate_schedule=schedules.ConstantSchedule(0.0),
                        log_every=5)
  tf.random.set_seed(0)
  fresh = snt.Linear(2, name="linear")
  fresh(tf.zeros([1, 3]))
  for variable, expected in zip(model.variables, fresh.variables):
    np.testing.assert_array_equal(variable.numpy(), expected.numpy())
  assert train.history.train["learning_rate"] == [0.0, 0.0]


@pytest.mark.parametrize("name", ["snt.SGD", "keras.Adam"])
def test_the_logged_rate_is_the_base_times_the_schedule(name):
  schedule = schedules.warmup_cosine(warmup_steps=4, decay_steps=6)
  train, _ = _train(OPTIMIZERS[name](), learning_rate_schedule=schedule,
                    log_every=3, steps_per_call=3, num_steps=9)
  # The rate of the last step of each logged call: steps 2, 5 and 8.
  expected = [0.4 * float(schedule(t)) for t in (2, 5, 8)]
  np.testing.assert_allclose(train.history.train["learning_rate"], expected,
                             rtol=1e-6)


def test_a_resumed_run_continues_the_curve_exactly(tmp_path):
  schedule = schedules.warmup_linear(warmup_steps=3, decay_steps=8)
  whole, whole_model = _train(keras.optimizers.Adam(0.4), log_every=1,
                              learning_rate_schedule=schedule)
  _train(keras.optimizers.Adam(0.4), num_steps=4, log_every=1,
         learning_rate_schedule=schedule, save_dir=str(tmp_path))
  resumed, model = _train(keras.optimizers.Adam(0.4), log_every=1,
                          learning_rate_schedule=schedule,
                          save_dir=str(tmp_path))
  assert resumed.history.train["step"] == list(range(1, 11))
  assert (resumed.history.train["learning_rate"] ==
          whole.history.train["learning_rate"])
  for a, b in zip(model.variables, whole_model.variables):
    np.testing.assert_array_equal(a.numpy(), b.numpy())
  events = glob.glob(os.path.join(str(tmp_path), "logs", "train",
                                  "events.out.tfevents.*"))
  tags = {value.tag for path in events
          for event in tf.compat.v1.train.summary_iterator(path)
          for value in event.summary.value}
  assert "learning_rate" in tags


def test_with_accumulation_the_update_uses_the_rate_of_its_last_step():
  # One update after steps 0-3, at the factor of step 3: 1.5 * 3 / 9 = 0.5.
  # So it equals one SGD(0.2) step on the 4 micro-batches as one batch.
  schedule = schedules.LinearSchedule(0.0, 1.5, steps=9)
  _, model = _train(snt.optimizers.SGD(0.4), num_steps=4, accumulate_steps=4,
                    shuffle=False, learning_rate_schedule=schedule)
  tf.random.set_seed(0)
  reference = snt.Linear(2, name="linear")
  snt.scenarios.Supervised(1, batch_size=64, shuffle=False, progress=False)(
      reference, snt.optimizers.SGD(0.2), _loss, _data())
  for a, b in zip(model.variables, reference.variables):
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-7)


def test_several_optimizers_are_logged_by_name():
  gan = snt.scenarios.GAN(
      4, batch_size=8, latent_size=2, progress=False, log_every=2,
      learning_rate_schedule=schedules.ConstantSchedule(0.5))
  history = gan(snt.nets.MLP([4, 2]), snt.nets.MLP([4, 1]),
                snt.optimizers.SGD(0.1), keras.optimizers.SGD(0.2),
                np.zeros((32, 2), np.float32))
  np.testing.assert_allclose(history.train["learning_rate_g_optimizer"],
                             [0.05, 0.05])
  np.testing.assert_allclose(history.train["learning_rate_d_optimizer"],
                             [0.1, 0.1])


def test_bad_values_are_refused_with_the_scenarios_name():
  with pytest.raises(TypeError, match=r"^Supervised: learning_rate_schedule "
                     r"must be a snt.scenarios.schedules.Schedule"):
    snt.scenarios.Supervised(4, learning_rate_schedule="cosine")
  own = keras.optimizers.SGD(keras.optimizers.schedules.ExponentialDecay(
      0.1, 10, 0.5))
  with pytest.raises(ValueError, match=r"^Supervised: learning_rate_schedule "
                     r"needs an optimizer whose learning rate can be set"):
    _train(own, learning_rate_schedule=schedules.ConstantSchedule(1.0))
