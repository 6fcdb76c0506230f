"""Tests for sonnet_like/modules/remat.py."""

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from tests.optimizer_common import _mirrored_strategy


def _block(**kwargs):
  tf.random.set_seed(0)
  return snt.nets.Transformer(1, 2, 8, 16, causal=True, **kwargs).blocks[0]


def _gradients(module, block, x):
  with tf.GradientTape() as tape:
    tape.watch(x)
    loss = tf.reduce_sum(tf.sin(module(x)))
  return tape.gradient(loss, [x] + list(block.trainable_variables))


def _assert_equal_gradients(got, expected):
  assert len(got) == len(expected) == 17
  for a, b in zip(got, expected):
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


# Plain tf.function is the mirrored test's mode. Under XLA the block
# computes attention in chunks, so their own gradient is compiled too.
@pytest.mark.parametrize("mode", ["eager", "xla"])
def test_gradients_equal_plain(mode):
  block = _block(chunk_size=2) if mode == "xla" else _block()
  x = tf.random.stateless_normal([2, 5, 8], [0, 1])
  plain = _gradients(block, block, x)
  wrapped = snt.remat(block)
  run = _gradients
  if mode == "xla":
    run = tf.function(_gradients, jit_compile=True)
  _assert_equal_gradients(run(wrapped, block, x), plain)


def test_gradients_equal_plain_under_mirrored_strategy():
  strategy = _mirrored_strategy()
  with strategy.scope():
    block = _block()
    wrapped = snt.remat(block)
  x = tf.random.stateless_normal([4, 5, 8], [0, 2])

  @tf.function
  def step(module):
    def replica(x):
      return _gradients(module, block, x)[1:]
    per_replica = strategy.run(replica, (x,))
    return [strategy.reduce("SUM", g, axis=None) for g in per_replica]

  block(x)  # Built before the step, by either.
  _assert_equal_gradients([x] + step(wrapped), [x] + step(block))


def test_forward_runs_again_in_the_backward_pass():
  calls = []

  class Counted(snt.Module):
    def __init__(self):
      super().__init__()
      self.linear = snt.Linear(3)

    def __call__(self, x):
      calls.append(1)
      return self.linear(x)

  module = Counted()
  wrapped = snt.remat(module)
  x = tf.ones([2, 3])
  wrapped(x)                       # Builds (an ordinary call), then runs.
  calls.clear()
  with tf.GradientTape() as tape:
    y = tf.reduce_sum(wrapped(x))
  assert len(calls) == 1
  tape.gradient(y, module.trainable_variables)
  assert len(calls) == 2
