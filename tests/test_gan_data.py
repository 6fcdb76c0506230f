"""Real data for the GAN scenario: arrays and datasets, bad input."""

import numpy as np
import pytest
import tensorflow as tf

from sonnet_like.scenarios import gan_data


def test_arrays_are_shuffled_per_epoch_deterministically_in_full_batches():
  x = np.arange(10, dtype=np.float64).reshape(10, 1)
  batches = [b.numpy() for b in gan_data.real_dataset(x, 4, seed=3).take(5)]
  again = [b.numpy() for b in gan_data.real_dataset(x, 4, seed=3).take(5)]
  assert all(b.shape == (4, 1) and b.dtype == np.float32 for b in batches)
  np.testing.assert_array_equal(batches, again)
  seen = np.concatenate(batches)[:, 0]
  assert sorted(seen[:10]) == list(range(10))  # Epoch 1: every example.
  assert not np.array_equal(seen[:10], np.arange(10))  # Shuffled.
  ordered = gan_data.real_dataset(x, 4, seed=3, shuffle=False)
  np.testing.assert_array_equal(next(iter(ordered))[:, 0], [0, 1, 2, 3])


def test_datasets_are_used_as_batched_and_repeated():
  dataset = tf.data.Dataset.from_tensor_slices(np.ones((6, 2, 2))).batch(3)
  batches = list(gan_data.real_dataset(dataset, 100, seed=0).take(5))
  assert [b.shape[0] for b in batches] == [3] * 5


@pytest.mark.parametrize("data", [
    (np.zeros((32, 2)), np.zeros(32)),
    np.zeros(32, np.float32),
    "data.npy",
    np.array([["a", "b"]] * 8),
    tf.data.Dataset.from_tensor_slices((np.zeros((8, 2), np.float32),
                                        np.zeros(8))).batch(4),
    tf.data.Dataset.from_tensor_slices(np.zeros(8)).batch(4),
], ids=["pair", "vector", "string", "text", "pair_dataset", "flat_dataset"])
def test_wrong_data_is_refused(data):
  with pytest.raises(TypeError, match=r"GAN: data must be a tf.data.Dataset "
                     r"whose elements are batches of real examples .* got "):
    gan_data.real_dataset(data, 8, seed=0)


def test_fewer_examples_than_a_batch():
  with pytest.raises(ValueError, match="GAN: data has 3 examples, fewer than "
                     "batch_size=8"):
    gan_data.real_dataset(np.zeros((3, 2)), 8, seed=0)
