"""VanillaRNN: the basic fully connected recurrent core."""

from typing import Any

import tensorflow as tf

from sonnet_like.core import initializers
from sonnet_like.core import once
from sonnet_like.core import types
from sonnet_like.modules import linear
from sonnet_like.modules.recurrent import hidden_state
from sonnet_like.modules.recurrent import state_checks
from sonnet_like.modules.recurrent import weights


class VanillaRNN(weights.SubmoduleWeights, hidden_state.HiddenStateCore):
  """Fully connected recurrent core, `h = activation(x @ w_i + h @ w_h + b)`.

  The output and the next state are the same tensor.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> rnn = snt.VanillaRNN(hidden_size=4, name="vanilla_example")
      >>> outputs, state = rnn(tf.ones([2, 3]), rnn.initial_state(2))
      >>> outputs.shape
      TensorShape([2, 4])
      >>> sorted(v.name for v in rnn.variables)
      ['vanilla_example/b:0', 'vanilla_example/hidden_to_hidden/w:0',
       'vanilla_example/input_to_hidden/w:0']

  Attributes:
    input_to_hidden: `w_i`, `[input_size, hidden_size]`.
    hidden_to_hidden: `w_h`, `[hidden_size, hidden_size]`.
  """

  def __init__(self, hidden_size: int,
               activation: types.Activation = tf.tanh,
               w_i_init: initializers.Initializer | None = None,
               w_h_init: initializers.Initializer | None = None,
               b_init: initializers.Initializer | None = None,
               dtype: tf.DType = tf.float32, name: str | None = None):
    """Constructs a VanillaRNN.

    Args:
      hidden_size: Size of the hidden state (and of the output).
      activation: Applied to the pre-activation; `tf.tanh` by default.
      w_i_init: Initializer of `w_i`; a truncated normal with stddev
        `1 / sqrt(input_size)` by default.
      w_h_init: Initializer of `w_h`; a truncated normal with stddev
        `1 / sqrt(hidden_size)` by default.
      b_init: Initializer of `b`; zeros by default.
      dtype: Dtype of the variables, the state and the expected inputs.
      name: Name of the module.
    """
    super().__init__(hidden_size, b_init, dtype, name)
    if not callable(activation):
      raise TypeError("VanillaRNN: activation must be callable, got "
                      f"{activation!r}.")
    self._activation = activation
    self._input_to_hidden = linear.Linear(
        hidden_size, with_bias=False, w_init=w_i_init, name="input_to_hidden")
    self._hidden_to_hidden = linear.Linear(
        hidden_size, with_bias=False, w_init=w_h_init,
        name="hidden_to_hidden")

  @once.once
  def _initialize(self, inputs: tf.Tensor) -> None:
    del inputs  # The Linear submodules infer the input size.
    self._b = tf.Variable(self._b_init([self._hidden_size], self._dtype),
                          name="b")

  def _step(self, inputs: Any, prev_state: Any) -> tf.Tensor:
    inputs = state_checks.check_inputs(self, inputs, self._dtype, rank=2,
                                       layout="[B, input_size]")
    prev_state = self._checked_state(prev_state, inputs)
    self._initialize(inputs)
    return self._activation(self._input_to_hidden(inputs) +
                            self._hidden_to_hidden(prev_state) + self._b)
