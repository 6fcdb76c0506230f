"""Which kind of optimizer an object is: decided here, and only here.

A Keras optimizer (Keras 3 or tf_keras) applies with
`apply_gradients(grads_and_vars)`; a Sonnet-style one (sonnet_like's,
dm-sonnet's) with `apply(updates, parameters)`. Everything that treats the
two differently asks `is_keras` once, when the optimizer's `Updater` is
made.

    >>> import keras, sonnet_like as snt
    >>> is_keras(keras.optimizers.SGD(0.1)), is_keras(snt.optimizers.SGD(0.1))
    (True, False)
"""

from typing import Any

from sonnet_like.core import autograph

NOT_AN_OPTIMIZER_ERROR = (
    "{owner}: {argument} must have apply_gradients(grads_and_vars) (Keras) "
    "or apply(updates, parameters) (sonnet_like / Sonnet), got {value!r}.")

LOSS_SCALE_OPTIMIZER_ERROR = (
    "{owner}: {argument} is a Keras LossScaleOptimizer, which expects its own "
    "scale_loss() before the gradients; scenarios do not call it, so every "
    "gradient would be divided by its scale. Pass its inner optimizer "
    "({argument}.inner_optimizer) and precision='mixed_float16': the scenario "
    "then scales the loss itself, dynamically, inside the compiled step (the "
    "scale is checkpointed).")


@autograph.as_written
def is_keras(optimizer: Any) -> bool:
  """A Keras optimizer (`apply_gradients`), not a Sonnet-style one."""
  return hasattr(optimizer, "apply_gradients")


@autograph.as_written
def is_optimizer(obj: Any) -> bool:
  """A Keras optimizer, or a Sonnet-style one (`apply`, and not a module
  whose `__call__` would make `apply` something else)."""
  return is_keras(obj) or (
      hasattr(obj, "apply") and not callable(getattr(obj, "__call__", None)))


@autograph.as_written
def is_loss_scale_optimizer(optimizer: Any) -> bool:
  """A Keras (3 or tf_keras) `LossScaleOptimizer`, by its surface."""
  return (hasattr(optimizer, "inner_optimizer") and
          (hasattr(optimizer, "dynamic_scale") or
           hasattr(optimizer, "loss_scale") or
           hasattr(optimizer, "scale_loss")))


def check_optimizer(owner: str, optimizer: Any,
                    argument: str = "optimizer") -> None:
  """Refuses what no `Updater` can drive: not an optimizer, or a Keras
  `LossScaleOptimizer` (the scenario scales the loss itself)."""
  if not (is_keras(optimizer) or hasattr(optimizer, "apply")):
    raise TypeError(NOT_AN_OPTIMIZER_ERROR.format(
        owner=owner, argument=argument, value=optimizer))
  if is_loss_scale_optimizer(optimizer):
    raise TypeError(LOSS_SCALE_OPTIMIZER_ERROR.format(owner=owner,
                                                      argument=argument))
