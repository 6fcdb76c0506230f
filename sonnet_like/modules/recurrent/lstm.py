"""LSTM: the long short-term memory core, optionally with a projection."""

import collections
import math

import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import initializers
from sonnet_like.core import once
from sonnet_like.core import types
from sonnet_like.modules.recurrent import weights
from sonnet_like.modules.recurrent import rnn_core
from sonnet_like.modules.recurrent import state_checks

LSTMState = collections.namedtuple("LSTMState", ["hidden", "cell"])
LSTMState.__doc__ = """State of an LSTM: `hidden` (the output) and `cell`."""


def lstm_step(inputs: tf.Tensor, prev_state: LSTMState, w_i: tf.Tensor,
              w_h: tf.Tensor, b: tf.Tensor,
              projection: tf.Tensor | None = None,
              gates_x: tf.Tensor | None = None) -> tuple[tf.Tensor, LSTMState]:
  """One LSTM step on checked tensors; gate order input, forget, cell, output.

  Args:
    inputs: `[B, input_size]`; unused when `gates_x` is given.
    prev_state: `LSTMState` of `[B, hidden or projection size]` and
      `[B, hidden_size]`.
    w_i: `[input_size, 4 * hidden_size]`.
    w_h: `[hidden or projection size, 4 * hidden_size]`.
    b: `[4 * hidden_size]`.
    projection: Optional `[hidden_size, projection_size]`.
    gates_x: Optional precomputed `inputs @ w_i`.

  Returns:
    `(next_hidden, LSTMState(next_hidden, next_cell))`.
  """
  if gates_x is None:
    gates_x = tf.matmul(inputs, w_i)
  gates = gates_x + tf.matmul(prev_state.hidden, w_h) + b
  next_hidden, next_cell = lstm_gates(gates, prev_state.cell)
  if projection is not None:
    next_hidden = tf.matmul(next_hidden, projection)
  return next_hidden, LSTMState(hidden=next_hidden, cell=next_cell)


def lstm_gates(gates: tf.Tensor, prev_cell: tf.Tensor,
               axis: int = -1) -> tuple[tf.Tensor, tf.Tensor]:
  """`(next_hidden, next_cell)` from the pre-activations of the four gates,
  input, forget, cell and output, concatenated along `axis`."""
  i, f, g, o = tf.split(gates, num_or_size_splits=4, axis=axis)
  next_cell = tf.sigmoid(f) * prev_cell + tf.sigmoid(i) * tf.tanh(g)
  next_hidden = tf.sigmoid(o) * tf.tanh(next_cell)
  return next_hidden, next_cell


def lstm_bias(b_init: initializers.Initializer, hidden_size: int,
              forget_bias: types.FloatLike, dtype: tf.DType) -> tf.Tensor:
  """The initial `[4 * hidden_size]` bias with `forget_bias` added to `b_f`."""
  b_i, b_f, b_g, b_o = tf.split(b_init([4 * hidden_size], dtype), 4)
  return tf.concat([b_i, b_f + forget_bias, b_g, b_o], axis=0)


class LSTMBias:
  """A mixin for the LSTM cores: the settings they share and the bias `b`."""

  def _set_settings(self, b_init: initializers.Initializer | None,
                    forget_bias: types.FloatLike, dtype: tf.DType) -> None:
    """Stores `b_init` (zeros by default), `forget_bias` and `dtype`
    (checked)."""
    self._b_init = b_init or initializers.Zeros()
    self._forget_bias = forget_bias
    self._dtype = arguments.check_floating_dtype(type(self).__name__, dtype)

  def _create_bias(self, hidden_size: int) -> None:
    """Creates `b`, `[4 * hidden_size]`, with `forget_bias` added to `b_f`."""
    self.b = tf.Variable(lstm_bias(self._b_init, hidden_size,
                                   self._forget_bias, self._dtype), name="b")


