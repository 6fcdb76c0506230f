"""Tests for sonnet_like/modules/build.py."""

import pytest
import sonnet as reference
import tensorflow as tf

import sonnet_like as snt


def test_creates_variables_without_computing():
  layer = snt.Linear(10, name="built")
  spec = snt.build(layer, [None, 784])
  assert spec == tf.TensorSpec([None, 10], tf.float32)
  assert [v.shape.as_list() for v in layer.variables] == [[10], [784, 10]]
  # The variables hold their initial values, usable eagerly right away.
  assert layer(tf.ones([2, 784])).shape == (2, 10)


def test_no_side_effects_run():
  counter = tf.Variable(0)

  def f(x):
    counter.assign_add(1)
    return x

  snt.build(f, [3])
  assert int(counter) == 0


@pytest.mark.parametrize("args", [([None, 2],), ((4, 2),), ([],),
                                  (tf.TensorSpec([None, 2], tf.int32),),
                                  (tf.ones([5, 2], tf.float64),)])
def test_output_structure_matches_sonnet(args):
  fn = lambda x: (x, 3, {"a": x * 2, "b": None}, [tf.shape(x)])
  assert snt.build(fn, *args) == reference.build(fn, *args)


def test_keyword_arguments_are_passed_as_they_are():
  fn = lambda x, scale: x * scale
  spec = snt.build(fn, [2], scale=tf.constant(2.))
  assert spec == tf.TensorSpec([2], tf.float32)


def test_no_output():
  assert snt.build(lambda x: None, [2]) is None
