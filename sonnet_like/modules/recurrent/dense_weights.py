"""`DenseWeights`: what GRU, LSTM and UnrolledLSTM share.

Each multiplies its input by `w_i` (`[input_size, gates]`) and its hidden
state by `w_h` (`[hidden, gates]`), made on the first call once the input
size is known, and checks every later input against that size.
"""

import math
from typing import Any

import tensorflow as tf

from sonnet_like.core import checks
from sonnet_like.core import initializers
from sonnet_like.modules.recurrent import state_checks


class DenseWeights:
  """A mixin for a core with `_dtype` and a `@once` `_initialize(inputs)`
  that calls `_create_weights`."""

  @property
  def input_to_hidden(self) -> tf.Variable:
    return self._w_i

  @property
  def hidden_to_hidden(self) -> tf.Variable:
    return self._w_h

  def _create_weights(self, inputs: tf.Tensor, gates: int, hidden_in: int,
                      w_i_init: initializers.Initializer | None,
                      w_h_init: initializers.Initializer | None) -> None:
    """Creates `w_i` and `w_h`; initializers left None are truncated
    normals with stddev `1 / sqrt(fan_in)`, as in Sonnet 2."""
    self._input_size = checks.known_dim(self, inputs, -1, "input size")
    w_i_init = w_i_init or initializers.TruncatedNormal(
        stddev=1. / math.sqrt(self._input_size))
    w_h_init = w_h_init or initializers.TruncatedNormal(
        stddev=1. / math.sqrt(hidden_in))
    self._w_i = tf.Variable(w_i_init([self._input_size, gates], self._dtype),
                            name="w_i")
    self._w_h = tf.Variable(w_h_init([hidden_in, gates], self._dtype),
                            name="w_h")

  def _checked_inputs(self, inputs: Any, layout: str) -> tf.Tensor:
    """`inputs` as a tensor of rank `len(layout)`, built for, checked."""
    rank = layout.count(",") + 1
    inputs = state_checks.check_inputs(self, inputs, self._dtype, rank=rank,
                                       layout=layout)
    self._initialize(inputs)
    return checks.check_dim(self, inputs, -1, self._input_size, "input size")
