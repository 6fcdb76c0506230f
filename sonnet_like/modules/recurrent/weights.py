"""How a recurrent core holds its input and hidden weights `w_i`, `w_h`.

`DenseWeights` (GRU, LSTM, UnrolledLSTM): matrices `w_i` (`[input_size,
gates]`) and `w_h` (`[hidden, gates]`) of its own, made on the first call
once the input size is known; later inputs are checked against that size.
`SubmoduleWeights` (VanillaRNN, the ConvLSTMs): the `w` of two submodules,
`_input_to_hidden` and `_hidden_to_hidden`. Both expose them as Sonnet 2
does, as `input_to_hidden` and `hidden_to_hidden`.
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


class SubmoduleWeights:
  """A mixin for a core whose `_input_to_hidden` and `_hidden_to_hidden`
  submodules (a `Linear` or a `ConvND`) hold `w_i` and `w_h`."""

  @property
  def input_to_hidden(self) -> tf.Variable:
    return self._input_to_hidden.w

  @property
  def hidden_to_hidden(self) -> tf.Variable:
    return self._hidden_to_hidden.w
