"""Tests for sonnet_like/optimizers/adam.py (shared: optimizer_common)."""

import keras
import numpy as np
import pytest
import sonnet as reference
import tensorflow as tf

import sonnet_like as snt
from tests import optimizer_common
from tests.optimizer_common import *  # pylint: disable=wildcard-import,unused-wildcard-import

LEARNING_RATE, BETA1, BETA2, EPSILON = 0.01, 0.8, 0.95, 1e-7


def numpy_adam(params, grads_per_step, epsilon=EPSILON):
  """Algorithm 1 of Kingma & Ba (epsilon added to sqrt(v_hat))."""
  params = [p.astype(np.float64) for p in params]
  m = [np.zeros_like(p) for p in params]
  v = [np.zeros_like(p) for p in params]
  for t, grads in enumerate(grads_per_step, start=1):
    for i, g in enumerate(grads):
      m[i] = BETA1 * m[i] + (1 - BETA1) * g
      v[i] = BETA2 * v[i] + (1 - BETA2) * g**2
      m_hat, v_hat = m[i] / (1 - BETA1**t), v[i] / (1 - BETA2**t)
      params[i] = params[i] - LEARNING_RATE * m_hat / (np.sqrt(v_hat) +
                                                       epsilon)
  return params


@pytest.fixture
def case():
  return optimizer_common.Case(
      make=lambda: snt.optimizers.Adam(LEARNING_RATE, BETA1, BETA2, EPSILON),
      numpy_rule=numpy_adam,
      sonnet=lambda: reference.optimizers.Adam(LEARNING_RATE, BETA1, BETA2,
                                               EPSILON),
      # Keras adds epsilon to sqrt(v) rather than sqrt(v_hat), a difference
      # that this small epsilon hides (see the tests below).
      keras=lambda: keras.optimizers.Adam(LEARNING_RATE, BETA1, BETA2,
                                          EPSILON))


def test_epsilon_placement_differs_from_keras_only_through_bias_correction():
  params, grads = optimizer_common._values()  # pylint: disable=protected-access
  keras_optimizer = keras.optimizers.Adam(LEARNING_RATE, BETA1, BETA2,
                                          epsilon=0.)
  keras_result = optimizer_common._run(  # pylint: disable=protected-access
      lambda g, p: keras_optimizer.apply_gradients(zip(g, p)), params, grads)
  ours = optimizer_common._run(  # pylint: disable=protected-access
      snt.optimizers.Adam(LEARNING_RATE, BETA1, BETA2, 0.).apply, params,
      grads)
  for a, b in zip(ours, keras_result):
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
  for a, b in zip(ours, numpy_adam(params, grads, epsilon=0.)):
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_large_epsilon_is_added_to_sqrt_v_hat():
  params, grads = optimizer_common._values()  # pylint: disable=protected-access
  ours = optimizer_common._run(  # pylint: disable=protected-access
      snt.optimizers.Adam(LEARNING_RATE, BETA1, BETA2, 0.1).apply, params,
      grads)
  for a, b in zip(ours, numpy_adam(params, grads, epsilon=0.1)):
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
  keras_optimizer = keras.optimizers.Adam(LEARNING_RATE, BETA1, BETA2, 0.1)
  keras_result = optimizer_common._run(  # pylint: disable=protected-access
      lambda g, p: keras_optimizer.apply_gradients(zip(g, p)), params, grads)
  assert not np.allclose(ours[0], keras_result[0], rtol=1e-4, atol=0)


def test_defaults_match_the_paper():
  opt = snt.optimizers.Adam()
  assert (opt.learning_rate, opt.beta1, opt.beta2, opt.epsilon) == (
      0.001, 0.9, 0.999, 1e-8)


def test_step_counts_applies_and_is_created_with_the_optimizer():
  opt = snt.optimizers.Adam(name="counting")
  # As in Sonnet 2, the step exists before the first apply.
  assert [v.name for v in opt.variables] == ["counting/t:0"]
  w = tf.Variable([1.])
  for _ in range(3):
    opt.apply([tf.constant([1.])], [w])
  assert opt.step.dtype == tf.int64 and int(opt.step) == 3
  assert opt.step.name == "counting/t:0"
  assert [v.name for v in opt.m + opt.v] == [
      "counting/m/Variable:0", "counting/v/Variable:0"]


def test_restores_a_dm_sonnet_checkpoint(tmp_path):
  params, grads = optimizer_common._values()  # pylint: disable=protected-access
  theirs = reference.optimizers.Adam(LEARNING_RATE, BETA1, BETA2, EPSILON)
  their_vars = [tf.Variable(p) for p in params]
  for g in grads[:2]:
    theirs.apply([tf.constant(x) for x in g], their_vars)
  path = tf.train.Checkpoint(opt=theirs).save(str(tmp_path / "ckpt"))
  ours = snt.optimizers.Adam(LEARNING_RATE, BETA1, BETA2, EPSILON)
  our_vars = [tf.Variable(v) for v in their_vars]
  status = tf.train.Checkpoint(opt=ours).restore(path)
  for g in grads[2:]:
    theirs.apply([tf.constant(x) for x in g], their_vars)
    ours.apply([tf.constant(x) for x in g], our_vars)
  status.assert_consumed()
  for a, b in zip(our_vars, their_vars):
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)


