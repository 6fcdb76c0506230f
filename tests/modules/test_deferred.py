"""Tests for sonnet_like/modules/deferred.py."""

import copy

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt


def test_constructs_on_first_call_only():
  calls = []

  def make():
    calls.append(1)
    return snt.Linear(3, name="lazy")

  deferred = snt.Deferred(make)
  assert not calls
  x = tf.ones([2, 4])
  y = deferred(x)
  deferred(x)
  assert calls == [1]
  target = deferred.target
  np.testing.assert_allclose(y, target(x))
  assert deferred.output_size == 3 and deferred.w is target.w
  assert deferred.variables == target.variables


def test_coupled_sizes():
  encoder = snt.Linear(8, name="enc")
  decoder = snt.Deferred(lambda: snt.Linear(encoder.input_size, name="dec"))
  x = tf.ones([2, 5])
  assert decoder(encoder(x)).shape == (2, 5)


def test_other_call_methods_trigger_construction():
  class Codec(snt.Module):
    def encode(self, x):
      return x + 1

    def decode(self, x):
      return x - 1

  deferred = snt.Deferred(Codec, call_methods=("encode", "decode"))
  assert deferred.decode(tf.constant(3.)).numpy() == 2.
  assert isinstance(deferred.target, Codec)


def test_attributes_before_and_after_construction():
  deferred = snt.Deferred(lambda: snt.Linear(2, name="attr"))
  with pytest.raises(AttributeError, match="not constructed yet"):
    deferred.output_size  # pylint: disable=pointless-statement
  deferred.target.extra = 1
  deferred.flag = True  # Written through to the target.
  assert deferred.target.flag is True and deferred.extra == 1
  del deferred.flag
  assert not hasattr(deferred.target, "flag")
  assert repr(deferred) == "Deferred(Linear(output_size=2, name='attr'))"


def test_repr_constructs_the_target_as_in_sonnet():
  deferred = snt.Deferred(lambda: snt.Linear(2, name="shown"))
  assert str(deferred) == repr(deferred) == (
      "Deferred(Linear(output_size=2, name='shown'))")
  assert deferred.output_size == 2  # Constructed by repr.


def test_constructor_runs_in_the_scope_of_the_first_call():
  deferred = snt.Deferred(lambda: snt.Linear(2, name="inner"))

  class Outer(snt.Module):
    def __call__(self, x):
      return deferred(x)

  Outer(name="outer")(tf.ones([1, 2]))
  assert deferred.target.w.name == "outer/inner/w:0"


def test_deepcopy_before_and_after_construction():
  deferred = snt.Deferred(lambda: snt.Linear(2, name="copied"))
  clone = copy.deepcopy(deferred)
  x = tf.ones([1, 3])
  deferred(x)
  clone(x)
  assert clone.target is not deferred.target
  later = copy.deepcopy(deferred)
  assert later.target is not deferred.target
  np.testing.assert_array_equal(later(x), deferred(x))


def test_bad_arguments():
  with pytest.raises(TypeError, match="Deferred: constructor must be"):
    snt.Deferred(3)
  with pytest.raises(TypeError, match="Deferred: call_methods must be"):
    snt.Deferred(snt.Linear, call_methods="encode")


def test_a_constructor_returning_a_non_callable_fails_at_the_call():
  deferred = snt.Deferred(lambda: 3, name="three")
  with pytest.raises(TypeError, match=r"^Deferred 'three': its constructor "
                     r"returned 3, which is not callable\.$"):
    deferred(tf.ones([1]))
