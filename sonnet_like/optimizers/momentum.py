"""Momentum: SGD with (optionally Nesterov) momentum."""

import tensorflow as tf

from sonnet_like.core import autograph
from sonnet_like.core import types
from sonnet_like.optimizers import base


def momentum_rule(update, learning_rate, mu, accumulated, use_nesterov):
  """One step of the momentum rule; returns (delta, new accumulated)."""
  accumulated = mu * accumulated + update
  if use_nesterov:
    delta = learning_rate * (mu * accumulated + update)
  else:
    delta = learning_rate * accumulated
  return delta, accumulated


class Momentum(base.RuleOptimizer):
  """SGD with momentum.

  For each parameter, with `a` its accumulated momentum (zero at first):

      a <- momentum * a + update
      parameter <- parameter - learning_rate * a

  With `use_nesterov=True` the parameter step looks ahead instead:

      parameter <- parameter - learning_rate * (momentum * a + update)

      >>> import sonnet_like as snt, tensorflow as tf
      >>> w = tf.Variable([1.0])
      >>> opt = snt.optimizers.Momentum(0.1, momentum=0.5,
      ...                               name="momentum_example")
      >>> for _ in range(2):
      ...   opt.apply([tf.constant([1.0])], [w])
      >>> w.numpy()  # 1 - 0.1 * 1 - 0.1 * 1.5
      array([0.75], dtype=float32)
      >>> opt.accumulated_momentum[0].name
      'momentum_example/accumulated_momentum/Variable:0'

  Attributes:
    learning_rate: The step size.
    momentum: The decay of the accumulated momentum.
    use_nesterov: Whether the Nesterov variant is used.
    accumulated_momentum: One slot per parameter, created on the first
      `apply`.
  """

  def __init__(self, learning_rate: types.FloatLike | tf.Variable,
               momentum: types.FloatLike | tf.Variable,
               use_nesterov: bool = False, name: str | None = None):
    """Constructs a Momentum optimizer.

    Args:
      learning_rate: The step size (>= 0) or a scalar `tf.Variable`.
      momentum: The momentum coefficient (>= 0) or a scalar `tf.Variable`.
      use_nesterov: Whether to use Nesterov momentum.
      name: Name of the module.
    """
    super().__init__(name=name)
    self.learning_rate = base.check_hyperparameter(
        "Momentum", "learning_rate", learning_rate)
    self.momentum = base.check_hyperparameter("Momentum", "momentum", momentum)
    self.use_nesterov = base.check_bool("Momentum", "use_nesterov",
                                        use_nesterov)
    self.accumulated_momentum = []

  def _slot_lists(self) -> list[tuple[str, str]]:
    return [("accumulated_momentum", "accumulated_momentum")]

  def _scalars(self, dtype):
    return (tf.cast(self.learning_rate, dtype), tf.cast(self.momentum, dtype))

  @autograph.as_written
  def _apply_one(self, parameter, update, accumulated):
    learning_rate, mu = self._step_scalars(parameter.dtype)
    base.apply_rule(
        parameter, update, [accumulated],
        lambda g, a: momentum_rule(g, learning_rate, mu, a, self.use_nesterov))
