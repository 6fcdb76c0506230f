"""Tests for sonnet_like/optimizers/rmsprop.py (shared: optimizer_common)."""

import keras
import numpy as np
import pytest
import sonnet as reference
import tensorflow as tf

import sonnet_like as snt
from tests import optimizer_common
from tests.optimizer_common import *  # pylint: disable=wildcard-import,unused-wildcard-import

LEARNING_RATE, DECAY, EPSILON = 0.01, 0.8, 1e-6


def numpy_rmsprop(params, grads_per_step, momentum, centered):
  params = [p.astype(np.float64) for p in params]
  ms = [np.zeros_like(p) for p in params]
  mg = [np.zeros_like(p) for p in params]
  mom = [np.zeros_like(p) for p in params]
  for grads in grads_per_step:
    for i, g in enumerate(grads):
      ms[i] = DECAY * ms[i] + (1 - DECAY) * g**2
      mg[i] = DECAY * mg[i] + (1 - DECAY) * g
      variance = ms[i] - mg[i]**2 if centered else ms[i]
      mom[i] = momentum * mom[i] + LEARNING_RATE * g / np.sqrt(variance +
                                                               EPSILON)
      params[i] = params[i] - mom[i]
  return params


@pytest.fixture(params=[(0., False), (0.5, True)],
                ids=["plain", "centered_momentum"])
def case(request):
  momentum, centered = request.param
  return optimizer_common.Case(
      make=lambda: snt.optimizers.RMSProp(LEARNING_RATE, DECAY, momentum,
                                          EPSILON, centered),
      numpy_rule=lambda p, g: numpy_rmsprop(p, g, momentum, centered),
      sonnet=lambda: reference.optimizers.RMSProp(LEARNING_RATE, DECAY,
                                                  momentum, EPSILON, centered),
      keras=lambda: keras.optimizers.RMSprop(
          LEARNING_RATE, rho=DECAY, momentum=momentum, epsilon=EPSILON,
          centered=centered),
      distribute=centered)


def test_slots_and_names():
  opt = snt.optimizers.RMSProp(0.1, centered=True, name="centred")
  w = tf.Variable([1., 2.])
  opt.apply([tf.constant([2., 0.])], [w])
  assert [v.name for v in opt.mom + opt.ms + opt.mg] == [
      "centred/momentum/Variable:0", "centred/rms/Variable:0",
      "centred/mg/Variable:0"]
  np.testing.assert_allclose(opt.ms[0].numpy(), [0.4, 0.], rtol=1e-6)
  np.testing.assert_allclose(opt.mg[0].numpy(), [0.2, 0.], rtol=1e-6)
  assert not snt.optimizers.RMSProp(0.1).mg


def test_defaults_match_sonnet():
  opt = snt.optimizers.RMSProp(0.1)
  assert (opt.decay, opt.momentum, opt.epsilon, opt.centered) == (
      0.9, 0.0, 1e-10, False)


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(decay=1.5), ValueError,
     r"RMSProp: decay must be in \[0, 1\], got 1.5\."),
    (dict(momentum=-1.), ValueError, r"RMSProp: momentum must be >= 0"),
    (dict(epsilon=-1.), ValueError, r"RMSProp: epsilon must be >= 0"),
    (dict(centered=1), TypeError, "RMSProp: centered must be a bool, got 1."),
])
def test_bad_constructor_arguments(kwargs, error, match):
  with pytest.raises(error, match=match):
    snt.optimizers.RMSProp(0.1, **kwargs)


@pytest.mark.parametrize("dtype,kwargs,message", [
    (tf.float16, {}, r"RMSProp: epsilon=1e-10 is 0.0 in float16, the dtype "
     r"of parameter w:0, so its updates would be NaN where a gradient is 0\."),
    (tf.bfloat16, dict(decay=0.999, epsilon=1e-3),
     r"RMSProp: decay=0.999 is 1.0 in bfloat16"),
])
def test_hyperparameters_the_parameters_dtype_cannot_hold_are_refused(
    dtype, kwargs, message):
  w = tf.Variable(tf.ones([3], dtype), name="w")
  opt = snt.optimizers.RMSProp(0.01, **kwargs)
  with pytest.raises(ValueError, match=message):
    opt.apply([tf.constant([1., 0., -1.], dtype)], [w])
  assert not opt.ms  # Refused before any slot was made.
  opt = snt.optimizers.RMSProp(0.01, epsilon=1e-3)  # Held: it trains.
  opt.apply([tf.constant([1., 0., -1.], dtype)], [w])
  values = w.numpy().astype(np.float32)
  assert values[0] < 1. == values[1] < values[2]
