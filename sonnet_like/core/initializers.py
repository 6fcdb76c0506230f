"""Initializers: callables `(shape, dtype) -> tf.Tensor` for variables.

Same names, arguments and numerics as Sonnet 2's `snt.initializers`.
"""

import abc
import math
from typing import Any

import numpy as np
import tensorflow as tf

from sonnet_like.core import checks
from sonnet_like.core import types

__all__ = [
    "Constant", "Identity", "Initializer", "Ones", "Orthogonal",
    "RandomNormal", "RandomUniform", "TruncatedNormal", "VarianceScaling",
    "Zeros"
]

# Standard deviation of a unit normal truncated to [-2, 2].
_TRUNCATED_UNIT_STDDEV = .87962566103423978


def _numerical(owner: Any, dtype: tf.DType) -> tf.DType:
  dtype = tf.as_dtype(dtype)
  if not (dtype.is_floating or dtype.is_integer or dtype.is_complex):
    raise checks.InputDTypeError(
        f"{type(owner).__name__} needs a numerical dtype: Expected integer or "
        f"floating point type, got {dtype.name}.")
  return dtype


def _floating(owner: Any, dtype: tf.DType) -> tf.DType:
  dtype = tf.as_dtype(dtype)
  if not dtype.is_floating:
    raise checks.InputDTypeError(
        f"{type(owner).__name__} needs a floating-point dtype: Expected "
        f"floating point type, got {dtype.name}.")
  return dtype


def _dims(owner: Any, shape: types.ShapeLike | tf.Tensor) -> Any:
  """`shape` as a list of ints, or as a 1-D int tensor known only at run time.

  A shape tensor (`tf.shape(t)` inside `tf.function`, for an initial state
  whose batch size comes at run time) stays a tensor unless its value is
  known while tracing; its length must be known.
  """
  if not isinstance(shape, (tf.Tensor, tf.Variable)):
    return tf.TensorShape(shape).as_list()
  value = tf.get_static_value(shape)
  if value is not None:
    return [int(d) for d in np.reshape(value, [-1])]
  if shape.shape.rank != 1 or shape.shape[0] is None:
    raise ValueError(f"{type(owner).__name__}: a shape tensor must be 1-D with "
                     f"a known length, got a tensor of shape {shape.shape}.")
  return shape


def _rank(dims: Any) -> int:
  return len(dims) if isinstance(dims, list) else dims.shape[0]


def _at_least_2d(owner: Any, dims: Any) -> None:
  if _rank(dims) < 2:
    got = (f"shape {dims}" if isinstance(dims, list) else
           f"a shape tensor of length {_rank(dims)}")
    raise ValueError(f"{type(owner).__name__}: The tensor to initialize must "
                     f"be at least two-dimensional, got {got}.")


class Initializer(abc.ABC):
  """Base class: `initializer(shape, dtype)` returns the initial value.

  Initializers keep Python's default `repr`, as Sonnet 2's do, so a module's
  `repr` (which shows its constructor arguments) reads the same in both.
  """

  @abc.abstractmethod
  def __call__(self, shape: types.ShapeLike, dtype: tf.DType) -> tf.Tensor:
    """Returns a tensor of the given shape and dtype."""


class Zeros(Initializer):
  """All zeros."""

  def __call__(self, shape: types.ShapeLike, dtype: tf.DType) -> tf.Tensor:
    return tf.zeros(shape, _numerical(self, dtype))


class Ones(Initializer):
  """All ones."""

  def __call__(self, shape: types.ShapeLike, dtype: tf.DType) -> tf.Tensor:
    return tf.ones(shape, _numerical(self, dtype))


class Constant(Initializer):
  """Every element set to one scalar `value`."""

  def __init__(self, value: float | int):
    if not np.isscalar(value):
      raise TypeError(f"Constant: Invalid type for value: {type(value)} "
                      f"(expected scalar), got {value!r}.")
    self.value = value

  def __call__(self, shape: types.ShapeLike, dtype: tf.DType) -> tf.Tensor:
    value = tf.convert_to_tensor(self.value, _numerical(self, dtype))
    return tf.fill(dims=shape, value=value)


class RandomUniform(Initializer):
  """Uniform in `[minval, maxval)`."""

  def __init__(self, minval: types.FloatLike = 0, maxval: types.FloatLike = 1,
               seed: int | None = None):
    self.minval = minval
    self.maxval = maxval
    self.seed = seed

  def __call__(self, shape: types.ShapeLike, dtype: tf.DType) -> tf.Tensor:
    return tf.random.uniform(shape, self.minval, self.maxval,
                             _numerical(self, dtype), seed=self.seed)


class _MeanAndStddev(Initializer):
  """An initializer drawing from a distribution given by mean and stddev."""

  def __init__(self, mean: types.FloatLike = 0.0,
               stddev: types.FloatLike = 1.0, seed: int | None = None):
    self.mean = mean
    self.stddev = stddev
    self.seed = seed


class RandomNormal(_MeanAndStddev):
  """Normal with the given mean and standard deviation."""

  def __call__(self, shape: types.ShapeLike, dtype: tf.DType) -> tf.Tensor:
    return tf.random.normal(shape, self.mean, self.stddev,
                            _floating(self, dtype), seed=self.seed)