@pytest.mark.parametrize("kwargs,match", [
    (dict(learning_rate=-1.), r"Adam: learning_rate must be >= 0, got -1.0\."),
    (dict(beta1=1.), r"Adam: beta1 must be in \[0, 1\), got 1.0\."),
    (dict(beta2=-0.1), r"Adam: beta2 must be in \[0, 1\), got -0.1\."),
    (dict(epsilon=-1e-8), r"Adam: epsilon must be >= 0, got -1e-08\."),
])
def test_bad_constructor_arguments(kwargs, match):
  with pytest.raises(ValueError, match=match):
    snt.optimizers.Adam(**kwargs)


def _fused_ops(optimizer, parameter, update):
  """The op types a compiled `apply` of `update` to `parameter` runs."""
  apply = tf.function(lambda: optimizer.apply([update()], [parameter]))
  return {op.type for op in apply.get_concrete_function().graph
          .get_operations()}


def test_a_dense_update_of_a_variable_runs_the_fused_kernel():
  w = tf.Variable(tf.ones([3, 2]))
  dense = _fused_ops(snt.optimizers.Adam(), w, lambda: tf.ones([3, 2]))
  assert "ResourceApplyAdam" in dense
  sparse = _fused_ops(snt.optimizers.Adam(), w, lambda: tf.IndexedSlices(
      tf.ones([1, 2]), tf.constant([1]), tf.constant([3, 2])))
  assert "ResourceApplyAdam" not in sparse


@pytest.mark.parametrize("shape", [[1], [7], [257, 33]])
def test_the_rule_has_the_fused_kernels_bits(shape):
  """Sparse rows (and a population member's values) take `adam_rule`; a
  variable's dense update the fused kernel: the same bits, every step."""
  rng = np.random.default_rng(4)
  start = rng.normal(size=shape).astype(np.float32)
  fused, rule = tf.Variable(start), tf.Variable(start)
  fused_opt, rule_opt = (snt.optimizers.Adam(3e-4) for _ in range(2))
  rows = tf.range(shape[0])
  for scale in (1., 1e-3, 50.):
    g = tf.constant(scale * rng.normal(size=shape).astype(np.float32))
    fused_opt.apply([g], [fused])
    rule_opt.apply([tf.IndexedSlices(g, rows, tf.constant(shape))], [rule])
    for a, b in zip([fused, *fused_opt.m, *fused_opt.v],
                    [rule, *rule_opt.m, *rule_opt.v]):
      np.testing.assert_array_equal(a.numpy(), b.numpy())
  assert not np.array_equal(fused.numpy(), start)


def test_a_members_stacked_rule_has_each_solo_kernels_bits():
  """As a population runs it: the rule on `[members, ...]` values, each
  member's scalars its own (a learning rate swept) broadcast over its
  values, against each member's solo fused steps."""
  rng = np.random.default_rng(5)
  rates, shape = [1e-2, 3e-4, 0.5], [5, 4]
  start = rng.normal(size=[len(rates)] + shape).astype(np.float32)
  grads = [rng.normal(size=start.shape).astype(np.float32) for _ in range(3)]
  solos = [tf.Variable(start[i]) for i in range(len(rates))]
  optimizers = [snt.optimizers.Adam(rate) for rate in rates]
  value, m, v = tf.constant(start), tf.zeros_like(start), tf.zeros_like(start)
  for g in grads:
    for i, (solo, opt) in enumerate(zip(solos, optimizers)):
      opt.apply([tf.constant(g[i])], [solo])
    terms = [opt._scalars(tf.float32) for opt in optimizers]  # pylint: disable=protected-access
    stacked = type(terms[0])(*[tf.reshape(tf.stack(x), [-1, 1, 1])
                               for x in zip(*terms)])
    delta, m, v = snt.optimizers.adam.adam_rule(g, m, v, stacked)
    value = value - delta
  for i, solo in enumerate(solos):
    np.testing.assert_array_equal(value[i].numpy(), solo.numpy())
    np.testing.assert_array_equal(m[i].numpy(), optimizers[i].m[0].numpy())


@pytest.mark.parametrize("dtype,kwargs,message", [
    (tf.bfloat16, {}, r"Adam: beta2=0.999 is 1.0 in bfloat16, the dtype of "
     r"parameter w:0, so its updates would be NaN\. Keep the parameters in "
     r"float32"),
    (tf.float16, {}, r"Adam: epsilon=1e-08 is 0.0 in float16"),
    (tf.float16, dict(beta1=0.9999), r"Adam: beta1=0.9999 is 1.0 in float16"),
])
def test_hyperparameters_the_parameters_dtype_cannot_hold_are_refused(
    dtype, kwargs, message):
  """Each would make NaN updates (0 / 0), silently, as in dm-sonnet."""
  w = tf.Variable(tf.ones([3], dtype), name="w")
  opt = snt.optimizers.Adam(**kwargs)
  with pytest.raises(ValueError, match=message):
    opt.apply([tf.ones([3], dtype)], [w])
  assert not opt.m and not opt.v  # Refused before any slot was made.
  np.testing.assert_array_equal(w.numpy(), np.ones([3]))


def test_hyperparameters_low_precision_holds_are_taken():
  w = tf.Variable(tf.ones([3], tf.bfloat16))
  opt = snt.optimizers.Adam(0.05, beta2=0.99, epsilon=1e-3)
  for _ in range(2):
    opt.apply([tf.constant([1., 0., -1.], tf.bfloat16)], [w])
  values = w.numpy().astype(np.float32)
  assert np.all(np.isfinite(values)) and values[0] < 1. < values[2]
  assert values[1] == 1.  # A zero gradient moves nothing.
