"""Populations on two replicas (two logical CPUs): every replica trains
every member on its share of the member's batch, and member i equals
member i of the same population on one device."""

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from tests.scenarios import test_distribute_scenario


def _mirrored():
  # The file's cached strategy: one MirroredStrategy per test process.
  return test_distribute_scenario._mirrored()  # pylint: disable=W0212


def _data(rows=128):
  rng = np.random.default_rng(0)
  x = rng.normal(size=(rows, 5)).astype(np.float32)
  y = (x[:, 0] + x[:, 1] > 0).astype(np.int64)
  return x, y


def _loss(logits, labels):
  return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)


def _supervised(population, strategy=None, learning_rate=0.3, **settings):
  scenario = snt.scenarios.Supervised(
      num_steps=6, batch_size=16, steps_per_call=2, log_every=2,
      progress=False, tensorboard=False, population=population,
      strategy=strategy, **settings)
  # Plain SGD: a gradient summed twice, or not at all, shows (Adam would
  # mostly hide a factor).
  scenario(snt.nets.MLP([8, 2], name="mlp"), snt.optimizers.SGD(
      learning_rate), _loss, _data())
  return scenario


def _gan(strategy=None):
  gan = snt.scenarios.GAN(num_steps=4, batch_size=16, latent_size=2,
                          n_critic=2, loss="wasserstein",
                          gradient_penalty=1.0, progress=False,
                          tensorboard=False, population=[0, 1],
                          strategy=strategy)
  rng = np.random.default_rng(0)
  reals = rng.normal(0, 0.5, (64, 2)).astype(np.float32)
  gan(snt.nets.MLP([8, 2], name="generator"),
      snt.nets.MLP([8, 1], name="discriminator"), snt.optimizers.SGD(0.1),
      snt.optimizers.SGD(0.1), reals)
  return gan


def _assert_members_equal(one, two, names=(None,)):
  """Member i of `two` (on both replicas) equals member i of `one`."""
  strategy = _mirrored()
  for i in range(one.population.size):
    for name in names:
      solo = one.member(i) if name is None else one.member(i)[name]
      both = two.member(i) if name is None else two.member(i)[name]
      for a, b in zip(solo.variables, both.variables):
        first, second = strategy.experimental_local_results(b)
        np.testing.assert_array_equal(first.numpy(), second.numpy())
        np.testing.assert_allclose(first.numpy(), a.numpy(), rtol=1e-5,
                                   atol=1e-6, err_msg=f"member {i} {name}")


def test_each_member_on_two_replicas_is_the_one_device_member():
  one = _supervised([3, 5, 4])
  two = _supervised([3, 5, 4], _mirrored())
  _assert_members_equal(one, two)
  np.testing.assert_allclose(two.history.member_train["loss"],
                             one.history.member_train["loss"], rtol=1e-5)
  np.testing.assert_allclose(two.history.train["loss"],
                             one.history.train["loss"], rtol=1e-5)


def test_a_diverging_member_stops_on_every_replica():
  population = snt.scenarios.Population([0, 1], learning_rate=[1e38, 0.3])
  one = _supervised(population)
  two = _supervised(population, _mirrored())
  for alive in _mirrored().experimental_local_results(two.members.alive):
    assert alive.numpy().tolist() == [False, True]
  assert one.members.alive.numpy().tolist() == [False, True]
  _assert_members_equal(one, two)


def test_accumulated_members_on_two_replicas_are_the_one_device_members():
  # Each member's gradient sums take both replicas' shares; the window's
  # update is applied in the member's step.
  _assert_members_equal(_supervised([0, 1], accumulate_steps=3),
                        _supervised([0, 1], _mirrored(), accumulate_steps=3))


def test_each_member_keeps_its_own_loss_scale_on_two_replicas():
  # A replica's float16 share may overflow at another scale than the
  # whole batch on one device: member i is the solo run of its seed on
  # the same two replicas, scale and overflows included.
  precision = snt.scenarios.Precision("mixed_float16", initial_scale=2.0**24,
                                      growth_interval=3)
  two = _supervised([0, 1], _mirrored(), precision=precision)
  solos = [_supervised(None, _mirrored(), precision=precision, seed=seed)
           for seed in (0, 1)]
  assert two.loss_scale == [solo.loss_scale for solo in solos]
  assert two.overflowed_updates == [s.overflowed_updates for s in solos]
  for i, solo in enumerate(solos):
    for a, b in zip(solo.model.variables, two.member(i).variables):
      for x, y in zip(*(_mirrored().experimental_local_results(v)
                        for v in (a, b))):
        np.testing.assert_allclose(x.numpy(), y.numpy(), atol=1e-6)


def test_gan_members_draw_for_the_global_batch_on_two_replicas():
  # Wasserstein: the critic's output bias gets a constant gradient (the
  # same for every member), summed over the replicas too.
  _assert_members_equal(_gan(), _gan(_mirrored()),
                        names=("generator", "discriminator"))


class _Looped(snt.scenarios.Scenario):
  """Regression with its updates in a tensor loop of train_step."""

  def __call__(self, model, optimizer, data):
    self.model, self.optimizer = model, optimizer
    self.feed(data, batch_size=8)
    return self.run()

  def models(self):
    return {"model": self.model}

  def trackables(self):
    return {"model": self.model, "optimizer": self.optimizer}

  def build(self):
    self.model(self.example_batch()[0])
    self.build_optimizer(self.optimizer, self.model.variables)

  def train_step(self, data):
    x, y = data
    loss = tf.constant(0.0)
    for _ in tf.range(2):
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean((self.model(x)[:, 0] - y) ** 2)
      self.minimize(tape, loss, self.model.trainable_variables,
                    self.optimizer)
    return {"loss": loss}


def test_what_two_replicas_do_not_do_is_refused_by_name():
  strategy = _mirrored()
  with pytest.raises(ValueError, match="^PPO: RL scenarios run under the "
                     "default strategy only, got MirroredStrategy with 2"):
    snt.scenarios.PPO(100, population=2, strategy=strategy)
  devices = [d.name for d in tf.config.list_logical_devices("CPU")][:2]
  central = tf.distribute.experimental.CentralStorageStrategy(devices)
  with pytest.raises(ValueError, match=r"^GAN: population= does not work "
                     r"with CentralStorageStrategy \(of the multi-replica "
                     r"strategies, MirroredStrategy only\) yet"):
    snt.scenarios.GAN(10, population=2, strategy=central)
  x = np.random.default_rng(0).normal(size=(32, 3)).astype(np.float32)
  looped = _Looped(num_steps=2, progress=False, tensorboard=False,
                   population=2, strategy=strategy)
  with pytest.raises(ValueError, match="_Looped: population= on 2 replicas "
                     "sums each member's gradients over the replicas in "
                     "the step itself"):
    looped(snt.Linear(1), snt.optimizers.SGD(0.1), (x, x[:, 0]))
