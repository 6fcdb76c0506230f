"""Bias: adds a learned bias that broadcasts over chosen axes."""

from typing import Sequence

import tensorflow as tf

from sonnet_like.core import base
from sonnet_like.core import checks
from sonnet_like.core import initializers
from sonnet_like.core import once
from sonnet_like.core import types


class Bias(base.Module):
  """Adds a bias `b`, optionally scaled: `outputs = inputs + b * multiplier`.

  By default `b` covers every axis but the batch; `bias_dims` keeps only some
  axes and broadcasts over the others.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> x = tf.ones([8, 2, 3, 4])
      >>> snt.Bias(name="full")(x) is not None
      True
      >>> for dims in (None, [], [-1], [1]):
      ...   bias = snt.Bias(bias_dims=dims, name="bias")
      ...   _ = bias(x)
      ...   print(dims, bias.b.shape)
      None (2, 3, 4)
      [] ()
      [-1] (4,)
      [1] (2, 1, 1)

  `multiplier=-1` subtracts the same bias, so the two calls cancel:

      >>> bias = snt.Bias(b_init=snt.initializers.Ones(), name="shift")
      >>> bool(tf.reduce_all(bias(bias(x), multiplier=-1) == x))
      True
  """

  def __init__(self, output_size: int | Sequence[int] | None = None,
               bias_dims: Sequence[int] | None = None,
               b_init: initializers.Initializer | None = None,
               name: str | None = None):
    """Constructs a Bias module.

    Args:
      output_size: The expected input shape without the batch axis (an int is
        taken as a rank-2 input `[batch, output_size]`). None: inferred from
        the first input.
      bias_dims: The axes (of the input, batch at 0) that the bias covers; the
        others are broadcast over. None: every axis but the batch. `[]`: a
        scalar bias.
      b_init: Initializer for `b`; zeros by default.
      name: Name of the module.
    """
    super().__init__(name=name)
    # Public attributes keep the arguments as given, as in Sonnet 2.
    self.output_size = output_size
    self.bias_dims = bias_dims
    if isinstance(output_size, int) and not isinstance(output_size, bool):
      output_size = (output_size,)
    if output_size is not None:
      output_size = tuple(output_size)
      if not all(isinstance(d, int) and d > 0 for d in output_size):
        raise ValueError(f"Bias: output_size must be a positive int or a "
                         f"sequence of positive ints, got {output_size!r}.")
    if bias_dims is not None:
      bias_dims = tuple(bias_dims)
      if not all(isinstance(d, int) and not isinstance(d, bool)
                 for d in bias_dims):
        raise ValueError(f"Bias: bias_dims must be a sequence of ints, got "
                         f"{bias_dims!r}.")
      if 0 in bias_dims:
        raise ValueError("Bias: bias_dims must not contain 0. Cannot apply "
                         "bias across the minibatch dimension, got "
                         f"bias_dims={bias_dims!r}.")
    self._output_size = output_size
    self._bias_dims = bias_dims
    self.b_init = initializers.Zeros() if b_init is None else b_init

  @once.once
  def _initialize(self, inputs: tf.Tensor) -> None:
    checks.check_rank(self, inputs, min_rank=2, layout="[batch, ...]")
    rank = inputs.shape.rank
    if self._output_size is not None:
      got = tuple(inputs.shape[1:].as_list())
      if got != self._output_size:
        raise ValueError(
            f"{checks.describe(self)} was constructed with output_size="
            f"{self._output_size}. Input shape must be "
            f"{(-1,) + self._output_size} not {tuple(inputs.shape.as_list())}.")
    self.input_size = inputs.shape[1:]
    self.dtype = inputs.dtype
    shape = self._bias_shape(inputs, rank)
    self.b = tf.Variable(self.b_init(shape, inputs.dtype), name="b")

  def _bias_shape(self, inputs: tf.Tensor, rank: int) -> tuple[int, ...]:
    """The shape of `b`: kept axes at full size, the others 1."""
    if self._bias_dims is None:
      axes = range(1, rank)
    else:
      axes = []
      for dim in self._bias_dims:
        axis = dim % rank if -rank <= dim < rank else None
        if axis is None or axis == 0:
          reason = ("is the batch axis: Cannot apply bias across the "
                    "minibatch dimension" if axis == 0 else
                    f"is out of range for input of rank {rank}")
          raise ValueError(
              f"{checks.describe(self)}: dimension {dim} (bias_dims="
              f"{tuple(self._bias_dims)}) {reason} (input shape "
              f"{tuple(inputs.shape.as_list())}).")
        axes.append(axis)
    if not axes:
      return ()
    shape = [1] * rank
    for axis in axes:
      shape[axis] = checks.known_dim(self, inputs, axis, f"size of axis {axis}")
    return tuple(shape[min(axes):])  # Leading ones broadcast anyway.

  def __call__(self, inputs: tf.Tensor,
               multiplier: types.FloatLike | None = None) -> tf.Tensor:
    """Returns `inputs + b` (or `inputs + b * multiplier`).

    Args:
      inputs: A tensor `[batch, ...]`.
      multiplier: Optional scalar or tensor that `b` is multiplied by, e.g. -1
        to subtract the bias.
    """
    inputs = tf.convert_to_tensor(inputs)
    self._initialize(inputs)
    checks.check_built_dtype(self, inputs, self.dtype)
    inputs = self._check_shape(inputs)
    b = self.b if multiplier is None else self.b * multiplier
    return inputs + b

  def _check_shape(self, inputs: tf.Tensor) -> tf.Tensor:
    """`b` must broadcast to the input without enlarging it."""
    bias_rank = len(self.b.shape)
    checks.check_rank(self, inputs, min_rank=bias_rank + 1,
                      layout="[batch, ...]")
    for offset, size in enumerate(self.b.shape.as_list()):
      if size != 1:
        axis = offset - bias_rank
        inputs = checks.check_dim(self, inputs, axis, size,
                                  f"size of axis {axis} =")
    return inputs
