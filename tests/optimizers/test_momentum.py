"""Tests for sonnet_like/optimizers/momentum.py (shared: optimizer_common)."""

import keras
import numpy as np
import pytest
import sonnet as reference
import tensorflow as tf

import sonnet_like as snt
from tests import optimizer_common
from tests.optimizer_common import *  # pylint: disable=wildcard-import,unused-wildcard-import

LEARNING_RATE, MOMENTUM = 0.1, 0.9


def numpy_momentum(params, grads_per_step, nesterov):
  """Heavy-ball momentum written as a velocity, the form Keras documents."""
  params = [p.astype(np.float64) for p in params]
  velocity = [np.zeros_like(p) for p in params]
  for grads in grads_per_step:
    for i, g in enumerate(grads):
      velocity[i] = MOMENTUM * velocity[i] - LEARNING_RATE * g
      if nesterov:
        params[i] = params[i] + MOMENTUM * velocity[i] - LEARNING_RATE * g
      else:
        params[i] = params[i] + velocity[i]
  return params


@pytest.fixture(params=[False, True], ids=["heavy_ball", "nesterov"])
def case(request):
  nesterov = request.param
  return optimizer_common.Case(
      make=lambda: snt.optimizers.Momentum(LEARNING_RATE, MOMENTUM,
                                           use_nesterov=nesterov),
      numpy_rule=lambda p, g: numpy_momentum(p, g, nesterov),
      sonnet=lambda: reference.optimizers.Momentum(
          LEARNING_RATE, MOMENTUM, use_nesterov=nesterov),
      keras=lambda: keras.optimizers.SGD(LEARNING_RATE, momentum=MOMENTUM,
                                         nesterov=nesterov),
      distribute=not nesterov)


def test_slot_holds_accumulated_updates():
  w = tf.Variable([0., 0.])
  opt = snt.optimizers.Momentum(1., 0.5, name="accumulate")
  for g in ([1., 2.], [1., 0.]):
    opt.apply([tf.constant(g)], [w])
  (slot,) = opt.accumulated_momentum
  np.testing.assert_allclose(slot.numpy(), [1.5, 1.])  # 0.5 * [1, 2] + [1, 0]
  np.testing.assert_allclose(w.numpy(), [-2.5, -3.])
  assert slot.name == "accumulate/accumulated_momentum/Variable:0"


def test_momentum_may_be_a_variable():
  mu = tf.Variable(0.)
  w = tf.Variable([0.])
  opt = snt.optimizers.Momentum(1., mu)
  opt.apply([tf.constant([1.])], [w])
  mu.assign(1.)
  opt.apply([tf.constant([1.])], [w])
  np.testing.assert_allclose(w.numpy(), [-3.])  # -1, then -(1 * 1 + 1).


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(learning_rate=-1., momentum=0.9), ValueError,
     r"Momentum: learning_rate must be >= 0, got -1.0\."),
    (dict(learning_rate=0.1, momentum=-0.5), ValueError,
     r"Momentum: momentum must be >= 0, got -0.5\."),
    (dict(learning_rate=0.1, momentum=0.9, use_nesterov="yes"), TypeError,
     "Momentum: use_nesterov must be a bool, got 'yes'."),
])
def test_bad_constructor_arguments(kwargs, error, match):
  with pytest.raises(error, match=match):
    snt.optimizers.Momentum(**kwargs)
