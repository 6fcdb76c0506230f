"""A scenario's `seed` decides its run (`scenarios/seed.py`).

Two fresh processes with one seed and no global seeding end bit for bit
equal and another seed differs (`seed_digests.py`; here two of its runs
for the suite's time, every row and recipe when run by hand). The user's
global seed and its stream of random ops come back after a run; a module
built before the call keeps its weights; the data order ignores the
global seed.
"""

import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.eager import context

import sonnet_like as snt
from sonnet_like.scenarios import seed as seed_lib

_DIGESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "seed_digests.py")
# Dropout in the traced step, data order and first weights (Supervised);
# the DQN CartPole recipe: recipe.q_network(), gymnasium resets,
# epsilon-greedy exploration, replay sampling.
_RUNS = ("Supervised+dropout", "recipe DQN CartPole")


@pytest.fixture(autouse=True)
def _global_seed_as_it_was():
  """These tests set TensorFlow's global seed; the tests after them get
  the one they had."""
  with seed_lib.global_seed(0):  # Restores what was there on the way out.
    yield


def _start(*seeds: int) -> subprocess.Popen:
  env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
  return subprocess.Popen(
      [sys.executable, _DIGESTS, ",".join(map(str, seeds)), *_RUNS],
      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _digests(process: subprocess.Popen) -> dict:
  out, err = process.communicate(timeout=600)
  assert process.returncode == 0, err[-3000:]
  return json.loads(out.strip().splitlines()[-1])


def test_fresh_processes_with_one_seed_end_equal_and_another_seed_differs():
  # Seed 4 runs after seed 3 in the second process: it need not be fresh.
  first, second = [_digests(p) for p in (_start(3), _start(3, 4))]
  assert sorted(first["3"]) == sorted(_RUNS)
  assert first["3"] == second["3"]
  for name in _RUNS:
    assert first["3"][name]["weights"] != second["4"][name]["weights"], name


def _stream_after(run) -> np.ndarray:
  """The user's next random draws after `run()`, global seed 7."""
  tf.random.set_seed(7)
  tf.random.uniform([3])
  run()
  return tf.random.uniform([3]).numpy()


@pytest.fixture(scope="module")
def prebuilt_run():
  """A tiny Supervised run on a model built before the call (lr 0), with
  the user's random stream around it."""
  with seed_lib.global_seed(0):  # Restores the global seed afterwards.
    model = snt.Linear(2, name="prebuilt")
    model(tf.zeros([1, 3]))
    before = [v.numpy() for v in model.variables]
    x = np.random.default_rng(0).normal(size=(16, 3)).astype(np.float32)
    train = snt.scenarios.Supervised(2, batch_size=8, seed=5, progress=False)
    draws = _stream_after(lambda: train(
        model, keras.optimizers.SGD(0.0),
        lambda outputs, targets: tf.reduce_mean((outputs - targets) ** 2),
        (x, x[:, :2])))
  return before, model, draws


def test_a_run_gives_the_user_back_their_global_seed_and_stream(
    prebuilt_run):
  _, _, draws = prebuilt_run
  np.testing.assert_array_equal(draws, _stream_after(lambda: None))


def test_no_global_seed_stays_none_after_the_block():
  tf.random.set_seed(None)
  with seed_lib.global_seed(3):
    pass
  assert context.global_seed() is None


def test_a_module_built_before_the_call_keeps_its_weights(prebuilt_run):
  before, model, _ = prebuilt_run
  for value, variable in zip(before, model.variables):
    np.testing.assert_array_equal(value, variable.numpy())


def test_the_data_order_ignores_the_global_seed():
  x = np.arange(32, dtype=np.float32)[:, None]
  orders = []
  for global_seed in (None, 11):
    tf.random.set_seed(global_seed)
    train = snt.scenarios.Supervised(1, batch_size=32, seed=2,
                                     progress=False)
    train.feed((x, x), batch_size=32)
    first, _ = next(iter(train.fed_data.dataset))
    orders.append(first.numpy().ravel())
  np.testing.assert_array_equal(*orders)
  assert not np.array_equal(orders[0], x.ravel())  # Shuffled.
