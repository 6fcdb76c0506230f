"""An optimizer's learning rate times a schedule of the step, in the step.

A scenario's `learning_rate_schedule` (e.g. `schedules.warmup_cosine`;
PPO's "linear", which anneals the rate to 0 as the PPO paper does)
multiplies every optimizer's learning rate by `schedule(step)`, where
`step` is the scenario's step counter (steps done: micro-batches with
`accumulate_steps`, rollouts for PPO). `LearningRates` (one per traced
step) applies it around every update and gives the rates for the logs
("learning_rate"). The schedule is a pure function of the step
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
  back. Nothing is assigned.

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

NOT_SETTABLE_ERROR = (
    "{owner}: learning_rate_schedule needs an optimizer whose learning rate "
    "can be set, got {optimizer!r} with learning_rate={rate!r}. Give the "
    "optimizer a constant learning rate (a number) and let "
    "learning_rate_schedule anneal it, or keep the optimizer's own schedule "
    "and pass learning_rate_schedule=None.")


def _is_keras(optimizer: Any) -> bool:
  return hasattr(optimizer, "apply_gradients")


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
    if _is_keras(optimizer):
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

  @contextlib.contextmanager
  def applied(self, step: Any) -> Iterator[tf.Tensor]:
    """Within the block (traced into the step), updates use the scaled
    rate; yields it (a float32 scalar) for the logs."""
    factor = schedules.factor_at(self.schedule, step)
    rate = tf.cast(self.base, tf.float32) * factor
    if _is_keras(self.optimizer):
      self.optimizer.learning_rate = rate
      yield rate
      return
    self.optimizer.learning_rate = rate
    try:
      yield rate
    finally:
      self.optimizer.learning_rate = self.base


def current_rate(optimizer: Any) -> tf.Tensor | None:
  """Traced: the rate `optimizer` applies now, as float32 (a Keras
  schedule's at the optimizer's `iterations`), or None if it has no rate
  to read."""
  rate = getattr(optimizer, "learning_rate", None)
  if rate is not None and callable(rate):
    iterations = getattr(optimizer, "iterations", None)
    rate = None if iterations is None else rate(iterations)
  if rate is None:
    return None
  try:
    return tf.cast(tf.convert_to_tensor(rate), tf.float32)
  except (TypeError, ValueError):
    return None


class LearningRates:
  """The scenario's schedule applied to each of its optimizers, and the
  rates they use for the logs (with or without a schedule).

  Args:
    owner: The scenario's name, for errors.
    schedule: The factor of the step, or None (rates as they are).
  """

  def __init__(self, owner: str, schedule: schedules.Schedule | None):
    self.owner, self.schedule = owner, schedule
    self.scaled: dict[int, ScaledLearningRate] = {}
    self.optimizers: dict[int, Any] = {}

  def register(self, optimizer: Any) -> None:
    """Takes `optimizer`'s base rate (eagerly, also when called in a
    trace); refuses a rate that cannot be set."""
    self.optimizers.setdefault(id(optimizer), optimizer)
    if self.schedule is None or id(optimizer) in self.scaled:
      return
    with tf.init_scope():
      self.scaled[id(optimizer)] = ScaledLearningRate(self.owner, optimizer,
                                                      self.schedule)

  @contextlib.contextmanager
  def applied(self, optimizer: Any, step: Any) -> Iterator[None]:
    """Traced: `optimizer`'s updates in the block use the rate of `step`
    (with a schedule; `step.TracedStep` enters it only then)."""
    self.register(optimizer)
    with self.scaled[id(optimizer)].applied(step):
      yield

  def logs(self, step: Any, names: dict[int, str]) -> dict[str, tf.Tensor]:
    """Traced: the rate of `step` of every optimizer built or updated so
    far (without a schedule, the rate it applies now): "learning_rate" for
    one, "learning_rate_<name>" for several (`names`: id -> the scenario's
    name for the optimizer)."""
    if self.schedule is not None:
      factor = schedules.factor_at(self.schedule, step)
      rates = {key: tf.cast(scaled.base, tf.float32) * factor
               for key, scaled in self.scaled.items()}
    else:
      rates = {key: current_rate(optimizer)
               for key, optimizer in self.optimizers.items()}
      rates = {key: rate for key, rate in rates.items() if rate is not None}
    if not rates:
      return {}
    if len(rates) == 1:
      return {"learning_rate": next(iter(rates.values()))}
    return {f"learning_rate_{names.get(key, i)}": rate
            for i, (key, rate) in enumerate(rates.items())}
