"""Real data for the `GAN` scenario: an endless dataset of real batches.

    >>> import numpy as np
    >>> from sonnet_like.scenarios import gan_data
    >>> dataset = gan_data.real_dataset(np.zeros((10, 2)), batch_size=4, seed=0)
    >>> next(iter(dataset)).shape
    TensorShape([4, 2])
"""

from typing import Any

import numpy as np
import tensorflow as tf

DATA_ERROR = (
    "GAN: data must be a tf.data.Dataset whose elements are batches of real "
    "examples (one tensor each; for (x, y) pairs use "
    "`dataset.map(lambda x, y: x)`) or an array of real examples shaped "
    "[N, ...], got {value}.")


def _describe(value: Any) -> str:
  if isinstance(value, tf.data.Dataset):
    return f"a tf.data.Dataset with elements {value.element_spec}"
  return f"{type(value).__name__}{getattr(value, 'shape', '')}"


def real_dataset(data: Any, batch_size: int, seed: int,
                 shuffle: bool = True) -> tf.data.Dataset:
  """An endless dataset of real batches, deterministic for a seed.

  Args:
    data: An array of real examples `[N, ...]` (shuffled every epoch from
      `seed`, repeated, cut into `batch_size` batches; a batch may span two
      epochs) or a `tf.data.Dataset` of real batches (one tensor each, at
      least `[batch, features]`), used as batched and repeated.
    batch_size: Global batch size for arrays.
    seed: Shuffling seed for arrays.
    shuffle: Shuffle arrays.

  Returns:
    The endless dataset.

  Raises:
    TypeError: `data` is neither (`DATA_ERROR`).
  """
  if isinstance(data, tf.data.Dataset):
    if not isinstance(data.element_spec, tf.TensorSpec) or (
        data.element_spec.shape.rank or 0) < 2:
      raise TypeError(DATA_ERROR.format(value=_describe(data)))
    return data.repeat()
  if (isinstance(data, (str, bytes, dict, tuple, list)) or
      not hasattr(data, "shape") or len(data.shape) < 2 or
      not np.issubdtype(np.asarray(data).dtype, np.number)):
    raise TypeError(DATA_ERROR.format(value=_describe(data)))
  x = np.asarray(data)
  x = x.astype(np.float32) if x.dtype == np.float64 else x
  if len(x) < batch_size:
    raise ValueError(f"GAN: data has {len(x)} examples, fewer than "
                     f"batch_size={batch_size}.")
  dataset = tf.data.Dataset.from_tensor_slices(x)
  if shuffle:
    dataset = dataset.shuffle(len(x), seed=seed, reshuffle_each_iteration=True)
  return dataset.repeat().batch(batch_size, drop_remainder=True).prefetch(2)
