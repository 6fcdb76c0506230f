"""Tests for sonnet_like/core/custom_getter.py."""

import numpy as np
import pytest
import sonnet as reference
import tensorflow as tf

import sonnet_like as snt


class _Holder(snt.Module):

  def __init__(self, name=None):
    super().__init__(name=name)
    self.v = tf.Variable(2.)
    self.pair = [tf.Variable(1.), "text"]
    self.table = {"a": tf.Variable(3.)}
    self.plain = 4.

  def __call__(self, x):
    return x * self.v + self.pair[0] + self.table["a"]


def test_getter_applies_to_members_and_nests():
  holder = _Holder()
  with snt.custom_variable_getter(lambda v: v * 10):
    assert float(holder.v) == 20.
    assert float(holder.pair[0]) == 10. and holder.pair[1] == "text"
    assert float(holder.table["a"]) == 30.
    assert holder.plain == 4.
    assert float(holder(1.)) == 60.
  assert isinstance(holder.v, tf.Variable)
  assert float(holder(1.)) == 6.


def test_stop_gradient_blocks_only_inside():
  holder = _Holder()
  with snt.custom_variable_getter(tf.stop_gradient):
    with tf.GradientTape() as tape:
      y = holder(3.)
  assert tape.gradient(y, holder.v) is None
  with tf.GradientTape() as tape:
    y = holder(3.)
  assert float(tape.gradient(y, holder.v)) == 3.


def test_instances_and_classes_filters():
  a, b = _Holder(), _Holder()
  with snt.custom_variable_getter(lambda v: v * 0, instances=[a]):
    assert float(a.v) == 0. and isinstance(b.v, tf.Variable)
  linear = snt.Linear(1)
  linear(tf.ones([1, 1]))
  with snt.custom_variable_getter(lambda v: v * 0, classes=[snt.Linear]):
    assert isinstance(a.v, tf.Variable)
    assert float(tf.reduce_sum(tf.abs(linear.w))) == 0.
  assert isinstance(linear.w, tf.Variable)


def test_patch_happens_on_enter_and_is_undone_on_error():
  holder = _Holder()
  context = snt.custom_variable_getter(lambda v: 0)
  assert isinstance(holder.v, tf.Variable)  # Not patched before `with`.
  with pytest.raises(RuntimeError):
    with context:
      assert holder.v == 0
      raise RuntimeError
  assert isinstance(holder.v, tf.Variable)
  assert "__getattribute__" not in snt.Module.__dict__


def test_nested_getters_like_sonnet():
  class Theirs(reference.Module):

    def __init__(self):
      super().__init__()
      self.v = tf.Variable(2.)

  results = []
  for getter, holder in ((snt.custom_variable_getter, _Holder()),
                         (reference.custom_variable_getter, Theirs())):
    with getter(lambda v: v + 1):
      with getter(lambda v: v * 10):
        inner = float(holder.v)
      results.append((inner, float(holder.v)))
  # The outer getter runs first; the inner one then sees a tensor, not a
  # variable, and leaves it.
  assert results == [(3., 3.), (3., 3.)]


def test_module_machinery_is_untouched(tmp_path):
  holder = _Holder()
  with snt.custom_variable_getter(lambda v: v * 0):
    assert isinstance(vars(holder)["v"], tf.Variable)
    assert len(holder.variables) == 3  # Properties are transformed...
    assert not any(isinstance(v, tf.Variable) for v in holder.variables)
    path = tf.train.Checkpoint(m=holder).write(str(tmp_path / "ckpt"))
  holder.v.assign(5.)
  tf.train.Checkpoint(m=holder).read(path).assert_consumed()
  np.testing.assert_allclose(holder.v.numpy(), 2.)  # ...checkpoints are not.
