"""Tests for sonnet_like.core.checks' error types."""

import pytest
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.core import checks


@pytest.mark.parametrize("error,bases", [
    (checks.InputShapeError, (ValueError, tf.errors.InvalidArgumentError)),
    (checks.InputDTypeError, (TypeError, ValueError,
                              tf.errors.InvalidArgumentError)),
    (checks.UnknownRankError, (TypeError, ValueError,
                               tf.errors.InvalidArgumentError)),
    (checks.StateLengthError, (ValueError, IndexError)),
])
def test_made_from_a_message_and_an_instance_of_each_base(error, bases):
  e = error("Thing 'x' expects more.")
  assert isinstance(e, bases)
  assert (str(e), e.args) == ("Thing 'x' expects more.",
                              ("Thing 'x' expects more.",))


def test_keeps_its_type_through_autograph():
  # Autograph re-raises errors from code it converted with a new message;
  # an error it cannot rebuild would become a StagingError.
  flatten = snt.Flatten(name="flat")
  with pytest.raises(checks.UnknownRankError,
                     match="Flatten 'flat' needs an input of known rank"):
    tf.function(flatten).get_concrete_function(tf.TensorSpec(None))


def test_keeps_its_type_through_autograph_dtype_error():
  linear = snt.Linear(2, name="lin")
  with pytest.raises(checks.InputDTypeError, match="Linear 'lin'"):
    tf.function(linear).get_concrete_function(tf.TensorSpec([1, 2], tf.int32))
