"""An optimizer's learning rate times a schedule of the step, in the step.

A scenario's `learning_rate_schedule` (e.g. `schedules.warmup_cosine`;
PPO's "linear", which anneals the rate to 0 as the PPO paper does)
multiplies every optimizer's learning rate by `schedule(step)`, where
`step` is the scenario's step counter (steps done: micro-batches with
`accumulate_steps`, rollouts for PPO). Each optimizer's `Updater` holds
its `ScaledLearningRate`, applies it around every update and gives the
rate for the logs ("learning_rate"). The schedule is a pure function of the step
(`schedules`), so a resumed run goes on exactly as an uninterrupted one;
nothing is added to the checkpoint.

How the rate reaches the optimizer depends on its kind, through its public
surface only:

- a Keras optimizer (`apply_gradients`): the product is assigned to its
  `learning_rate` variable at the start of every step (the base rate is the
  one it has when the scenario is called; a Keras `LearningRateSchedule` or
  callable rate is refused: use one or the other);
- a Sonnet-style optimizer (`apply`, a `learning_rate` attribute): while
  the step is traced its `learning_rate` is the product of the attribute (a
  number or a `tf.Variable`) and the schedule, then the attribute is put
  back. Nothing is assigned. The attribute is read when the step is traced,
  so a population member's swept rate (set on the attribute for its step)
  is the one the schedule scales.

    >>> import tensorflow as tf, sonnet_like as snt
    >>> from sonnet_like.scenarios import schedules
    >>> optimizer = snt.optimizers.SGD(0.5)
    >>> scaled = ScaledLearningRate(
    ...     "PPO", optimizer, schedules.LinearSchedule(1.0, 0.0, steps=4))
    >>> with scaled.applied(tf.constant(1)) as rate:
    ...   print(float(rate), float(optimizer.learning_rate))
    0.375 0.375
    >>> optimizer.learning_rate
    0.5
"""

import contextlib
from typing import Any, Iterator

import tensorflow as tf

from sonnet_like.scenarios import schedules
from sonnet_like.scenarios.updates import kinds

NOT_SETTABLE_ERROR = (
    "{owner}: learning_rate_schedule needs an optimizer whose learning rate "
    "can be set, got {optimizer!r} with learning_rate={rate!r}. Give the "
    "optimizer a constant learning rate (a number) and let "
    "learning_rate_schedule anneal it, or keep the optimizer's own schedule "
    "and pass learning_rate_schedule=None.")


class ScaledLearningRate:
  """Applies `base rate * schedule(step)` to `optimizer` (module docstring).

  Args:
    owner: Named in errors (the scenario, e.g. "PPO").
    optimizer: A Keras or Sonnet-style optimizer with a settable learning
      rate.
    schedule: The factor as a function of the step.

  Raises:
    ValueError: The optimizer's learning rate cannot be set (a Keras
      schedule or callable, or no `learning_rate` attribute).
  """

  def __init__(self, owner: str, optimizer: Any,
               schedule: schedules.Schedule):
    self.owner, self.optimizer, self.schedule = owner, optimizer, schedule
    rate = getattr(optimizer, "learning_rate", None)
    if kinds.is_keras(optimizer):
      if not hasattr(rate, "assign"):  # A Keras 3 schedule or callable.
        raise ValueError(NOT_SETTABLE_ERROR.format(
            owner=owner, optimizer=optimizer, rate=rate))
      self.base: Any = float(tf.convert_to_tensor(rate))
      try:  # tf-keras' schedules read as variables, but refuse to be set.
        optimizer.learning_rate = self.base  # The same value, a new object.
      except (TypeError, AttributeError) as e:
        raise ValueError(NOT_SETTABLE_ERROR.format(
            owner=owner, optimizer=optimizer, rate=rate)) from e
    else:
      if rate is None or callable(rate):
        raise ValueError(NOT_SETTABLE_ERROR.format(
            owner=owner, optimizer=optimizer, rate=rate))
      self.base = rate  # A number, or a variable read at every step.

  def base_now(self) -> Any:
    """The rate the schedule scales: a Keras optimizer's when the scenario
    was called, a Sonnet-style optimizer's attribute as it is now."""
    if kinds.is_keras(self.optimizer):
      return self.base
    return self.optimizer.learning_rate

  @contextlib.contextmanager
  def applied(self, step: Any) -> Iterator[tf.Tensor]:
    """Within the block (traced into the step), updates use the scaled
    rate; yields it (a float32 scalar) for the logs."""
    factor = schedules.factor_at(self.schedule, step)
    base = self.base_now()
    rate = tf.cast(base, tf.float32) * factor
    if kinds.is_keras(self.optimizer):
      self.optimizer.learning_rate = rate
      yield rate
      return
    self.optimizer.learning_rate = rate
    try:
      yield rate
    finally:
      self.optimizer.learning_rate = base
