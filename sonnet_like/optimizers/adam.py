"""Adam: adaptive moment estimation (Kingma & Ba, 2014)."""

from typing import NamedTuple

import tensorflow as tf

from sonnet_like.core import autograph
from sonnet_like.core import types
from sonnet_like.optimizers import base


class _Terms(NamedTuple):
  """One step's scalars of Adam's rule in one dtype (`Adam._scalars`)."""
  learning_rate: tf.Tensor
  beta1: tf.Tensor
  one_minus_beta1: tf.Tensor
  beta2: tf.Tensor
  one_minus_beta2: tf.Tensor
  bias1: tf.Tensor  # 1 - beta1^t
  bias2: tf.Tensor  # 1 - beta2^t
  epsilon: tf.Tensor


def adam_rule(g, m, v, terms):
  """Algorithm 1 of the Adam paper with one step's scalars `terms`;
  returns (delta, new m, new v)."""
  m = terms.beta1 * m + terms.one_minus_beta1 * g
  v = terms.beta2 * v + terms.one_minus_beta2 * g * g
  m_hat = m / terms.bias1
  v_hat = v / terms.bias2
  return (terms.learning_rate * m_hat / (tf.sqrt(v_hat) + terms.epsilon),
          m, v)


class Adam(base.RuleOptimizer):
  """Adam: a step scaled by bias-corrected moment estimates.

  For each parameter, at step `t` (counted from 1):

      m <- beta1 * m + (1 - beta1) * update
      v <- beta2 * v + (1 - beta2) * update ** 2
      parameter <- parameter - learning_rate * m_hat / (sqrt(v_hat) + epsilon)

  with `m_hat = m / (1 - beta1 ** t)`, `v_hat = v / (1 - beta2 ** t)`. Note
  that `epsilon` is added to `sqrt(v_hat)` as in the paper; Keras adds it to
  `sqrt(v)`, which differs slightly while `t` is small.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> w = tf.Variable([1.0, 2.0])
      >>> opt = snt.optimizers.Adam(0.1, name="adam_example")
      >>> opt.apply([tf.constant([3.0, -0.5])], [w])
      >>> w.numpy()  # The first step moves each entry by ~learning_rate.
      array([0.9, 2.1], dtype=float32)
      >>> for v in (opt.step, opt.m[0], opt.v[0]):
      ...   print(v.name)
      adam_example/t:0
      adam_example/m/Variable:0
      adam_example/v/Variable:0

  Attributes:
    learning_rate: The step size (alpha in the paper).
    beta1: Decay of the first moment estimate.
    beta2: Decay of the second moment estimate.
    epsilon: Added to the denominator for stability.
    step: The int64 step counter `t` (created with the optimizer, as in
      Sonnet 2).
    m: First moment estimates, one per parameter.
    v: Second moment estimates, one per parameter.
  """

  def __init__(self, learning_rate: types.FloatLike | tf.Variable = 0.001,
               beta1: types.FloatLike | tf.Variable = 0.9,
               beta2: types.FloatLike | tf.Variable = 0.999,
               epsilon: types.FloatLike | tf.Variable = 1e-8,
               name: str | None = None):
    """Constructs an Adam optimizer.

    Args:
      learning_rate: The step size (>= 0) or a scalar `tf.Variable`.
      beta1: Decay of the first moment, in [0, 1).
      beta2: Decay of the second moment, in [0, 1).
      epsilon: Small constant (>= 0) added to the denominator.
      name: Name of the module.
    """
    super().__init__(name=name)
    check = base.check_hyperparameter
    self.learning_rate = check("Adam", "learning_rate", learning_rate)
    self.beta1 = check("Adam", "beta1", beta1, high=1., high_inclusive=False)
    self.beta2 = check("Adam", "beta2", beta2, high=1., high_inclusive=False)
    self.epsilon = check("Adam", "epsilon", epsilon)
    self.step = tf.Variable(0, trainable=False, name="t", dtype=tf.int64)
    self.m = []
    self.v = []

  def _slot_lists(self) -> list[tuple[str, str]]:
    return [("m", "m"), ("v", "v")]

  @autograph.as_written
  def _begin_step(self) -> None:
    self.step.assign_add(1)

  def _scalars(self, dtype: tf.DType) -> _Terms:
    learning_rate, beta1, beta2, epsilon, t = (
        tf.cast(x, dtype) for x in (self.learning_rate, self.beta1,
                                    self.beta2, self.epsilon, self.step))
    return _Terms(learning_rate, beta1, 1. - beta1, beta2, 1. - beta2,
                  1. - tf.pow(beta1, t), 1. - tf.pow(beta2, t), epsilon)

  @autograph.as_written
  def _apply_one(self, parameter, update, m, v):
    terms = self._step_scalars(parameter.dtype)
    base.apply_rule(parameter, update, [m, v],
                    lambda g, m, v: adam_rule(g, m, v, terms))
