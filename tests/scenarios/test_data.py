"""Data: arrays to seeded endless batches, eval passes, replica slices."""

import numpy as np
import pytest
import tensorflow as tf

from sonnet_like.scenarios import data


def _arrays(n=10):
  return np.arange(n * 2, dtype=np.float64).reshape(n, 2), np.arange(n)


def test_training_dataset_is_seeded_endless_and_full():
  first = [b[1].numpy() for b in data.training_dataset("S", "d", _arrays(), 4, 7).take(6)]
  again = [b[1].numpy() for b in data.training_dataset("S", "d", _arrays(), 4, 7).take(6)]
  np.testing.assert_array_equal(first, again)
  assert all(len(b) == 4 for b in first)
  x, _ = next(iter(data.training_dataset("S", "d", _arrays(), 4, 7)))
  assert x.dtype == tf.float32  # float64 arrays are cast.
  ordered = [b[1].numpy().tolist() for b in
             data.training_dataset("S", "d", _arrays(), 4, 7, shuffle=False).take(3)]
  assert ordered == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 0, 1]]


def test_eval_dataset_keeps_the_short_last_batch():
  sizes = [len(y) for _, y in data.eval_dataset("S", "d", _arrays(), 4)]
  assert sizes == [4, 4, 2]


def test_pipelines_built_from_arrays_run_without_autotuning():
  # Deleting their iterators could block for minutes with it.
  for dataset in (data.training_dataset("S", "d", _arrays(), 4, 7),
                  data.eval_dataset("S", "d", _arrays(), 4)):
    assert dataset.options().autotune.enabled is False
  # A dataset the user built keeps TensorFlow's default.
  given = tf.data.Dataset.from_tensor_slices(_arrays()).batch(4)
  for dataset in (data.training_dataset("S", "d", given, 4, 7),
                  data.eval_dataset("S", "d", given, 4)):
    assert dataset.options().autotune.enabled is None


def test_bad_data_is_one_error_naming_scenario_and_argument():
  def error(data_, kind=ValueError):
    with pytest.raises(kind) as info:
      data.training_dataset("Supervised", "train_data", data_, 4, 0)
    assert str(info.value).startswith("Supervised: train_data ")
    return str(info.value)

  assert "got lengths" in error((_arrays()[0], np.zeros(3)))
  assert "is empty (0 examples)" in error((np.zeros((0, 2)), np.zeros(0)))
  assert "empty dataset" in error(tf.data.Dataset.from_tensor_slices(
      np.zeros((0, 2))).batch(2))
  unknown = tf.data.Dataset.from_generator(
      lambda: iter([np.zeros((2, 3), np.float32)]),
      output_signature=tf.TensorSpec([None, None], tf.float32))
  message = error(unknown)
  assert "unknown feature size at element: float32[None, None]" in message
  assert "output_signature" in message
  ragged = tf.data.Dataset.from_tensor_slices(
      tf.ragged.constant([[1.0], [2.0, 3.0]])).batch(2)
  assert "must hold dense tensors" in error(ragged, TypeError)
  unbatched = tf.data.Dataset.from_tensor_slices(np.zeros(4, np.float32))
  assert "must hold batches" in error(unbatched)
  assert "must be a tf.data.Dataset of batches or arrays" in error(
      "text", TypeError)
  assert "got {'x': 'text'}" in error({"x": "text"}, TypeError)


def test_empty_generator_is_refused_before_training():
  empty = tf.data.Dataset.from_generator(
      lambda: iter([]), output_signature=tf.TensorSpec([None, 2], tf.float32))
  with pytest.raises(ValueError, match="Supervised: train_data is an empty "
                     "dataset .it ended before its first element"):
    data.training_dataset("Supervised", "train_data", empty, 4, 0)


def test_nested_arrays_keep_their_structure():
  x = {"a": np.zeros((6, 2)), "b": (np.ones((6, 1)), np.arange(6))}
  batch = next(iter(data.training_dataset("S", "d", (x, np.arange(6)), 3, 0)))
  assert batch[0]["a"].shape == (3, 2) and batch[0]["a"].dtype == tf.float32
  assert batch[0]["b"][1].dtype == tf.int64 and batch[1].shape == (3,)


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
