"""Metrics: modules that accumulate values across calls (`Sum`, `Mean`)."""

import abc
from typing import Any

import tensorflow as tf

from sonnet_like.core import base
from sonnet_like.core import checks
from sonnet_like.core import once

NOT_UPDATED_ERROR = (
    "{metric} has no value yet: its state is created by the first `update` "
    "(or call), which fixes the shape and dtype of the values it accepts. "
    "Call `metric.update(value)` first.")


class Metric(base.Module, metaclass=abc.ABCMeta):
  """Base class of metrics: `update`, `value`, `reset` and `__call__`.

  Subclasses define `initialize`, `update` and `reset`, and usually `value`:

      >>> import sonnet_like as snt, tensorflow as tf
      >>> class Last(snt.Metric):
      ...   def initialize(self, value):
      ...     pass
      ...   def update(self, value):
      ...     self.last = value
      ...   def reset(self):
      ...     self.last = None
      >>> Last(name="last")(tf.constant(2.0)) is None  # No `value` defined.
      True
  """

  @abc.abstractmethod
  def initialize(self, value: tf.Tensor) -> None:
    """Creates the state that depends on the first value (run once)."""

  @abc.abstractmethod
  def update(self, value: tf.Tensor) -> None:
    """Accumulates `value`."""

  @property
  def value(self) -> tf.Tensor | None:
    """The current value of the metric.

    Subclasses that report a value override this. It is not abstract (as in
    Sonnet 2): a metric that only accumulates, such as the custom mean and
    variance metrics `BaseBatchNorm` takes, defines `initialize`, `update`
    and `reset`; its `value` is None.
    """
    return None

  @abc.abstractmethod
  def reset(self) -> None:
    """Returns the metric to its state before any update."""

  def __call__(self, value: tf.Tensor) -> tf.Tensor:
    """Accumulates `value`; returns the metric's new value."""
    self.update(value)
    return self.value


class _Accumulator(Metric):
  """Shared parts of `Sum` and `Mean`: an element-wise running sum."""

  def __init__(self, name: str | None = None):
    super().__init__(name=name)
    self.sum = None

  @once.once
  def initialize(self, value: tf.Tensor) -> None:
    """Creates `sum` with the shape and dtype of the first value."""
    if not value.shape.is_fully_defined():
      raise ValueError(
          f"{checks.describe(self)} needs a value of known shape on its first "
          f"update, got shape {value.shape}. Update it once eagerly or give "
          "the tf.function an input_signature with a fully known shape.")
    self.sum = tf.Variable(tf.zeros_like(value), trainable=False, name="sum")

  def _accept(self, value: Any) -> tf.Tensor:
    """Converts `value`, creates the state, and checks shape and dtype."""
    value = tf.convert_to_tensor(value)
    self.initialize(value)
    checks.check_built_dtype(self, value, self.sum.dtype)
    if not value.shape.is_compatible_with(self.sum.shape):
      raise checks.InputShapeError(
          f"{checks.describe(self)} was built for values of shape "
          f"{self.sum.shape}, got {value.shape}.")
    return value

  def _check_updated(self) -> None:
    if self.sum is None:
      raise ValueError(NOT_UPDATED_ERROR.format(metric=checks.describe(self)))


class Sum(_Accumulator):
  """Element-wise sum of the values seen since the last reset.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> total = snt.Sum(name="total")
      >>> _ = total(tf.constant([1.0, 2.0]))
      >>> total(tf.constant([3.0, 4.0])).numpy()
      array([4., 6.], dtype=float32)

  Attributes:
    sum: The running sum, created on the first update with the value's shape
      and dtype (None before).
  """

  def update(self, value: tf.Tensor) -> None:
    """Adds `value` (same shape and dtype as the first value) to the sum."""
    value = self._accept(value)
    self.sum.assign_add(value)

  @property
  def value(self) -> tf.Tensor:
    """The sum as a tensor."""
    self._check_updated()
    return tf.convert_to_tensor(self.sum)

  def reset(self) -> None:
    """Sets the sum to zero (nothing to do before the first update)."""
    if self.sum is not None:
      self.sum.assign(tf.zeros_like(self.sum))


class Mean(_Accumulator):
  """Element-wise mean of the values seen since the last reset.

  Each update counts once, whatever its shape: the mean is over updates, not
  over the entries of a value. Integer values give a floating-point mean
  (`tf.math.truediv`: float64 for int32 and int64).

      >>> import sonnet_like as snt, tensorflow as tf
      >>> mean = snt.Mean(name="mean_loss")
      >>> for loss in (1.0, 2.0, 6.0):
      ...   _ = mean(tf.constant(loss))
      >>> float(mean.value)
      3.0

  Attributes:
    sum: The running sum (None before the first update).
    count: The number of updates, int64 (created with the module, as in
      Sonnet 2).
  """

  def __init__(self, name: str | None = None):
    super().__init__(name=name)
    self.count = tf.Variable(0, dtype=tf.int64, trainable=False, name="count")

  def update(self, value: tf.Tensor) -> None:
    """Adds `value` (same shape and dtype as the first value) to the mean."""
    value = self._accept(value)
    self.sum.assign_add(value)
    self.count.assign_add(1)

  @property
  def value(self) -> tf.Tensor:
    """The mean (NaN before any update since the last reset)."""
    self._check_updated()
    return self.sum / tf.cast(self.count, self.sum.dtype)

  def reset(self) -> None:
    """Sets the sum and the count to zero."""
    if self.sum is not None:
      self.sum.assign(tf.zeros_like(self.sum))
      self.count.assign(0)
