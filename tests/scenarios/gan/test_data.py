"""Real data for the GAN scenario: arrays and datasets, bad input."""

import numpy as np
import pytest
import tensorflow as tf

from sonnet_like.scenarios import data as data_lib
from sonnet_like.scenarios.gan import data as gan_data


def real_dataset(data, batch_size, seed, shuffle=True):
  return data_lib.training_dataset("GAN", "data", data, batch_size, seed,
                                   shuffle, gan_data.check_element)


def test_arrays_are_shuffled_per_epoch_deterministically_in_full_batches():
  x = np.arange(10, dtype=np.float64).reshape(10, 1)
  batches = [b.numpy() for b in real_dataset(x, 4, seed=3).take(5)]
  again = [b.numpy() for b in real_dataset(x, 4, seed=3).take(5)]
  assert all(b.shape == (4, 1) and b.dtype == np.float32 for b in batches)
  np.testing.assert_array_equal(batches, again)
  seen = np.concatenate(batches)[:, 0]
  assert sorted(seen[:10]) == list(range(10))  # Epoch 1: every example.
  assert not np.array_equal(seen[:10], np.arange(10))  # Shuffled.
  ordered = real_dataset(x, 4, seed=3, shuffle=False)
  np.testing.assert_array_equal(next(iter(ordered))[:, 0], [0, 1, 2, 3])


def test_datasets_are_used_as_batched_and_repeated():
  dataset = tf.data.Dataset.from_tensor_slices(np.ones((6, 2, 2))).batch(3)
  batches = list(real_dataset(dataset, 100, seed=0).take(5))
  assert [b.shape[0] for b in batches] == [3] * 5


@pytest.mark.parametrize("data, kind, message", [
    ((np.zeros((32, 2)), np.zeros(32)), TypeError, "one tensor each"),
    (np.zeros(32, np.float32), TypeError, "one tensor each"),
    ("data.npy", TypeError, "must be a tf.data.Dataset of batches or arrays"),
    (np.array([["a", "b"]] * 8), TypeError, "must be a tf.data.Dataset"),
    (tf.data.Dataset.from_tensor_slices((np.zeros((8, 2), np.float32),
                                         np.zeros(8))).batch(4), TypeError,
     r"got elements tuple\(float32\[None, 2\], float64\[None\]\)"),
    (tf.data.Dataset.from_tensor_slices(np.zeros(8)).batch(4), TypeError,
     "one tensor each"),
    (np.zeros((0, 2)), ValueError, "is empty"),
], ids=["pair", "vector", "string", "text", "pair_dataset", "flat_dataset",
        "empty"])
def test_wrong_data_is_refused(data, kind, message):
  with pytest.raises(kind, match=message) as info:
    real_dataset(data, 8, seed=0)
  assert str(info.value).startswith("GAN: data ")
