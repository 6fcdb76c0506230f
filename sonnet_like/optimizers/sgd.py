"""SGD: stochastic gradient descent, `parameter -= learning_rate * update`."""

import tensorflow as tf

from sonnet_like.core import autograph
from sonnet_like.core import types
from sonnet_like.optimizers import base


class SGD(base.RuleOptimizer):
  """Stochastic gradient descent; it keeps no state.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> w = tf.Variable([1.0, 2.0])
      >>> snt.optimizers.SGD(0.5, name="sgd_example").apply(
      ...     [tf.constant([1.0, -2.0])], [w])
      >>> w.numpy()
      array([0.5, 3. ], dtype=float32)

  Attributes:
    learning_rate: The step size, a number or a scalar `tf.Variable`.
  """

  def __init__(self, learning_rate: types.FloatLike | tf.Variable,
               name: str | None = None):
    """Constructs an SGD optimizer.

    Args:
      learning_rate: The step size (>= 0), or a scalar `tf.Variable` that a
        schedule may assign.
      name: Name of the module.
    """
    super().__init__(name=name)
    self.learning_rate = base.check_hyperparameter("SGD", "learning_rate",
                                                   learning_rate)

  @autograph.as_written
  def _apply_one(self, parameter, update):
    if isinstance(update, tf.IndexedSlices):
      learning_rate = tf.cast(self.learning_rate, update.values.dtype)
      # Rows that share an index accumulate in the scatter.
      parameter.scatter_sub(
          tf.IndexedSlices(update.values * learning_rate, update.indices))
    else:
      learning_rate = tf.cast(self.learning_rate, update.dtype)
      parameter.assign_sub(update * learning_rate)
