"""Scenarios under tf.distribute on two logical CPUs (worker processes: test_cluster.py)."""

import functools
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt


def _data(n=64, seed=0):
  rng = np.random.default_rng(seed)
  x = rng.normal(size=(n, 5)).astype(np.float32)
  y = (x[:, 0] + x[:, 1] > 0).astype(np.int32)
  return x, y


def _loss(logits, labels):
  return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)


class _MLP(snt.Module):

  def __init__(self, name=None):
    super().__init__(name=name)
    self.hidden = snt.Linear(8, name="hidden")
    self.out = snt.Linear(2, name="out")

  def __call__(self, x):
    return self.out(tf.nn.relu(self.hidden(x)))


def _train(strategy, optimizer_fn, steps=20, k=1, **kwargs):
  strategy = strategy or tf.distribute.get_strategy()
  with strategy.scope():
    tf.random.set_seed(3)
    model = _MLP(name="mlp")
    model(tf.zeros([1, 5]))
    optimizer = optimizer_fn()
  train = snt.scenarios.Supervised(
      num_steps=steps, batch_size=16, steps_per_call=k, progress=False,
      strategy=strategy if strategy is not tf.distribute.get_strategy()
      else None, shuffle=False, **kwargs)
  history = train(model, optimizer, _loss, _data())
  values = [np.concatenate([np.ravel(x) for x in
                            strategy.experimental_local_results(v)])
            for v in model.trainable_variables]
  return values, history, model, strategy


@functools.lru_cache(maxsize=None)
def _mirrored_strategy():
  devices = tf.config.list_logical_devices("CPU")
  return tf.distribute.MirroredStrategy([d.name for d in devices[:2]])


def _mirrored():
  if len(tf.config.list_logical_devices("CPU")) < 2:
    pytest.skip("needs two logical CPUs (see conftest.py)")
  # One strategy for the whole file: separate MirroredStrategy objects over
  # the same devices can reuse collective keys in one process.
  return _mirrored_strategy()


