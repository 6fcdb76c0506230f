"""Adam: adaptive moment estimation (Kingma & Ba, 2014)."""

from typing import Any, NamedTuple

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
  beta1_power: tf.Tensor  # beta1^t
  beta2_power: tf.Tensor  # beta2^t
  step_size: tf.Tensor  # learning_rate * sqrt(1 - beta2^t) / (1 - beta1^t)
  epsilon_hat: tf.Tensor  # epsilon * sqrt(1 - beta2^t)


def adam_rule(g, m, v, terms):
  """Algorithm 1 of the Adam paper with one step's scalars `terms`;
  returns (delta, new m, new v).

  The arithmetic is TensorFlow's fused `ResourceApplyAdam` kernel's, in
  its order, so each entry has the kernel's bits: the bias corrections
  are folded into `step_size` and `epsilon_hat` (the paper's rule,
  rearranged), and `m`, `v` move by their difference to the update."""
  m = m + (g - m) * terms.one_minus_beta1
  v = v + (g * g - v) * terms.one_minus_beta2
  return (m * terms.step_size) / (tf.sqrt(v) + terms.epsilon_hat), m, v


def _is_resource(parameter) -> bool:
  """Whether `parameter` is a variable the fused kernels update in place
  (not a population member's, whose value is a tensor)."""
  handle = getattr(parameter, "handle", None)
  return tf.is_tensor(handle) and handle.dtype == tf.resource


class Adam(base.RuleOptimizer):
  """Adam: a step scaled by bias-corrected moment estimates.

  For each parameter, at step `t` (counted from 1):

      m <- beta1 * m + (1 - beta1) * update
      v <- beta2 * v + (1 - beta2) * update ** 2
      parameter <- parameter - learning_rate * m_hat / (sqrt(v_hat) + epsilon)

  with `m_hat = m / (1 - beta1 ** t)`, `v_hat = v / (1 - beta2 ** t)`. Note
  that `epsilon` is added to `sqrt(v_hat)` as in the paper; Keras adds it to
  `sqrt(v)`, which differs slightly while `t` is small. A variable's dense
  update runs TensorFlow's fused `ResourceApplyAdam` with `epsilon *
  sqrt(1 - beta2 ** t)` as its epsilon (the same rule, rearranged); other
  updates (sparse rows, a population member's values) do its arithmetic in
  its order, so they have the same bits.

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
    beta1_power, beta2_power = tf.pow(beta1, t), tf.pow(beta2, t)
    root = tf.sqrt(1. - beta2_power)
    return _Terms(learning_rate, beta1, 1. - beta1, beta2, 1. - beta2,
                  beta1_power, beta2_power,
                  learning_rate * root / (1. - beta1_power), epsilon * root)

  def _held_by_dtype(self) -> list[tuple[str, Any, float, str]]:
    return [("beta1", self.beta1, 1., "NaN"), ("beta2", self.beta2, 1., "NaN"),
            ("epsilon", self.epsilon, 0., "NaN where a gradient is 0")]

  @autograph.as_written
  def _apply_one(self, parameter, update, m, v):
    terms = self._step_scalars(parameter.dtype)
    if _is_resource(parameter) and not isinstance(update, tf.IndexedSlices):
      # One pass over the parameter instead of a dozen (3x faster over
      # ten SAC members' stacked weights: bench_adam.py), with the bits
      # of `adam_rule`.
      tf.raw_ops.ResourceApplyAdam(
          var=parameter.handle, m=m.handle, v=v.handle,
          beta1_power=terms.beta1_power, beta2_power=terms.beta2_power,
          lr=terms.learning_rate, beta1=terms.beta1, beta2=terms.beta2,
          epsilon=terms.epsilon_hat, grad=update)
    else:
      base.apply_rule(parameter, update, [m, v],
                      lambda g, m, v: adam_rule(g, m, v, terms))
