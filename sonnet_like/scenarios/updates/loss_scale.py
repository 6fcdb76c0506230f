"""The loss scale of `precision="mixed_float16"`, inside the compiled step.

float16's smallest normal number is ~6e-5: small gradients would flush to
zero in the backward pass. `DynamicLossScale` holds the scale (checkpointed);
`GradientScales` seeds each backward pass with it and remembers which scale
every gradient carries, so the guarded update can unscale them (and refuse
gradients that were not made by `gradients`).
"""

from typing import Any, Sequence

import tensorflow as tf

UNSCALED_GRADIENTS_ERROR = (
    "{owner}: under precision='mixed_float16' the loss is scaled: compute "
    "the gradients with self.gradients(tape, loss, variables) and pass them "
    "to apply_update unchanged (apply_update unscales them and handles "
    "overflow). Gradients from tape.gradient, or changed after "
    "self.gradients, cannot be told apart from scaled ones.")


def _ref(tensor: Any) -> Any:
  return tensor.ref() if hasattr(tensor, "ref") else id(tensor)


class DynamicLossScale(tf.Module):
  """The loss scale of mixed_float16 training, updated in the compiled step.

  Gradients are computed from `loss * scale`, so that small ones survive the
  float16 backward pass, and divided by `scale` before they are applied. An
  update whose gradients overflow (finite loss, non-finite gradients) is
  skipped, counted in `overflows` and halves the scale (not below 1);
  `growth_interval` finite updates in a row double it. Its variables are in
  the checkpoint, so a resumed run scales exactly as an uninterrupted one.
  Assignments are arithmetic (no `tf.cond`), so the update also runs in
  replica context under a multi-replica strategy.
  """

  MAX_SCALE = 2.0 ** 40

  def __init__(self, initial_scale: float, growth_interval: int):
    super().__init__(name="loss_scale")
    kwargs = dict(trainable=False,
                  synchronization=tf.VariableSynchronization.ON_WRITE,
                  aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
    self.scale = tf.Variable(float(initial_scale), dtype=tf.float32,
                             name="scale", **kwargs)
    self.good_updates = tf.Variable(0, dtype=tf.int64, name="good_updates",
                                    **kwargs)
    self.overflows = tf.Variable(0, dtype=tf.int64, name="overflows",
                                 **kwargs)
    self.growth_interval = int(growth_interval)

  def update(self, grads_finite: tf.Tensor, loss_finite: tf.Tensor
             ) -> tf.Tensor:
    """Adjusts the scale after an update; returns whether it overflowed."""
    scale = self.scale.read_value()
    overflow = tf.logical_and(loss_finite, tf.logical_not(grads_finite))
    good = tf.logical_and(loss_finite, grads_finite)
    count = tf.where(good, self.good_updates.read_value() + 1,
                     tf.zeros([], tf.int64))
    grow = count >= self.growth_interval
    new_scale = tf.where(
        overflow, tf.maximum(scale / 2.0, 1.0),
        tf.where(grow, tf.minimum(scale * 2.0, self.MAX_SCALE), scale))
    self.scale.assign(new_scale)
    self.good_updates.assign(tf.where(grow, tf.zeros([], tf.int64), count))
    self.overflows.assign_add(tf.cast(overflow, tf.int64))
    return overflow


class GradientScales:
  """Scaled gradients of one traced step, and the scale each carries.

  `start` and `end` bracket a step's trace; in between, `gradients` takes
  gradients of `loss * scale` (by seeding the backward pass with the scale,
  so the loss need not be multiplied inside the tape) and `scale_of` gives
  the scale a list of them was made with.
  """

  def __init__(self, loss_scale: DynamicLossScale):
    self.loss_scale = loss_scale
    self._scales: dict[Any, tf.Tensor] = {}  # Gradient ref -> its scale.
    self._read: tuple[Any, tf.Tensor] | None = None

  def start(self) -> None:
    self._scales, self._read = {}, None

  end = start

  def gradients(self, tape: tf.GradientTape, loss: tf.Tensor,
                variables: Sequence[tf.Variable]) -> list[tf.Tensor | None]:
    """`tape.gradient` of the scaled loss; `scale_of` knows their scale."""
    # One read per graph: gradients of several losses (SAC's actor, critics
    # and temperature) share it, so one apply_update can unscale them all.
    graph = tf.compat.v1.get_default_graph()
    if self._read is None or self._read[0] is not graph:
      self._read = (graph, self.loss_scale.scale.read_value())
    scale = self._read[1]
    grads = tape.gradient(loss, variables,
                          output_gradients=tf.cast(scale, loss.dtype))
    for g in grads:
      if g is not None:
        self._scales[_ref(g)] = scale
    return grads

  def scale_of(self, grads: Sequence[Any], owner: str) -> tf.Tensor | None:
    """The one scale `grads` were made with; an error if they were not
    all made by `gradients` with the same scale."""
    scales = [self._scales.get(_ref(g)) for g in grads if g is not None]
    if any(x is None for x in scales) or len({id(x) for x in scales}) > 1:
      raise ValueError(UNSCALED_GRADIENTS_ERROR.format(owner=owner))
    return scales[0] if scales else None
