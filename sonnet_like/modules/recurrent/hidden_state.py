"""`HiddenStateCore`: a core whose state is one `[B, hidden_size]` tensor.

GRU and VanillaRNN return their next state as their output too. They share
the settings `hidden_size`, `b_init` and `dtype`, the initial state, the
state check and the call; each defines `_step`.
"""

from typing import Any

import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import initializers
from sonnet_like.core import types
from sonnet_like.modules.recurrent import rnn_core
from sonnet_like.modules.recurrent import state_checks


class HiddenStateCore(rnn_core.RNNCore):
  """Subclasses define `_step`."""

  def __init__(self, hidden_size: int,
               b_init: initializers.Initializer | None, dtype: tf.DType,
               name: str | None):
    """Checks and stores the settings; `b_init` is zeros by default."""
    super().__init__(name=name)
    owner = type(self).__name__
    self._hidden_size = arguments.check_positive_int(
        owner, "hidden_size", hidden_size)
    self._b_init = b_init or initializers.Zeros()
    self._dtype = arguments.check_floating_dtype(owner, dtype)

  def initial_state(self, batch_size: types.IntLike) -> tf.Tensor:
    """Zeros of shape `[batch_size, hidden_size]`."""
    return tf.zeros([batch_size, self._hidden_size], self._dtype)

  def __call__(self, inputs: tf.Tensor,
               prev_state: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
    """One step.

    Args:
      inputs: `[B, input_size]`.
      prev_state: `[B, hidden_size]`.

    Returns:
      `(outputs, next_state)`, the same `[B, hidden_size]` tensor twice.
    """
    next_state = self._step(inputs, prev_state)
    return next_state, next_state

  def _step(self, inputs: Any, prev_state: Any) -> tf.Tensor:
    """Checks the arguments (see `_checked_state`); the next state."""
    raise NotImplementedError

  def _checked_state(self, prev_state: Any, inputs: tf.Tensor) -> tf.Tensor:
    return state_checks.check_state(
        self, prev_state, tf.TensorShape([self._hidden_size]), self._dtype,
        inputs)
