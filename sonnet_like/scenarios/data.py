"""Turning what the caller passes as data into `tf.data` pipelines."""

from typing import Any

import numpy as np
import tensorflow as tf

Data = Any  # A tf.data.Dataset of (inputs, targets) batches, or (x, y) arrays.

DATA_ERROR = (
    "{owner}: {argument} must be a tf.data.Dataset of (inputs, targets) "
    "batches or a pair of arrays (x, y) of equal length, got {value}.")


def _describe(value: Any) -> str:
  if isinstance(value, (tuple, list)):
    inner = ", ".join(f"{type(v).__name__}{getattr(v, 'shape', '')}"
                      for v in value)
    return f"{type(value).__name__}({inner})"
  return repr(value)[:200]


def is_arrays(data: Any) -> bool:
  return (isinstance(data, (tuple, list)) and len(data) == 2 and
          all(hasattr(a, "shape") for a in data))


def check(owner: str, argument: str, data: Any) -> None:
  if isinstance(data, tf.data.Dataset):
    return
  if not is_arrays(data) or len(data[0]) != len(data[1]):
    raise TypeError(DATA_ERROR.format(owner=owner, argument=argument,
                                      value=_describe(data)))


def _cast(x: np.ndarray) -> np.ndarray:
  x = np.asarray(x)
  return x.astype(np.float32) if x.dtype == np.float64 else x


def training_dataset(data: Data, batch_size: int, seed: int,
                     shuffle: bool = True) -> tf.data.Dataset:
  """An endless dataset of global batches, deterministic for a seed.

  Arrays are shuffled (reshuffled every epoch from `seed`), repeated and cut
  into `batch_size` batches, so every step sees a full batch (a batch may
  span two epochs). A dataset is taken as already batched and only repeated.
  """
  if isinstance(data, tf.data.Dataset):
    return data.repeat()
  x, y = _cast(data[0]), _cast(data[1])
  dataset = tf.data.Dataset.from_tensor_slices((x, y))
  if shuffle:
    dataset = dataset.shuffle(len(x), seed=seed, reshuffle_each_iteration=True)
  return dataset.repeat().batch(batch_size, drop_remainder=True).prefetch(2)


def eval_dataset(data: Data, batch_size: int) -> tf.data.Dataset:
  """One pass over `data` in order, in batches (the last may be short)."""
  if isinstance(data, tf.data.Dataset):
    return data
  x = _cast(data[0])
  if len(data) == 2 and data[1] is not None:
    return tf.data.Dataset.from_tensor_slices((x, _cast(data[1]))).batch(
        batch_size)
  return tf.data.Dataset.from_tensor_slices(x).batch(batch_size)


def split_for_replicas(strategy: tf.distribute.Strategy, batch: Any) -> Any:
  """Cuts a global batch into one equal slice per replica (in-graph).

  Used instead of `experimental_distribute_dataset` so that the iterator is
  a plain, checkpointable `tf.data` iterator: every worker reads the same
  seeded pipeline and each replica keeps its own slice.
  """
  replicas = strategy.num_replicas_in_sync
  if replicas == 1:
    return batch

  def slice_for(context):
    index = context.replica_id_in_sync_group

    def cut(t):
      size = tf.shape(t)[0] // replicas
      return t[index * size:(index + 1) * size]

    return tf.nest.map_structure(cut, batch)

  return strategy.experimental_distribute_values_from_function(slice_for)
