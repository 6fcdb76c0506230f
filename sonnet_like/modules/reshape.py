"""Reshape and Flatten: reshape all but the leading (batch) dimensions."""

import math
import numbers
from typing import Sequence

import tensorflow as tf

from sonnet_like.core import base
from sonnet_like.core import checks
from sonnet_like.core import once
from sonnet_like.core import types


def reshape(inputs: tf.Tensor, output_shape: types.ShapeLike,
            preserve_dims: int = 1, name: str | None = None) -> tf.Tensor:
  """Applies a new `Reshape(output_shape, preserve_dims)` to `inputs`."""
  return Reshape(output_shape, preserve_dims, name=name)(inputs)


def flatten(inputs: tf.Tensor, name: str = "flatten") -> tf.Tensor:
  """Applies a new `Flatten()` to `inputs`: `[B, ...] -> [B, prod(...)]`."""
  return Flatten(name=name)(inputs)


def _output_shape(cls: str, output_shape: types.ShapeLike) -> tuple[int, ...]:
  """Checks the target shape: sizes >= 0, at most one -1 wildcard."""
  if isinstance(output_shape, numbers.Integral):
    output_shape = (output_shape,)
  try:
    dims = tuple(tf.TensorShape(output_shape).as_list()) if isinstance(
        output_shape, tf.TensorShape) else tuple(output_shape)
  except (TypeError, ValueError):
    dims = None
  if (dims is None or
      not all(isinstance(d, numbers.Integral) and not isinstance(d, bool)
              and d >= -1 for d in dims) or dims.count(-1) > 1):
    # Sonnet 2's words for the same mistakes (from TensorFlow) end ours.
    why = ""
    if dims is not None and dims.count(-1) > 1:
      why = (" Input to reshape is a tensor with a fixed number of values, "
             "which determines one size left at -1, not two.")
    elif dims is not None and any(isinstance(d, (str, bytes)) for d in dims):
      why = " Can't convert Python sequence with mixed types to Tensor."
    raise ValueError(f"{cls}: output_shape must be a sequence of sizes >= 0 "
                     f"with at most one -1, got {output_shape!r}.{why}")
  return tuple(int(d) for d in dims)


