"""What scenarios take as data, checked once, as `tf.data` pipelines.

A scenario's data is a `tf.data.Dataset` of batches or arrays: one array, or
a tuple, list or dict (nested as deep as you like) of arrays of equal length.
Leaves are made float32 from float64. Before anything is traced, the first
element is checked: every leaf a dense tensor with a batch axis and known
feature sizes, the structure what the scenario declared, and the data not
empty. A failure is one error that names the scenario, the argument, what
was expected and what came.

    >>> import numpy as np
    >>> from sonnet_like.scenarios import data
    >>> x = {"pixels": np.zeros((10, 4)), "ids": np.arange(10)}
    >>> dataset = data.training_dataset("Supervised", "train_data",
    ...                                 (x, np.ones(10)), batch_size=4, seed=0)
    >>> batch = next(iter(dataset))
    >>> batch[0]["pixels"].shape, batch[0]["pixels"].dtype, batch[1].shape
    (TensorShape([4, 4]), tf.float32, TensorShape([4]))
    >>> data.training_dataset("Supervised", "train_data", (np.zeros((0, 3)),),
    ...                       batch_size=4, seed=0)
    Traceback (most recent call last):
    ...
    ValueError: Supervised: train_data is empty (0 examples); it needs at least one batch of 4.
"""

from typing import Any, Callable, Sequence

import numpy as np
import tensorflow as tf

from sonnet_like.core import autograph
from sonnet_like.scenarios import seed as seed_lib

Data = Any  # A tf.data.Dataset of batches, or arrays (nests of arrays).

NOT_DATA_ERROR = (
    "{owner}: {argument} must be a tf.data.Dataset of batches or arrays (one "
    "array, or a tuple/list/dict of arrays of equal length), got {got}.")

UNKNOWN_SIZE_ERROR = (
    "{owner}: {argument} has an unknown feature size at {path}: {spec}. "
    "Only the batch axis may be unknown; give the dataset known shapes (for "
    "`from_generator`, an output_signature such as TensorSpec([None, 8])), "
    "or set them with `dataset.map(lambda x: tf.ensure_shape(x, ...))`.")


def describe(value: Any) -> str:
  """A short description of data (or a structure of specs) for errors."""
  if isinstance(value, tf.data.Dataset):
    return f"a tf.data.Dataset with elements {describe(value.element_spec)}"
  if isinstance(value, tf.TypeSpec) and not isinstance(value, tf.TensorSpec):
    return type(value).__name__
  if isinstance(value, tf.TensorSpec):
    return f"{value.dtype.name}{value.shape.as_list()}"
  if isinstance(value, dict):
    return "{" + ", ".join(f"{k!r}: {describe(v)}"
                           for k, v in value.items()) + "}"
  if isinstance(value, (tuple, list)):
    return f"{type(value).__name__}({', '.join(describe(v) for v in value)})"
  shape = getattr(value, "shape", None)
  if shape is not None:
    dtype = getattr(value, "dtype", "")
    return f"{type(value).__name__}{list(shape)} {getattr(dtype, 'name', dtype)}"
  return repr(value)[:120]


def _path(path: tuple) -> str:
  return "element" + "".join(f"[{p!r}]" for p in path)


def _with_paths(nest: Any, path: tuple = ()) -> list[tuple[tuple, Any]]:
  if isinstance(nest, dict):
    return [x for key in sorted(nest) for x in _with_paths(nest[key],
                                                           path + (key,))]
  if isinstance(nest, (tuple, list)):
    return [x for i, item in enumerate(nest)
            for x in _with_paths(item, path + (i,))]
  return [(path, nest)]


def _leaves(owner: str, argument: str, data: Any) -> list[tuple[tuple, Any]]:
  leaves = _with_paths(data)
  if not leaves:
    raise TypeError(NOT_DATA_ERROR.format(owner=owner, argument=argument,
                                          got=describe(data)))
  return leaves


