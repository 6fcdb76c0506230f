"""ExponentialMovingAverage: a zero-debiased moving average of a tensor."""

import numbers

import tensorflow as tf

from sonnet_like.core import checks
from sonnet_like.core import once
from sonnet_like.core import types
from sonnet_like.modules import metrics

NO_VALUE_ERROR = (
    "{module} has no value yet: its variables are created by the first "
    "update(). Call update(value) (or the module itself) first.")


def check_decay(owner: str, argument: str, decay: types.FloatLike,
                low_inclusive: bool) -> None:
  """Checks a decay given as a Python or NumPy number (tensors pass as is)."""
  if isinstance(decay, (tf.Tensor, tf.Variable)):
    return
  low_ok = (lambda d: d >= 0) if low_inclusive else (lambda d: d > 0)
  if (not isinstance(decay, numbers.Real) or isinstance(decay, bool) or
      not (low_ok(decay) and decay < 1)):
    interval = "[0, 1)" if low_inclusive else "(0, 1)"
    raise ValueError(f"{owner}: {argument} must be in range {interval}, got "
                     f"{decay!r}.")


class ExponentialMovingAverage(metrics.Metric):
  """Moving average with zero-debiasing, as in Adam's moment estimates.

  A hidden average starts at zero and moves towards each new value; dividing
  it by `1 - decay ** t` after `t` updates removes the pull towards the zero
  start, so the first update gives the value itself:

      hidden_t = hidden_{t-1} - (hidden_{t-1} - value_t) * (1 - decay)
      average_t = hidden_t / (1 - decay ** t)

      >>> import sonnet_like as snt, tensorflow as tf
      >>> ema = snt.ExponentialMovingAverage(0.5, name="ema")
      >>> float(ema(tf.constant(4.)))
      4.0
      >>> float(ema(tf.constant(1.)))  # Weights 1/3 and 2/3 on 4 and 1.
      2.0

  Attributes:
    average: The debiased average (a variable, None before the first update).
  """

  def __init__(self, decay: types.FloatLike, name: str | None = None):
    """Constructs the moving average.

    Args:
      decay: How much of the old average survives each update, in [0, 1):
        values near 1 average over many updates, 0 tracks the last value.
      name: Name of the module.
    """
    super().__init__(name=name)
    check_decay(type(self).__name__, "decay", decay, low_inclusive=True)
    self._decay = decay
    self._counter = tf.Variable(0, trainable=False, dtype=tf.int64,
                                name="counter")
    self._hidden = None
    self.average = None

  @property
  def counter(self) -> tf.Variable:
    """How many updates have been applied since construction or `reset`."""
    return self._counter

  @once.once
  def initialize(self, value: tf.Tensor) -> None:
    """Creates the variables with the shape and dtype of `value`."""
    value = tf.convert_to_tensor(value)
    checks.check_floating(self, value)
    if not value.shape.is_fully_defined():
      raise ValueError(f"{checks.describe(self)} needs a value of fully known "
                       f"shape to create its variables, got {value.shape}.")
    zeros = tf.zeros(value.shape, value.dtype)
    self._hidden = tf.Variable(zeros, trainable=False, name="hidden")
    self.average = tf.Variable(zeros, trainable=False, name="average")

  def update(self, value: tf.Tensor) -> None:
    """Moves the average towards `value` (shape and dtype of the first)."""
    value = tf.convert_to_tensor(value)
    self.initialize(value)
    self._check_like_average(value)
    self._counter.assign_add(1)
    steps = tf.cast(self._counter, value.dtype)
    decay = self._decay
    if isinstance(decay, (tf.Tensor, tf.Variable)):
      decay = tf.cast(decay, value.dtype)
    self._hidden.assign_sub((self._hidden - value) * (1 - decay))
    # tf.pow would make a float32 constant of a Python float in a graph.
    decay_power = tf.pow(tf.cast(decay, value.dtype), steps)
    self.average.assign(self._hidden / (1. - decay_power))

  @property
  def value(self) -> tf.Tensor:
    """The current debiased average."""
    if self.average is None:
      raise ValueError(NO_VALUE_ERROR.format(module=checks.describe(self)))
    return self.average.read_value()

  def reset(self) -> None:
    """Forgets every update: the counter and the averages return to zero."""
    self._counter.assign(tf.zeros_like(self._counter))
    if self.average is not None:
      self._hidden.assign(tf.zeros_like(self._hidden))
      self.average.assign(tf.zeros_like(self.average))

  def _check_like_average(self, value: tf.Tensor) -> None:
    if value.dtype != self.average.dtype:
      raise checks.InputDTypeError(
          f"{checks.describe(self)} was built for {self.average.dtype.name} "
          f"values, got {value.dtype.name}.")
    if not value.shape.is_compatible_with(self.average.shape):
      raise checks.InputShapeError(
          f"{checks.describe(self)} was built for values of shape "
          f"{self.average.shape}, got {value.shape}.")