class Reshape(base.Module):
  """Reshapes the input, keeping its first `preserve_dims` dimensions.

  A -1 in `output_shape` takes whatever size makes the element counts match.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> x = tf.ones([2, 3, 4, 5])
      >>> snt.Reshape((-1, 5), name="reshape")(x).shape
      TensorShape([2, 12, 5])
      >>> snt.Reshape((-1, 5), preserve_dims=2, name="reshape_2")(x).shape
      TensorShape([2, 3, 4, 5])
  """

  def __init__(self, output_shape: types.ShapeLike, preserve_dims: int = 1,
               name: str | None = None):
    """Constructs the module.

    Args:
      output_shape: The new shape of the dimensions after the preserved ones;
        at most one -1, inferred from the input.
      preserve_dims: How many leading dimensions keep their size (>= 1).
      name: Name of the module.
    """
    super().__init__(name=name)
    cls = type(self).__name__
    if (not isinstance(preserve_dims, numbers.Integral) or
        isinstance(preserve_dims, bool) or preserve_dims < 1):
      raise ValueError(f"{cls}: preserve_dims must be an int >= 1, got "
                       f"{preserve_dims!r}.")
    self._output_shape = _output_shape(cls, output_shape)
    self._preserve_dims = int(preserve_dims)

  @once.once
  def _initialize(self, inputs: tf.Tensor) -> None:
    self._check_rank(inputs)
    self._input_shape = inputs.shape

  def __call__(self, inputs: tf.Tensor) -> tf.Tensor:
    """Reshapes `[b_1, ..., b_p, ...]` to `[b_1, ..., b_p, *output_shape]`.

    Args:
      inputs: A tensor of rank >= `preserve_dims` (called `p` here).

    Returns:
      The reshaped tensor.
    """
    inputs = tf.convert_to_tensor(inputs)
    self._initialize(inputs)
    self._check_rank(inputs)
    p = self._preserve_dims
    preserved, reshaped = inputs.shape[:p], inputs.shape[p:]
    if reshaped.is_fully_defined():
      target = self._resolve(inputs, reshaped.as_list())
    else:
      target = self._output_shape
      inputs = self._check_count_when_run(inputs)
    if preserved.is_fully_defined():
      return tf.reshape(inputs, preserved.as_list() + list(target))
    return tf.reshape(inputs, tf.concat([tf.shape(inputs)[:p], target], 0))

  @base.no_name_scope
  def reversed(self, name: str | None = None) -> "Reshape":
    """A `Reshape` back to the shape of the first input this one reshaped."""
    if "_input_shape" not in self.__dict__:
      raise ValueError(f"{checks.describe(self)} must be called once before "
                       "reversed(): the reverse needs the input shape.")
    return Reshape(self._input_shape[self._preserve_dims:],
                   preserve_dims=self._preserve_dims,
                   name=name or f"{self.name}_reversed")

  def _check_rank(self, inputs: tf.Tensor) -> None:
    rank = inputs.shape.rank
    if rank is not None and rank < self._preserve_dims:
      raise checks.InputShapeError(
          f"{checks.describe(self)}: Input tensor has {rank} dimensions, "
          "should have at least as many as preserve_dims="
          f"{self._preserve_dims} (input shape {tuple(inputs.shape)}).")
    checks.check_rank(self, inputs, min_rank=self._preserve_dims)

  def _mismatch(self, inputs: tf.Tensor, count: object) -> str:
    """Our message, then TensorFlow's words (Sonnet 2 passes those on)."""
    trailing = inputs.shape[self._preserve_dims:]
    ours = (f"{checks.describe(self)} cannot reshape dimensions {trailing} "
            f"({count} elements) of an input of shape {inputs.shape} to "
            f"{self._output_shape} (preserve_dims={self._preserve_dims}).")
    if not isinstance(count, int):  # Known only when the graph runs.
      return ours
    requested = math.prod(d for d in self._output_shape if d != -1)
    if -1 in self._output_shape:  # Sonnet's wildcard: count // the rest.
      requested *= count // requested if requested else 0
    total = inputs.shape.num_elements()
    if total is None:  # Leading sizes known only when the graph runs.
      total, where = count, " after the preserved dimensions"
    else:
      requested *= math.prod(inputs.shape[:self._preserve_dims])
      where = ""
    return (f"{ours} Input to reshape is a tensor with {total} values{where}, "
            f"but the requested shape has {requested}.")

  def _resolve(self, inputs: tf.Tensor, dims: Sequence[int]) -> list[int]:
    """Replaces the -1 of the target so that it holds `prod(dims)` elements."""
    count = math.prod(dims)
    known = math.prod(d for d in self._output_shape if d != -1)
    if -1 in self._output_shape:
      if (known == 0 and count != 0) or (known and count % known):
        raise checks.InputShapeError(self._mismatch(inputs, count))
      wildcard = count // known if known else 0
      return [wildcard if d == -1 else d for d in self._output_shape]
    if count != known:
      raise checks.InputShapeError(self._mismatch(inputs, count))
    return list(self._output_shape)

  def _check_count_when_run(self, inputs: tf.Tensor) -> tf.Tensor:
    """The same check as `_resolve`, when the sizes are known only at run."""
    count = tf.reduce_prod(tf.shape(inputs, out_type=tf.int64)[
        self._preserve_dims:])
    known = math.prod(d for d in self._output_shape if d != -1)
    if -1 in self._output_shape:
      ok = (count % known == 0) if known else tf.equal(count, 0)
    else:
      ok = tf.equal(count, known)
    check = tf.debugging.Assert(ok, [self._mismatch(inputs, "?"), count])
    with tf.control_dependencies([check]):
      return tf.identity(inputs)


class Flatten(Reshape):
  """Flattens all but the first `preserve_dims` dimensions into one.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> snt.Flatten(name="flatten")(tf.ones([2, 3, 4])).shape
      TensorShape([2, 12])
  """

  def __init__(self, preserve_dims: int = 1, name: str | None = None):
    """Constructs the module.

    Args:
      preserve_dims: How many leading dimensions keep their size (>= 1).
      name: Name of the module.
    """
    super().__init__(output_shape=(-1,), preserve_dims=preserve_dims,
                     name=name)
