"""UnrolledLSTM: an LSTM over a whole time-major sequence."""

import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import initializers
from sonnet_like.core import once
from sonnet_like.core import types
from sonnet_like.modules.recurrent import weights
from sonnet_like.modules.recurrent import lstm as lstm_lib
from sonnet_like.modules.recurrent import rnn_core
from sonnet_like.modules.recurrent import state_checks
from sonnet_like.modules.recurrent import unroll


class UnrolledLSTM(weights.DenseWeights, lstm_lib.LSTMBias,
                   rnn_core.UnrolledRNN):
  """An LSTM that consumes a whole `[T, B, input_size]` sequence per call.

  Same variables, initialization and numerics as `snt.LSTM` (without
  projection) unrolled with `snt.dynamic_unroll`, but the input-to-hidden
  product is computed for all steps in one matrix multiplication before the
  loop, which leaves only the recurrent part inside it.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> lstm = snt.UnrolledLSTM(hidden_size=4, name="unrolled_example")
      >>> outputs, state = lstm(tf.ones([6, 2, 3]), lstm.initial_state(2))
      >>> outputs.shape, state.cell.shape
      (TensorShape([6, 2, 4]), TensorShape([2, 4]))
      >>> sorted(v.name for v in lstm.variables)
      ['unrolled_example/b:0', 'unrolled_example/w_h:0',
       'unrolled_example/w_i:0']

  Attributes:
    input_to_hidden: `w_i`, `[input_size, 4 * hidden_size]`.
    hidden_to_hidden: `w_h`, `[hidden_size, 4 * hidden_size]`.
    b: `[4 * hidden_size]`, gates in the order input, forget, cell, output.
  """

  def __init__(self, hidden_size: int,
               w_i_init: initializers.Initializer | None = None,
               w_h_init: initializers.Initializer | None = None,
               b_init: initializers.Initializer | None = None,
               forget_bias: types.FloatLike = 1.0,
               dtype: tf.DType = tf.float32, name: str | None = None):
    """Constructs an UnrolledLSTM.

    Args:
      hidden_size: Size of the hidden state and the cell.
      w_i_init: Initializer of `w_i`; a truncated normal with stddev
        `1 / sqrt(input_size)` by default.
      w_h_init: Initializer of `w_h`; a truncated normal with stddev
        `1 / sqrt(hidden_size)` by default.
      b_init: Initializer of `b`; zeros by default.
      forget_bias: Added to the forget-gate bias after initialization.
      dtype: Dtype of the variables, the state and the expected inputs.
      name: Name of the module.
    """
    super().__init__(name=name)
    self._hidden_size = arguments.check_positive_int(
        "UnrolledLSTM", "hidden_size", hidden_size)
    self._w_i_init = w_i_init
    self._w_h_init = w_h_init
    self._set_settings(b_init, forget_bias, dtype)

  def initial_state(self, batch_size: types.IntLike) -> lstm_lib.LSTMState:
    """Zeros: `LSTMState(hidden=[B, hidden_size], cell=[B, hidden_size])`."""
    zeros = tf.zeros([batch_size, self._hidden_size], self._dtype)
    return lstm_lib.LSTMState(hidden=zeros, cell=zeros)

  @once.once
  def _initialize(self, input_sequence: tf.Tensor) -> None:
    size = self._hidden_size
    self._create_weights(input_sequence, 4 * size, size, self._w_i_init,
                         self._w_h_init)
    self._create_bias(size)

  def __call__(self, input_sequence: tf.Tensor,
               initial_state: lstm_lib.LSTMState
               ) -> tuple[tf.Tensor, lstm_lib.LSTMState]:
    """Runs over the sequence.

    Args:
      input_sequence: `[T, B, input_size]`, time-major.
      initial_state: An `LSTMState` of two `[B, hidden_size]` tensors.

    Returns:
      `(output_sequence, final_state)`: the hidden states `[T, B,
      hidden_size]` and the `LSTMState` after the last step.
    """
    input_sequence = self._checked_inputs(input_sequence, "[T, B, input_size]")
    shape = tf.TensorShape([self._hidden_size])
    initial_state = state_checks.check_state(
        self, initial_state, lstm_lib.LSTMState(shape, shape), self._dtype,
        input_sequence, argument="initial_state", batch_axis=1)
    gates_x = tf.einsum("tbi,ig->tbg", input_sequence, self._w_i)

    def step(gates_x_t, prev_state):
      return lstm_lib.lstm_step(None, prev_state, None, self._w_h, self.b,
                                gates_x=gates_x_t)

    return unroll.dynamic_unroll(step, gates_x, initial_state)