class LSTM(weights.DenseWeights, LSTMBias, rnn_core.RNNCore):
  """Long short-term memory core.

  With `[x, h]` the input and previous hidden state and `c` the previous cell,
  each step computes `i, f, g, o = split(x @ w_i + h @ w_h + b)` and

      cell   = sigmoid(f) * c + sigmoid(i) * tanh(g)
      hidden = sigmoid(o) * tanh(cell)            (then @ projection, if any)

  `forget_bias` is added to the forget-gate part of `b` when it is created, so
  that the core starts out remembering. The output is the new hidden state.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> lstm = snt.LSTM(hidden_size=4, projection_size=2, name="lstm_example")
      >>> outputs, state = lstm(tf.ones([3, 5]), lstm.initial_state(3))
      >>> outputs.shape, state.cell.shape
      (TensorShape([3, 2]), TensorShape([3, 4]))
      >>> sorted(v.name for v in lstm.variables)
      ['lstm_example/b:0', 'lstm_example/projection:0', 'lstm_example/w_h:0',
       'lstm_example/w_i:0']

  Attributes:
    input_to_hidden: `w_i`, `[input_size, 4 * hidden_size]`.
    hidden_to_hidden: `w_h`, `[hidden or projection size, 4 * hidden_size]`.
    b: `[4 * hidden_size]`, gates in the order input, forget, cell, output.
    projection: `[hidden_size, projection_size]`, or None.
  """

  def __init__(self, hidden_size: int, projection_size: int | None = None,
               projection_init: initializers.Initializer | None = None,
               w_i_init: initializers.Initializer | None = None,
               w_h_init: initializers.Initializer | None = None,
               b_init: initializers.Initializer | None = None,
               forget_bias: types.FloatLike = 1.0,
               dtype: tf.DType = tf.float32, name: str | None = None):
    """Constructs an LSTM.

    Args:
      hidden_size: Size of the cell (and of the hidden state without
        projection).
      projection_size: If set, the hidden state is projected to this size by
        a trainable `projection` matrix.
      projection_init: Initializer of `projection`; a truncated normal with
        stddev `1 / sqrt(hidden_size)` by default. Only with a projection.
      w_i_init: Initializer of `w_i`; a truncated normal with stddev
        `1 / sqrt(input_size)` by default.
      w_h_init: Initializer of `w_h`; a truncated normal with stddev
        `1 / sqrt(hidden or projection size)` by default.
      b_init: Initializer of `b`; zeros by default.
      forget_bias: Added to the forget-gate bias after initialization.
      dtype: Dtype of the variables, the state and the expected inputs.
      name: Name of the module.
    """
    super().__init__(name=name)
    self._hidden_size = arguments.check_positive_int(
        "LSTM", "hidden_size", hidden_size)
    if projection_size is not None:
      arguments.check_positive_int("LSTM", "projection_size",
                                      projection_size)
    elif projection_init is not None:
      raise ValueError("LSTM: projection_init must be None when projection "
                       "is not used (projection_size=None), got "
                       f"{projection_init!r}.")
    self._projection_size = projection_size
    self._eff_hidden_size = projection_size or hidden_size
    self._projection_init = projection_init
    self._w_i_init = w_i_init
    self._w_h_init = w_h_init
    self._set_settings(b_init, forget_bias, dtype)

  def initial_state(self, batch_size: types.IntLike) -> LSTMState:
    """Zeros: `LSTMState(hidden=[B, projection_size or hidden_size],
    cell=[B, hidden_size])`."""
    return LSTMState(
        hidden=tf.zeros([batch_size, self._eff_hidden_size], self._dtype),
        cell=tf.zeros([batch_size, self._hidden_size], self._dtype))

  @once.once
  def _initialize(self, inputs: tf.Tensor) -> None:
    self._create_weights(inputs, 4 * self._hidden_size, self._eff_hidden_size,
                         self._w_i_init, self._w_h_init)
    self._create_bias(self._hidden_size)
    if self._projection_size is None:
      self.projection = None
    else:
      projection_init = self._projection_init or initializers.TruncatedNormal(
          stddev=1. / math.sqrt(self._hidden_size))
      self.projection = tf.Variable(
          projection_init([self._hidden_size, self._projection_size],
                          self._dtype),
          name="projection")

  def __call__(self, inputs: tf.Tensor,
               prev_state: LSTMState) -> tuple[tf.Tensor, LSTMState]:
    """One step.

    Args:
      inputs: `[B, input_size]`.
      prev_state: An `LSTMState`, e.g. from `initial_state(B)`.

    Returns:
      `(outputs, next_state)`, where `outputs` is `next_state.hidden`.
    """
    inputs = self._checked_inputs(inputs, "[B, input_size]")
    prev_state = state_checks.check_state(
        self, prev_state, self._state_shapes(), self._dtype, inputs)
    return lstm_step(inputs, prev_state, self._w_i, self._w_h, self.b,
                     self.projection)

  def _state_shapes(self) -> LSTMState:
    return LSTMState(hidden=tf.TensorShape([self._eff_hidden_size]),
                     cell=tf.TensorShape([self._hidden_size]))
