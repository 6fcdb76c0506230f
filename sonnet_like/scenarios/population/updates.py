"""The update policy of a population member's step (`updates/policy.py`).

A member's update is applied only if finite by a branch that carries the
member's state, its predicate per member (`control_flow.cond`). With
`on_nonfinite="raise"` and no loss scale, a failed update is applied and
the population keeps or drops the member's whole step by its verdict (a
failed member stops); with "skip", or under a loss scale (an overflow's
verdict is True: the halved scale is kept), the failed update alone is
dropped, the rest of the step kept, as a solo run keeps it. On several
replicas a member's gradients and losses are summed over them
(`replicas.summed`). Accumulated sums are applied in the member's own step
(`step.py`).
"""

import tensorflow as tf

from sonnet_like.scenarios.population import control_flow
from sonnet_like.scenarios.population import replicas as replicas_lib
from sonnet_like.scenarios.updates import policy


class MemberUpdates(policy.UpdatePolicy):
  """Args: skips: `on_nonfinite="skip"`."""

  applies_accumulated_sums = True

  def __init__(self, skips: bool):
    self.skips = skips

  def cond(self, ok, apply, skip):
    return control_flow.cond(ok, apply, skip, per_member=True)

  def leaves_failed(self, scale: tf.Tensor | None) -> bool:
    return scale is None and not self.skips

  def summed(self, tensors):
    # The tensors themselves unless the member's step runs on several
    # replicas (`replicas.member_step`).
    return replicas_lib.summed(tensors)
