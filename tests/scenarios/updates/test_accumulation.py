"""accumulate_steps: N micro-batches, one update, equal to one N-times batch."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from tests import optimizer_common

N, BATCH, UPDATES = 4, 8, 6


def _data():
  rng = np.random.default_rng(0)
  x = rng.normal(size=(N * BATCH * 3, 5)).astype(np.float32)
  y = (x @ rng.normal(size=(5,)) > 0).astype(np.int32)
  return x, y


def _loss(logits, labels):
  return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)


OPTIMIZERS = {
    "snt.SGD": lambda: snt.optimizers.SGD(0.3),
    "snt.Adam": lambda: snt.optimizers.Adam(0.01),
    "keras.SGD": lambda: keras.optimizers.SGD(0.3),
    "keras.Adam": lambda: keras.optimizers.Adam(0.01),
}


def _train(make_optimizer, batch_size, num_steps, **settings):
  tf.random.set_seed(0)
  model = snt.nets.MLP([16, 2], name="mlp")
  optimizer = make_optimizer()
  settings.setdefault("log_every", num_steps)
  train = snt.scenarios.Supervised(num_steps, batch_size=batch_size,
                                   shuffle=False, progress=False, **settings)
  train(model, optimizer, _loss, _data())
  return train, model, optimizer


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_n_micro_batches_match_one_n_times_larger_batch(name):
  # Unshuffled data: micro-batches 4k..4k+3 are big batch k. Tolerance: the
  # mean of N means and the mean of one big batch differ in rounding only;
  # after 6 updates the weights agree to 1e-5 (relative) / 1e-6 (absolute).
  # Without accumulation the micro-batch run makes 24 updates and is far off.
  _, small, _ = _train(OPTIMIZERS[name], BATCH, N * UPDATES,
                       accumulate_steps=N)
  _, large, _ = _train(OPTIMIZERS[name], N * BATCH, UPDATES)
  for a, b in zip(small.variables, large.variables):
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


def test_a_step_is_a_micro_batch_and_the_optimizer_counts_updates():
  train, _, optimizer = _train(lambda: keras.optimizers.SGD(0.3), BATCH,
                               10, accumulate_steps=N, log_every=5)
  assert train.step == 10
  assert int(optimizer.iterations) == 10 // N  # Updates after steps 4, 8.
  assert train.history.train["step"] == [5, 10]


def test_the_sums_hold_the_unapplied_micro_batches_and_resume_bitwise(
    tmp_path):
  # Saved after 6 steps: 2 micro-batches summed, not applied. A resumed run
  # that lost them would differ from the uninterrupted one.
  sgd = lambda: snt.optimizers.Adam(0.01)
  _, whole, _ = _train(sgd, BATCH, 12, accumulate_steps=N)
  first, _, _ = _train(sgd, BATCH, 6, accumulate_steps=N,
                       save_dir=str(tmp_path))
  sums = first.traced_step.accumulator.sums
  assert any(np.any(s.numpy() != 0) for s in sums)
  reader = tf.train.load_checkpoint(str(tmp_path))
  assert any(k.startswith("gradient_sums/sums/")
             for k in reader.get_variable_to_shape_map())
  resumed, model, _ = _train(sgd, BATCH, 12, accumulate_steps=N,
                             save_dir=str(tmp_path))
  assert resumed.step == 12
  for a, b in zip(model.variables, whole.variables):
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_clipping_applies_to_the_mean_gradient():
  # clip_norm on the accumulated mean equals clip_norm on the big batch.
  sgd = lambda: snt.optimizers.SGD(0.5)
  _, small, _ = _train(sgd, BATCH, N * 3, accumulate_steps=N, clip_norm=0.01)
  _, large, _ = _train(sgd, N * BATCH, 3, clip_norm=0.01)
  for a, b in zip(small.variables, large.variables):
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("steps_per_call", [1, 3])
def test_a_nan_micro_batch_stops_the_run_before_any_update(steps_per_call):
  x, y = _data()
  x[BATCH + 1] = np.nan  # In the second micro-batch.
  tf.random.set_seed(0)
  model = snt.nets.MLP([16, 2], name="mlp")
  optimizer = keras.optimizers.SGD(0.3)
  train = snt.scenarios.Supervised(8, batch_size=BATCH, shuffle=False,
                                   progress=False, accumulate_steps=N,
                                   steps_per_call=steps_per_call,
                                   nonfinite_check="step")
  with pytest.raises(snt.scenarios.NonFiniteError, match="at step 1"):
    train(model, optimizer, _loss, (x, y))
  assert int(optimizer.iterations) == 0


def test_skip_drops_the_nan_micro_batch_from_the_sum():
  x, y = _data()
  x[1] = np.nan  # The first micro-batch of the first update.
  tf.random.set_seed(0)
  model = snt.nets.MLP([16, 2], name="mlp")
  train = snt.scenarios.Supervised(N, batch_size=BATCH, shuffle=False,
                                   progress=False, accumulate_steps=N,
                                   on_nonfinite="skip")
  train(model, snt.optimizers.SGD(0.3), _loss, (x, y))
  assert train.skipped_steps == 1
  assert all(np.all(np.isfinite(v.numpy())) for v in model.variables)


def test_mixed_float16_accumulates_unscaled_gradients():
  _, small, _ = _train(lambda: snt.optimizers.SGD(0.3), BATCH, N * 3,
                       accumulate_steps=N, precision="mixed_float16")
  _, large, _ = _train(lambda: snt.optimizers.SGD(0.3), N * BATCH, 3,
                       precision="mixed_float16")
  for a, b in zip(small.variables, large.variables):
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-2, atol=1e-3)


def test_mirrored_matches_one_device():
  _, one, _ = _train(lambda: keras.optimizers.Adam(0.01), BATCH, N * 3,
                     accumulate_steps=N)
  # The process's one strategy: a second one's collectives would clash.
  strategy = optimizer_common._mirrored_strategy()  # pylint: disable=protected-access
  with strategy.scope():
    _, two, _ = _train(lambda: keras.optimizers.Adam(0.01), BATCH, N * 3,
                       accumulate_steps=N, strategy=strategy)
  for a, b in zip(one.variables, two.variables):
    np.testing.assert_allclose(
        a.numpy(), strategy.experimental_local_results(b)[0].numpy(),
        rtol=1e-5, atol=1e-6)


def test_a_scenario_with_several_updates_per_step_is_refused():
  gan = snt.scenarios.GAN(4, batch_size=8, latent_size=2, progress=False,
                          accumulate_steps=2)
  data = np.zeros((32, 2), np.float32)
  with pytest.raises(ValueError, match=r"^GAN: accumulate_steps=2 needs one "
                     r"update per step, but a GAN step makes 2"):
    gan(snt.nets.MLP([4, 2]), snt.nets.MLP([4, 1]), snt.optimizers.SGD(0.1),
        snt.optimizers.SGD(0.1), data)


def test_off_policy_scenarios_refuse_it():
  with pytest.raises(ValueError, match=r"^DQN: accumulate_steps must be 1, "
                     r"got 2"):
    snt.scenarios.DQN(num_env_steps=100, accumulate_steps=2)


def test_bad_value_is_named():
  with pytest.raises(ValueError, match=r"^Supervised: accumulate_steps must "
                     r"be a positive int, got 0"):
    snt.scenarios.Supervised(10, accumulate_steps=0)


def test_a_user_scenario_accumulates_without_extra_code():
  class Regress(snt.scenarios.Scenario):
    def __call__(self, model, optimizer, data):
      self.model, self.optimizer = model, optimizer
      self.feed(data, batch_size=BATCH, shuffle=False)
      return self.run()

    def models(self):
      return {"model": self.model}

    def trackables(self):
      return {"model": self.model, "optimizer": self.optimizer}

    def build(self):
      self.model(self.example_batch()[0])
      self.build_optimizer(self.optimizer, self.model.trainable_variables)

    def train_step(self, batch):
      x, y = batch
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean((self.forward(self.model, x)[:, 0] - y) ** 2)
      grads = self.gradients(tape, loss, self.model.trainable_variables)
      self.apply_update(self.optimizer, grads,
                        self.model.trainable_variables, loss=loss)
      return {"loss": loss}

  x, y = _data()
  y = y.astype(np.float32)
  results = []
  for batch, steps, accumulate in ((BATCH, N * 3, N), (N * BATCH, 3, 1)):
    tf.random.set_seed(0)
    model = snt.Linear(1)
    run = Regress(steps, progress=False, accumulate_steps=accumulate)
    data = tf.data.Dataset.from_tensor_slices((x, y)).batch(batch)
    run(model, snt.optimizers.SGD(0.1), data)
    results.append([v.numpy() for v in model.variables])
  for a, b in zip(*results):
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_under_xla_too():
  sgd = lambda: snt.optimizers.SGD(0.3)
  _, small, _ = _train(sgd, BATCH, N * 3, accumulate_steps=N,
                       jit_compile=True, steps_per_call=2)
  _, large, _ = _train(sgd, N * BATCH, 3)
  for a, b in zip(small.variables, large.variables):
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-5, atol=1e-6)


def test_reinforce_accumulates_rollouts():
  # One update per step (rollout): 6 rollouts with accumulate_steps=3 make
  # 2 updates, each from the mean gradient of 3 rollouts.
  tf.random.set_seed(0)
  optimizer = keras.optimizers.Adam(0.01)
  reinforce = snt.scenarios.REINFORCE(num_env_steps=6 * 4 * 5, num_envs=4,
                                      rollout_length=5, progress=False,
                                      accumulate_steps=3)
  reinforce(snt.nets.MLP([8, 2], name="policy"),
            snt.nets.MLP([8, 1], name="baseline"), optimizer,
            snt.envs.Guess(4, seed=5))
  assert reinforce.step == 6
  assert int(optimizer.iterations) == 2
