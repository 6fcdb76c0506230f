"""`UpdatePolicy`: what the runner of a traced step decides about its updates.

An `Updater` asks its policy three things and nothing else about where the
step runs: how a checked update is applied only if finite (`cond`),
whether a failed update is left for the runner to drop (`leaves_failed`),
and how one model's gradients are summed when the runner splits its batch
beyond the strategy's replicas (`summed`). This class is a solo run's; a
population's runner hands its updaters its own (`population/updates.py`).
"""

from typing import Any, Callable

import tensorflow as tf


class UpdatePolicy:
  """A solo run's updates: `tf.cond`, nothing left to the runner, no sum."""

  # The runner's step applies the accumulated gradient sums itself (the
  # compiled step then applies none after it).
  applies_accumulated_sums = False

  def cond(self, ok: tf.Tensor, apply: Callable[[], Any],
           skip: Callable[[], Any]) -> Any:
    """`apply()` if `ok`, else `skip()`."""
    return tf.cond(ok, apply, skip)

  def leaves_failed(self, scale: tf.Tensor | None) -> bool:
    """Whether an update is applied whatever its verdict, the runner
    keeping or dropping the step's result by it (`scale`: the loss scale
    the gradients carry, or None)."""
    del scale
    return False

  def summed(self, tensors: list[tf.Tensor]) -> list[tf.Tensor]:
    """`tensors` (gradients, then losses) summed over the runner's shares
    of one model's batch."""
    return tensors


SOLO = UpdatePolicy()
