"""RMSProp: steps divided by a running root mean square of the updates."""

from typing import Any

import tensorflow as tf

from sonnet_like.core import autograph
from sonnet_like.core import types
from sonnet_like.optimizers import base


def rmsprop_rule(g, learning_rate, decay, mu, epsilon, mom, ms, mg=None):
  """One RMSProp step; returns (delta, new mom, new ms[, new mg])."""
  ms = tf.square(g) * (1. - decay) + ms * decay
  if mg is None:
    denominator = ms + epsilon
  else:
    mg = g * (1. - decay) + mg * decay
    denominator = ms - tf.square(mg) + epsilon
  mom = mu * mom + learning_rate * g * tf.math.rsqrt(denominator)
  return (mom, mom, ms) if mg is None else (mom, mom, ms, mg)


class RMSProp(base.RuleOptimizer):
  """RMSProp, with optional momentum and centring.

  For each parameter:

      ms <- decay * ms + (1 - decay) * update ** 2
      mom <- momentum * mom + learning_rate * update / sqrt(ms + epsilon)
      parameter <- parameter - mom

  With `centered=True` a running mean of the updates, `mg`, is kept too and
  the denominator becomes `sqrt(ms - mg ** 2 + epsilon)` (an estimate of the
  variance instead of the second moment). Momentum is plain, not Nesterov.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> w = tf.Variable([1.0])
      >>> opt = snt.optimizers.RMSProp(0.01, name="rmsprop_example")
      >>> opt.apply([tf.constant([2.0])], [w])
      >>> w.numpy()  # 1 - 0.01 * 2 / sqrt(0.1 * 4)
      array([0.96837723], dtype=float32)
      >>> [v.name for v in (opt.mom[0], opt.ms[0])]
      ['rmsprop_example/momentum/Variable:0', 'rmsprop_example/rms/Variable:0']

  Attributes:
    learning_rate: The step size.
    decay: Decay of the running averages.
    momentum: The momentum coefficient.
    epsilon: Added inside the square root for stability.
    centered: Whether the variance is estimated with `mg`.
    mom: Momentum slots, one per parameter.
    ms: Running mean of squared updates, one per parameter.
    mg: Running mean of updates, one per parameter (empty unless centered).
  """

  def __init__(self, learning_rate: types.FloatLike | tf.Variable,
               decay: types.FloatLike | tf.Variable = 0.9,
               momentum: types.FloatLike | tf.Variable = 0.0,
               epsilon: types.FloatLike | tf.Variable = 1e-10,
               centered: bool = False, name: str | None = None):
    """Constructs an RMSProp optimizer.

    Args:
      learning_rate: The step size (>= 0) or a scalar `tf.Variable`.
      decay: Decay of the running averages, in [0, 1].
      momentum: The momentum coefficient (>= 0).
      epsilon: Small constant (>= 0) added inside the square root.
      centered: Whether to normalise by the estimated variance of the
        updates rather than by their second moment (one more slot).
      name: Name of the module.
    """
    super().__init__(name=name)
    check = base.check_hyperparameter
    self.learning_rate = check("RMSProp", "learning_rate", learning_rate)
    self.decay = check("RMSProp", "decay", decay, high=1.)
    self.momentum = check("RMSProp", "momentum", momentum)
    self.epsilon = check("RMSProp", "epsilon", epsilon)
    self.centered = base.check_bool("RMSProp", "centered", centered)
    self.mom = []
    self.ms = []
    self.mg = []

  def _slot_lists(self) -> list[tuple[str, str]]:
    centered = [("mg", "mg")] if self.centered else []
    return [("mom", "momentum"), ("ms", "rms")] + centered

  def _held_by_dtype(self) -> list[tuple[str, Any, float, str]]:
    return [("decay", self.decay, 1.,
             "learning_rate * update / sqrt(epsilon), the mean square never "
             "moving from 0"),
            ("epsilon", self.epsilon, 0., "NaN where a gradient is 0")]

  def _scalars(self, dtype):
    return tuple(tf.cast(x, dtype) for x in (
        self.learning_rate, self.decay, self.momentum, self.epsilon))

  @autograph.as_written
  def _apply_one(self, parameter, update, *slots):
    learning_rate, decay, mu, epsilon = self._step_scalars(parameter.dtype)
    base.apply_rule(
        parameter, update, slots,
        lambda g, *state: rmsprop_rule(g, learning_rate, decay, mu, epsilon,
                                       *state))
