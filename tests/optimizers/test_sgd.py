"""Tests for sonnet_like/optimizers/sgd.py (shared ones: optimizer_common)."""

import keras
import numpy as np
import pytest
import sonnet as reference
import tensorflow as tf

import sonnet_like as snt
from tests import optimizer_common
from tests.optimizer_common import *  # pylint: disable=wildcard-import,unused-wildcard-import

LEARNING_RATE = 0.1


def numpy_sgd(params, grads_per_step):
  params = [p.astype(np.float64) for p in params]
  for grads in grads_per_step:
    params = [p - LEARNING_RATE * g for p, g in zip(params, grads)]
  return params


@pytest.fixture
def case():
  return optimizer_common.Case(
      make=lambda: snt.optimizers.SGD(LEARNING_RATE),
      numpy_rule=numpy_sgd,
      sonnet=lambda: reference.optimizers.SGD(LEARNING_RATE),
      keras=lambda: keras.optimizers.SGD(LEARNING_RATE),
      stateful=False)


def test_has_no_state():
  opt = snt.optimizers.SGD(0.1, name="stateless")
  opt.apply([tf.ones([2])], [tf.Variable(tf.ones([2]))])
  # Sonnet 2's `variables` raises for a module without any.
  with pytest.raises(ValueError, match="does not currently contain any"):
    opt.variables  # pylint: disable=pointless-statement
  assert isinstance(opt, snt.Optimizer)


def test_sparse_duplicates_accumulate():
  w = tf.Variable(tf.zeros([3]))
  snt.optimizers.SGD(1.).apply(
      [tf.IndexedSlices(tf.constant([1., 2., 4.]), tf.constant([2, 0, 2]))],
      [w])
  np.testing.assert_allclose(w.numpy(), [-2., 0., -5.])


def test_float64_parameters():
  w = tf.Variable(tf.ones([2], tf.float64))
  snt.optimizers.SGD(0.5).apply([tf.constant([1., 2.], tf.float64)], [w])
  assert w.dtype == tf.float64
  np.testing.assert_allclose(w.numpy(), [0.5, 0.])


def test_learning_rate_variable_is_checkpointed(tmp_path):
  opt = snt.optimizers.SGD(tf.Variable(0.25))
  path = tf.train.Checkpoint(opt=opt).save(str(tmp_path / "ckpt"))
  fresh = snt.optimizers.SGD(tf.Variable(1.))
  tf.train.Checkpoint(opt=fresh).restore(path).assert_consumed()
  assert fresh.learning_rate.numpy() == 0.25


@pytest.mark.parametrize("learning_rate,error,match", [
    (-0.1, ValueError, r"SGD: learning_rate must be >= 0, got -0.1\."),
    ("0.1", TypeError, "SGD: learning_rate must be a number or a scalar"),
    (tf.Variable([0.1, 0.2]), ValueError,
     "SGD: learning_rate must be a scalar, got"),
])
def test_bad_constructor_arguments(learning_rate, error, match):
  with pytest.raises(error, match=match):
    snt.optimizers.SGD(learning_rate)


def test_repr():
  assert repr(snt.optimizers.SGD(0.1)) == "SGD(learning_rate=0.1)"


def test_autograph_converts_the_default_begin_step():
  # A docstring-only body made AutoGraph warn ("could not transform") on
  # every trace of a scenario step with SGD, Momentum or RMSProp.
  import inspect  # pylint: disable=g-import-not-at-top
  from sonnet_like.optimizers import base  # pylint: disable=g-import-not-at-top
  step = inspect.unwrap(base.RuleOptimizer._begin_step)
  assert "def tf___begin_step" in tf.autograph.to_code(step)