def _as_arrays(owner: str, argument: str, data: Any) -> Any:
  """Arrays (or a nest of them) as NumPy arrays, float64 made float32."""
  if isinstance(data, (str, bytes)) or data is None:
    raise TypeError(NOT_DATA_ERROR.format(owner=owner, argument=argument,
                                          got=describe(data)))

  def convert(leaf):
    if isinstance(leaf, (str, bytes)) or not hasattr(leaf, "__len__") and (
        not hasattr(leaf, "shape")):
      raise TypeError(NOT_DATA_ERROR.format(owner=owner, argument=argument,
                                            got=describe(data)))
    array = np.asarray(leaf)
    if array.ndim == 0 or not (np.issubdtype(array.dtype, np.number) or
                               array.dtype == np.bool_):
      raise TypeError(NOT_DATA_ERROR.format(owner=owner, argument=argument,
                                            got=describe(data)))
    return array.astype(np.float32) if array.dtype == np.float64 else array

  arrays = tf.nest.map_structure(convert, data)
  lengths = {_path(p): len(a) for p, a in _leaves(owner, argument, arrays)}
  if len(set(lengths.values())) > 1:
    raise ValueError(f"{owner}: {argument} must hold arrays of equal length "
                     f"(one row per example), got lengths {lengths}.")
  return arrays


def check_spec(owner: str, argument: str, spec: Any) -> None:
  """Every leaf a dense, batched tensor of known feature sizes."""
  for path, leaf in _leaves(owner, argument, spec):
    if not isinstance(leaf, tf.TensorSpec):
      raise TypeError(
          f"{owner}: {argument} must hold dense tensors, got "
          f"{describe(leaf)} at {_path(path)}; convert it (e.g. "
          f"`.to_tensor()` for ragged, `tf.sparse.to_dense` for sparse).")
    if leaf.shape.rank is None or leaf.shape.rank == 0:
      raise ValueError(
          f"{owner}: {argument} must hold batches (a leading batch axis), got "
          f"{describe(leaf)} at {_path(path)}; batch the dataset "
          f"(`dataset.batch(32)`).")
    if not leaf.shape[1:].is_fully_defined():
      raise ValueError(UNKNOWN_SIZE_ERROR.format(
          owner=owner, argument=argument, path=_path(path),
          spec=describe(leaf)))


def as_dataset(owner: str, argument: str, data: Data) -> tuple[
    tf.data.Dataset, bool]:
  """`(dataset, batched)`: a given dataset as is, arrays as examples."""
  if isinstance(data, tf.data.Dataset):
    return data, True
  arrays = _as_arrays(owner, argument, data)
  return tf.data.Dataset.from_tensor_slices(arrays), False


def _without_autotuning(dataset: tf.data.Dataset) -> tf.data.Dataset:
  """`dataset` without tf.data's autotuning.

  The pipelines built here from arrays have no parameter to tune (fixed
  batch and prefetch sizes, no parallel map), and with autotuning on,
  deleting one of their iterators could block for seconds to minutes on a
  loaded machine (TF 2.21; seen in the test suite, and in a small script).
  A dataset the user gives keeps its options.
  """
  options = tf.data.Options()
  options.autotune.enabled = False
  return dataset.with_options(options)


def _examples(dataset: tf.data.Dataset) -> int:
  return int(dataset.cardinality())


def training_dataset(owner: str, argument: str, data: Data, batch_size: int,
                     seed: int, shuffle: bool = True,
                     check: Callable[[Any], None] | None = None
                     ) -> tf.data.Dataset:
  """An endless dataset of global batches, deterministic for a seed.

  Arrays are shuffled (reshuffled every epoch from `seed`), repeated and cut
  into `batch_size` batches, so every step sees a full batch (a batch may
  span two epochs). A dataset is taken as already batched and only repeated.
  `check(element_spec)` raises if the structure is not what the scenario
  takes. Empty data is refused here, before anything is traced.
  """
  dataset, batched = as_dataset(owner, argument, data)
  if not batched:
    size = _examples(dataset)
    if size == 0:
      raise ValueError(f"{owner}: {argument} is empty (0 examples); it needs "
                       f"at least one batch of {batch_size}.")
    if shuffle:
      dataset = dataset.shuffle(size, seed=seed, reshuffle_each_iteration=True)
    dataset = dataset.repeat().batch(batch_size, drop_remainder=True)
    dataset = _without_autotuning(dataset.prefetch(2))
  else:
    if _examples(dataset) == 0:
      raise ValueError(f"{owner}: {argument} is an empty dataset; it needs "
                       "at least one batch.")
    check_spec(owner, argument, dataset.element_spec)
    if _examples(dataset) == tf.data.UNKNOWN_CARDINALITY and not any(
        True for _ in dataset.take(1)):
      raise ValueError(f"{owner}: {argument} is an empty dataset (it ended "
                       "before its first element); it needs at least one "
                       "batch.")
    dataset = dataset.repeat()
  if check is not None:
    check(dataset.element_spec)
  return dataset


