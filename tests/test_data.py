"""Data: arrays to seeded endless batches, eval passes, replica slices."""

import numpy as np
import pytest
import tensorflow as tf

from sonnet_like.scenarios import data


def _arrays(n=10):
  return np.arange(n * 2, dtype=np.float64).reshape(n, 2), np.arange(n)


def test_training_dataset_is_seeded_endless_and_full():
  first = [b[1].numpy() for b in data.training_dataset(_arrays(), 4, 7).take(6)]
  again = [b[1].numpy() for b in data.training_dataset(_arrays(), 4, 7).take(6)]
  np.testing.assert_array_equal(first, again)
  assert all(len(b) == 4 for b in first)
  x, _ = next(iter(data.training_dataset(_arrays(), 4, 7)))
  assert x.dtype == tf.float32  # float64 arrays are cast.
  ordered = [b[1].numpy().tolist() for b in
             data.training_dataset(_arrays(), 4, 7, shuffle=False).take(3)]
  assert ordered == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1]]


def test_eval_dataset_keeps_the_short_last_batch():
  sizes = [len(y) for _, y in data.eval_dataset(_arrays(), 4)]
  assert sizes == [4, 4, 2]


def test_check_errors():
  data.check("Supervised", "train_data", _arrays())
  with pytest.raises(TypeError, match="train_data must be a tf.data.Dataset"):
    data.check("Supervised", "train_data", np.zeros(3))
  with pytest.raises(TypeError, match=r"tuple\(ndarray\(10, 2\), ndarray"):
    data.check("Supervised", "train_data", (_arrays()[0], np.zeros(3)))


def test_split_for_replicas():
  devices = tf.config.list_logical_devices("CPU")
  if len(devices) < 2:
    pytest.skip("needs two logical CPUs")
  strategy = tf.distribute.MirroredStrategy([d.name for d in devices[:2]])
  batch = (tf.reshape(tf.range(8.0), [4, 2]), tf.range(4))
  parts = data.split_for_replicas(strategy, batch)
  xs = strategy.experimental_local_results(parts[1])
  assert [x.numpy().tolist() for x in xs] == [[0, 1], [2, 3]]
  assert data.split_for_replicas(tf.distribute.get_strategy(), batch) is batch