@pytest.mark.parametrize("optimizer_fn", [
    lambda: keras.optimizers.SGD(0.3),
    lambda: keras.optimizers.Adam(0.01),
], ids=["keras_sgd", "keras_adam"])
@pytest.mark.parametrize("k", [1, 4])
def test_mirrored_matches_one_device(optimizer_fn, k):
  single, single_history, _, _ = _train(None, optimizer_fn, k=k)
  mirrored, mirrored_history, model, strategy = _train(_mirrored(),
                                                       optimizer_fn, k=k)
  for one, both in zip(single, mirrored):
    half = len(both) // 2
    # Both replicas hold the same weights, equal to the one-device run.
    np.testing.assert_array_equal(both[:half], both[half:])
    np.testing.assert_allclose(both[:half], one, rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(mirrored_history.train["loss"],
                             single_history.train["loss"], rtol=1e-5)
  assert isinstance(model.out.w, tf.distribute.DistributedValues)
  assert strategy.num_replicas_in_sync == 2


def test_mirrored_clipping_matches_one_device():
  # Clipped by the norm of the summed gradient, as on one device.
  sgd = lambda: keras.optimizers.SGD(0.3)
  single, _, _, _ = _train(None, sgd, steps=8, clip_norm=0.05)
  mirrored, _, _, _ = _train(_mirrored(), sgd, steps=8, clip_norm=0.05)
  unclipped, _, _, _ = _train(None, sgd, steps=8)
  for one, both, free in zip(single, mirrored, unclipped):
    np.testing.assert_allclose(both[:len(both) // 2], one, rtol=1e-5,
                               atol=1e-6)
    assert np.abs(one - free).max() > 1e-3  # The clip was active.


def test_mirrored_checkpoint_resume(tmp_path):
  strategy = _mirrored()
  whole, _, _, _ = _train(strategy, lambda: keras.optimizers.Adam(0.01),
                          steps=12, save_dir=str(tmp_path / "a"),
                          save_every=4)
  _train(strategy, lambda: keras.optimizers.Adam(0.01), steps=8,
         save_dir=str(tmp_path / "b"), save_every=4)
  resumed, history, _, _ = _train(strategy,
                                  lambda: keras.optimizers.Adam(0.01),
                                  steps=12, save_dir=str(tmp_path / "b"),
                                  save_every=4)
  for a, b in zip(whole, resumed):
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
  assert history.train["step"][-1] == 12


def test_mirrored_skip_policy_zeroes_a_bad_update():
  strategy = _mirrored()
  x, y = _data()
  x[16:32] = np.nan  # The second global batch is poisoned.
  with strategy.scope():
    tf.random.set_seed(3)
    model = _MLP(name="mlp")
    model(tf.zeros([1, 5]))
    optimizer = keras.optimizers.SGD(0.3)
  train = snt.scenarios.Supervised(num_steps=4, batch_size=16,
                                   progress=False, strategy=strategy,
                                   shuffle=False, on_nonfinite="skip")
  train(model, optimizer, _loss, (x, y))
  assert train.skipped_steps == 1
  for v in model.trainable_variables:
    assert np.all(np.isfinite(strategy.experimental_local_results(v)[0]))


@pytest.mark.parametrize("optimizer_fn", [
    lambda: snt.optimizers.SGD(0.3),
    lambda: snt.optimizers.Adam(0.01),
], ids=["snt_sgd", "snt_adam"])
def test_mirrored_sonnet_optimizer_matches_one_device(optimizer_fn):
  single, _, _, _ = _train(None, optimizer_fn, k=2)
  mirrored, _, _, _ = _train(_mirrored(), optimizer_fn, k=2)
  for one, both in zip(single, mirrored):
    half = len(both) // 2
    np.testing.assert_array_equal(both[:half], both[half:])
    np.testing.assert_allclose(both[:half], one, rtol=1e-5, atol=1e-6)


def test_a_run_saved_on_two_replicas_resumes_on_one_device(tmp_path):
  """Another cluster shape: the checkpoint holds one copy of each variable
  and the data's global position, so the run goes on where it stopped
  (within float tolerance: the replicas' sums are ordered differently)."""
  sgd = lambda: snt.optimizers.SGD(0.3)
  save_dir = str(tmp_path / "run")
  # 4 batches an epoch: stopping after 3 tells a resumed data position
  # (batches 3, 0, 1 next) from a restarted one (0, 1, 2).
  _train(_mirrored(), sgd, steps=3, save_dir=save_dir, save_every=3)
  resumed, history, _, _ = _train(None, sgd, steps=6, save_dir=save_dir,
                                  save_every=3)
  one_device, _, _, _ = _train(None, sgd, steps=6)
  assert history.train["step"][-1] == 6
  for a, b in zip(resumed, one_device):
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


@functools.lru_cache(maxsize=None)
def _one_replica_strategy():
  return tf.distribute.MirroredStrategy(
      [tf.config.list_logical_devices("CPU")[0].name])


@pytest.mark.parametrize("optimizer_fn", [
    lambda: snt.optimizers.Adam(0.01),
    lambda: keras.optimizers.Adam(0.01),
], ids=["snt_adam", "keras_adam"])
def test_a_mirrored_strategy_of_one_device_matches_no_strategy(optimizer_fn):
  """`MirroredStrategy()` on a machine with one GPU: one replica, whose
  optimizer still synchronises (its update cannot sit in a `tf.cond`)."""
  single, _, _, _ = _train(None, optimizer_fn, steps=8)
  mirrored, _, _, strategy = _train(_one_replica_strategy(), optimizer_fn,
                                    steps=8)
  assert strategy.num_replicas_in_sync == 1
  for one, alone in zip(single, mirrored):
    np.testing.assert_allclose(alone, one, rtol=1e-5, atol=1e-6)
