"""Tests of sonnet_like/modules/recurrent/rnn_core.py."""

import pytest
import tensorflow as tf

import sonnet_like as snt


def test_abstract_methods_must_be_implemented():
  class NoState(snt.RNNCore):
    def __call__(self, inputs, prev_state):
      return inputs, prev_state

  with pytest.raises(TypeError, match="initial_state"):
    NoState()
  with pytest.raises(TypeError):
    snt.UnrolledRNN()


def test_subclass_runs_in_its_name_scope():
  class Accumulate(snt.RNNCore):
    def __call__(self, inputs, prev_state):
      total = prev_state + inputs
      return total, total

    def initial_state(self, batch_size):
      self.scope_seen = tf.get_current_name_scope()
      return tf.zeros([batch_size, 1])

  core = Accumulate(name="accumulate_scope")
  outputs, _ = snt.static_unroll(core, tf.ones([3, 2, 1]),
                                 core.initial_state(2))
  assert outputs.numpy()[:, 0, 0].tolist() == [1., 2., 3.]
  assert core.scope_seen == "accumulate_scope"
