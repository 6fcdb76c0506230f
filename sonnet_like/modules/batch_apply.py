"""BatchApply: run a module on inputs with several leading batch axes."""

import math
from typing import Any, Callable

import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import base
from sonnet_like.core import checks
from sonnet_like.modules import leading_dims


class BatchApply(base.Module):
  """Folds the leading axes of the inputs into one, calls `module`, unfolds.

  A module written for `[batch, N]` inputs runs on `[T, B, N]` inputs: they
  are reshaped to `[T * B, N]`, passed to the module, and the first axis of
  every output is split back into `[T, B]`. Inputs of rank below `num_dims`
  (scalars, say) and non-tensor arguments are passed through unchanged.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> per_step = snt.BatchApply(snt.Linear(4, name="proj"), name="apply")
      >>> per_step(tf.ones([5, 2, 3])).shape
      TensorShape([5, 2, 4])
  """

  def __init__(self, module: Callable[..., Any], num_dims: int = 2,
               name: str | None = None):
    """Constructs a BatchApply module.

    Args:
      module: The module (or any callable) to apply.
      num_dims: How many leading axes to fold into the batch.
      name: Name of the module.
    """
    super().__init__(name=name)
    if not callable(module):
      raise TypeError(f"BatchApply: module must be callable, got {module!r}.")
    try:
      arguments.check_positive_int("BatchApply", "num_dims", num_dims)
    except ValueError as e:  # Sonnet 2 fails here with a TypeError.
      raise checks.ArgumentTypeError(str(e)) from None
    self.module = module
    self.num_dims = num_dims

  def __call__(self, *args, **kwargs) -> Any:
    """Calls the wrapped module on `args` and `kwargs` with merged axes."""
    tensors = [x for x in tf.nest.flatten((args, kwargs))
               if isinstance(x, (tf.Tensor, tf.Variable))]
    if not tensors:
      raise ValueError(f"{checks.describe(self)}: BatchApply requires at least "
                       "one tensor input (to take the leading axes from), got "
                       "none.")
    merged = [x for x in tensors if x.shape.rank is None or
              x.shape.rank >= self.num_dims]
    if not merged:  # Nothing to fold: every input has too few axes.
      return self.module(*args, **kwargs)
    example = merged[0]
    checks_done = self._check_same_leading(example, merged)
    merge = lambda x: leading_dims.merge_leading_dims(x, self.num_dims)
    with tf.control_dependencies(checks_done):
      args, kwargs = tf.nest.map_structure(merge, (args, kwargs))
    outputs = self.module(*args, **kwargs)
    return tf.nest.map_structure(lambda y: self._split(y, example), outputs)

  def _leading(self, x: tf.Tensor) -> tf.TensorShape:
    return x.shape[:self.num_dims]

  def _check_same_leading(self, example: tf.Tensor,
                          tensors: list[tf.Tensor]) -> list[tf.Operation]:
    """Every merged input must share the example's leading axes."""
    if example.shape.rank is None:
      return []
    expected = self._leading(example)
    asserts = []
    for x in tensors[1:]:
      if x.shape.rank is None:
        continue
      got = self._leading(x)
      if expected.is_fully_defined() and got.is_fully_defined():
        if expected != got:
          raise ValueError(
              f"{checks.describe(self)} merges the first {self.num_dims} axes "
              f"of every input, so they must agree: the first input has "
              f"{tuple(expected.as_list())}, another has "
              f"{tuple(got.as_list())} (shape {tuple(x.shape.as_list())}).")
      else:
        asserts.append(tf.debugging.assert_equal(
            tf.shape(example)[:self.num_dims], tf.shape(x)[:self.num_dims],
            message=f"{checks.describe(self)} merges the first "
            f"{self.num_dims} axes of every input, so they must agree."))
    return asserts

  def _split(self, y: Any, example: tf.Tensor) -> Any:
    if not isinstance(y, (tf.Tensor, tf.Variable)):
      return y
    leading = self._leading(example)
    if y.shape.rank == 0:
      raise ValueError(
          f"{checks.describe(self)}: the wrapped module returned a scalar, "
          "which has no batch axis to split back into "
          f"{tuple(leading.as_list())}.")
    if leading.is_fully_defined() and y.shape.rank is not None and (
        y.shape[0] is not None):
      expected = math.prod(leading.as_list())
      if y.shape[0] != expected:
        raise ValueError(
            f"{checks.describe(self)}: the wrapped module returned an output "
            f"of shape {tuple(y.shape.as_list())}, whose first axis should "
            f"be {expected} to split back into {tuple(leading.as_list())}.")
    return leading_dims.split_leading_dim(y, example, self.num_dims)