def eval_dataset(owner: str, argument: str, data: Data, batch_size: int,
                 check: Callable[[Any], None] | None = None
                 ) -> tf.data.Dataset:
  """One pass over `data` in order, in batches (the last may be short)."""
  dataset, batched = as_dataset(owner, argument, data)
  if _examples(dataset) == 0:
    raise ValueError(f"{owner}: {argument} is empty; it needs at least one "
                     "example.")
  if not batched:
    dataset = _without_autotuning(dataset.batch(batch_size))
  check_spec(owner, argument, dataset.element_spec)
  if check is not None:
    check(dataset.element_spec)
  return dataset


def zeros_like_batch(spec: Any, batch_size: int = 1) -> Any:
  """A batch of zeros with the structure, dtypes and feature sizes of `spec`."""
  return tf.nest.map_structure(
      lambda s: tf.zeros([batch_size] + s.shape.as_list()[1:], s.dtype), spec)


@autograph.as_written
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


def any_batch(spec: Any) -> Any:
  """`spec` with every batch axis unknown: one trace for all batch sizes."""
  return tf.nest.map_structure(
      lambda s: tf.TensorSpec([None] + s.shape.as_list()[1:], s.dtype)
      if isinstance(s, tf.TensorSpec) and s.shape.rank else s, spec)


@autograph.as_written  # tf.data would rewrite a lambda.
def _stacked(*batches: Any) -> Any:
  """The pipelines' batches stacked on a leading axis."""
  return tf.nest.map_structure(lambda *parts: tf.stack(parts), *batches)


class Feed:
  """The training data a scenario was fed: its pipeline and its iterator.

  `Scenario.feed` makes it from the user's data (checked at once); `start`
  makes the iterator when the run's state is created (in the strategy
  scope, before restoring: the checkpoint holds its position). The
  compiled call reads it (`step.TracedStep.compile`), or the scenario's
  own `next_inputs` through `next_batch`.
  """

  def __init__(self, owner: str, argument: str, data: Data, batch_size: int,
               seed: int, shuffle: bool = True,
               check: Callable[[Any], None] | None = None,
               stacked_seeds: Sequence[int] | None = None):
    self.dataset = training_dataset(owner, argument, data, batch_size, seed,
                                    shuffle, check)
    self._one_spec = None
    if stacked_seeds is not None:
      # One pipeline per seed (its order, as a run with that seed has it),
      # their batches stacked on a leading axis (a population's members).
      self._one_spec = self.dataset.element_spec
      pipelines = []
      for seed_i in stacked_seeds:
        with seed_lib.global_seed(seed_i):
          pipelines.append(training_dataset(owner, argument, data,
                                            batch_size, seed_i, shuffle))
      self.dataset = tf.data.Dataset.zip(tuple(pipelines)).map(_stacked)
    self.argument, self.batch_size = argument, batch_size
    self.iterator: Any = None

  def start(self) -> None:
    self.iterator = iter(self.dataset)

  @property
  def element_spec(self) -> Any:
    """One batch's structure (with `stacked_seeds`, one pipeline's)."""
    if self._one_spec is not None:
      return self._one_spec
    return self.dataset.element_spec

  def example_batch(self, size: int = 2) -> Any:
    return zeros_like_batch(self.element_spec, size)
