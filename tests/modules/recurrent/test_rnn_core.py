"""Tests of sonnet_like/modules/recurrent/rnn_core.py."""

import pytest
import tensorflow as tf

import sonnet_like as snt


def test_only_the_base_classes_are_abstract_as_in_sonnet():
  class NoState(snt.RNNCore):
    def __call__(self, inputs, prev_state):
      return inputs, prev_state

  # Sonnet 2's metaclass wraps abstract methods once the class exists, so a
  # subclass that leaves one out can be instantiated (the method returns
  # None).
  assert NoState().initial_state(2) is None
  with pytest.raises(TypeError, match="initial_state"):
    snt.RNNCore()  # pylint: disable=abstract-class-instantiated
  with pytest.raises(TypeError):
    snt.UnrolledRNN()  # pylint: disable=abstract-class-instantiated


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