class TruncatedNormal(_MeanAndStddev):
  """Normal, with draws more than two stddevs from the mean redrawn."""

  def __call__(self, shape: types.ShapeLike, dtype: tf.DType) -> tf.Tensor:
    return tf.random.truncated_normal(shape, self.mean, self.stddev,
                                      _floating(self, dtype), seed=self.seed)


class Identity(Initializer):
  """`gain` times the identity matrix (batched over leading dimensions)."""

  def __init__(self, gain: float = 1.0):
    self.gain = gain

  def __call__(self, shape: types.ShapeLike, dtype: tf.DType) -> tf.Tensor:
    dims = _dims(self, shape)
    _at_least_2d(self, dims)
    dtype = _numerical(self, dtype)
    batch = dims[:-2] if _rank(dims) > 2 else None
    return self.gain * tf.eye(dims[-2], dims[-1], batch_shape=batch,
                              dtype=dtype)


class Orthogonal(Initializer):
  """A (semi-)orthogonal matrix from the QR decomposition of normal noise.

  Shapes of rank > 2 are treated as a `[prod(shape[:-1]), shape[-1]]` matrix.
  """

  def __init__(self, gain: float = 1.0, seed: int | None = None):
    self.gain = gain
    self.seed = seed

  def __call__(self, shape: types.ShapeLike, dtype: tf.DType) -> tf.Tensor:
    dims = _dims(self, shape)
    _at_least_2d(self, dims)
    dtype = _floating(self, dtype)
    if isinstance(dims, list):
      rows, cols = math.prod(dims[:-1]), dims[-1]
    else:
      rows, cols = tf.reduce_prod(dims[:-1]), dims[-1]
    noise = tf.random.normal([tf.maximum(rows, cols), tf.minimum(rows, cols)],
                             dtype=dtype, seed=self.seed)
    q, r = tf.linalg.qr(noise, full_matrices=False)
    q *= tf.sign(tf.linalg.diag_part(r))  # Makes the decomposition unique.
    if isinstance(dims, list):
      q = tf.transpose(q) if rows < cols else q
    else:
      q = tf.cond(rows < cols, lambda: tf.transpose(q), lambda: q)
    return self.gain * tf.reshape(q, dims)


def _fans(dims: Any) -> tuple[Any, Any]:
  """Fan-in and fan-out of a kernel shape (ints, or tensors for a tensor)."""
  rank = _rank(dims)
  if rank == 0:
    return 1, 1
  if rank == 1:
    return dims[0], dims[0]
  if isinstance(dims, list):
    receptive_field = math.prod(dims[:-2])
  else:
    receptive_field = tf.reduce_prod(dims[:-2])
  return dims[-2] * receptive_field, dims[-1] * receptive_field


class VarianceScaling(Initializer):
  """Scales the variance by the number of inputs and/or outputs.

  `stddev = sqrt(scale / n)` (normal distributions, after truncation) or
  `limit = sqrt(3 * scale / n)` (uniform), where `n` is fan-in, fan-out or
  their mean depending on `mode`. He-normal is `scale=2.0, mode="fan_in"`.
  """

  def __init__(self, scale: float = 1.0, mode: str = "fan_in",
               distribution: str = "truncated_normal",
               seed: int | None = None):
    if scale <= 0.:
      raise ValueError(f"VarianceScaling: `scale` must be positive float, got "
                       f"{scale}.")
    if mode not in ("fan_in", "fan_out", "fan_avg"):
      raise ValueError(f"VarianceScaling: Invalid `mode` argument: {mode!r}; "
                       "it must be 'fan_in', 'fan_out' or 'fan_avg'.")
    distribution = distribution.lower()
    if distribution not in ("truncated_normal", "normal", "uniform"):
      raise ValueError("VarianceScaling: Invalid `distribution` argument: "
                       f"{distribution!r}; it must be 'truncated_normal', "
                       "'normal' or 'uniform'.")
    self.scale = scale
    self.mode = mode
    self.distribution = distribution
    self.seed = seed

  def __call__(self, shape: types.ShapeLike, dtype: tf.DType) -> tf.Tensor:
    dtype = _floating(self, dtype)
    dims = _dims(self, shape)
    # In `dtype`, in Sonnet 2's order, so the values agree bit for bit.
    fan_in, fan_out = (tf.cast(fan, dtype) for fan in _fans(dims))
    n = {"fan_in": fan_in, "fan_out": fan_out,
         "fan_avg": (fan_in + fan_out) / 2.}[self.mode]
    scale = self.scale / tf.maximum(1., n)
    if self.distribution == "truncated_normal":
      stddev = tf.sqrt(scale) / _TRUNCATED_UNIT_STDDEV
      return tf.random.truncated_normal(dims, 0., stddev, dtype, seed=self.seed)
    if self.distribution == "normal":
      return tf.random.normal(dims, 0., tf.sqrt(scale), dtype, seed=self.seed)
    limit = tf.sqrt(3. * scale)
    return tf.random.uniform(dims, -limit, limit, dtype, seed=self.seed)
