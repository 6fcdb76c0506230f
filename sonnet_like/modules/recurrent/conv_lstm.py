"""Convolutional LSTMs: `ConvNDLSTM` and the thin `Conv1DLSTM`, `Conv2DLSTM`,
`Conv3DLSTM`.

The LSTM of `lstm.py` with its matrix products replaced by SAME-padded
convolutions, so the state keeps the spatial shape of the input.
"""

from typing import Sequence

import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import checks
from sonnet_like.core import initializers
from sonnet_like.core import once
from sonnet_like.core import types
from sonnet_like.modules import conv
from sonnet_like.modules.recurrent import lstm as lstm_lib
from sonnet_like.modules.recurrent import rnn_core
from sonnet_like.modules.recurrent import state_checks
from sonnet_like.modules.recurrent import weights


class ConvNDLSTM(weights.SubmoduleWeights, lstm_lib.LSTMBias,
                 rnn_core.RNNCore):
  """Convolutional LSTM over `num_spatial_dims` spatial dimensions.

  With `*` a SAME-padded convolution, each step computes
  `i, f, g, o = split(w_i * x + w_h * h + b)` over the channels and

      cell   = sigmoid(f) * c + sigmoid(i) * tanh(g)
      hidden = sigmoid(o) * tanh(cell)

  `forget_bias` is added to the forget-gate part of `b` when it is created.
  The hidden state and the cell have the input's spatial shape with
  `output_channels` channels. `snt.Conv1DLSTM`, `snt.Conv2DLSTM` and
  `snt.Conv3DLSTM` fix the number of spatial dimensions.

  Attributes:
    input_to_hidden: `w_i`, `kernel_shape + [input_channels, 4 *
      output_channels]`.
    hidden_to_hidden: `w_h`, `kernel_shape + [output_channels, 4 *
      output_channels]`.
    b: `[4 * output_channels]`, gates in the order input, forget, cell,
      output.
  """

  def __init__(self, num_spatial_dims: int, input_shape: types.ShapeLike,
               output_channels: int, kernel_shape: int | Sequence[int],
               data_format: str | None = None,
               w_i_init: initializers.Initializer | None = None,
               w_h_init: initializers.Initializer | None = None,
               b_init: initializers.Initializer | None = None,
               forget_bias: types.FloatLike = 1.0,
               dtype: tf.DType = tf.float32, name: str | None = None):
    """Constructs a convolutional LSTM.

    Args:
      num_spatial_dims: 1, 2 or 3.
      input_shape: Shape of one input without the batch axis, in
        `data_format` layout (spatial sizes and channels).
      output_channels: Channels of the hidden state and the cell.
      kernel_shape: Kernel size, an int or one per spatial dimension.
      data_format: Channels-last (the default) or channels-first layout, e.g.
        "NHWC" or "NCHW".
      w_i_init: Initializer of `w_i`; a truncated normal with stddev
        `1 / sqrt(prod(kernel_shape) * input_channels)` by default.
      w_h_init: Initializer of `w_h`; a truncated normal with stddev
        `1 / sqrt(prod(kernel_shape) * output_channels)` by default.
      b_init: Initializer of `b`; zeros by default.
      forget_bias: Added to the forget-gate bias after initialization.
      dtype: Dtype of the variables, the state and the expected inputs.
      name: Name of the module.
    """
    super().__init__(name=name)
    owner = type(self).__name__
    n = conv.check_spatial_dims(owner, num_spatial_dims)
    try:
      shape = tf.TensorShape(input_shape).as_list()
    except (TypeError, ValueError):
      shape = None
    if (shape is None or len(shape) != n + 1 or
        not all(isinstance(d, int) and d > 0 for d in shape)):
      raise ValueError(f"{owner}: input_shape must be {n + 1} positive ints "
                       "(the input shape without the batch axis), got "
                       f"{input_shape!r}.")
    self._num_spatial_dims = n
    self._input_shape = tuple(shape)
    self._output_channels = arguments.check_positive_int(
        owner, "output_channels", output_channels)
    self._data_format, self._channel_index = conv.layout_of(
        owner, data_format, n)
    self._set_settings(b_init, forget_bias, dtype)
    self._input_to_hidden = conv.ConvND(
        n, output_channels=4 * output_channels, kernel_shape=kernel_shape,
        padding="SAME", with_bias=False, w_init=w_i_init,
        data_format=data_format, name="input_to_hidden")
    self._hidden_to_hidden = conv.ConvND(
        n, output_channels=4 * output_channels, kernel_shape=kernel_shape,
        padding="SAME", with_bias=False, w_init=w_h_init,
        data_format=data_format, name="hidden_to_hidden")

  def _state_shape(self) -> list[int]:
    shape = list(self._input_shape)
    shape[0 if self._channel_index == 1 else -1] = self._output_channels
    return shape

  def initial_state(self, batch_size: types.IntLike) -> lstm_lib.LSTMState:
    """Zeros of the input's spatial shape with `output_channels` channels."""
    zeros = tf.zeros([batch_size] + self._state_shape(), self._dtype)
    return lstm_lib.LSTMState(hidden=zeros, cell=zeros)

  @once.once
  def _initialize(self, inputs: tf.Tensor) -> None:
    del inputs  # The convolutions infer the input channels.
    self._create_bias(self._output_channels)

  def __call__(self, inputs: tf.Tensor, prev_state: lstm_lib.LSTMState
               ) -> tuple[tf.Tensor, lstm_lib.LSTMState]:
    """One step.

    Args:
      inputs: `[B] + input_shape`.
      prev_state: An `LSTMState` of two `[B] + state shape` tensors, e.g. from
        `initial_state(B)`.

    Returns:
      `(outputs, next_state)`, where `outputs` is `next_state.hidden`.
    """
    n = self._num_spatial_dims
    inputs = state_checks.check_inputs(self, inputs, self._dtype, rank=n + 2,
                                       layout=conv.layout(self._data_format))
    for axis, size in enumerate(self._input_shape, start=1):
      inputs = checks.check_dim(self, inputs, axis, size,
                                f"input_shape {list(self._input_shape)}: axis "
                                f"{axis} of size")
    shape = tf.TensorShape(self._state_shape())
    prev_state = state_checks.check_state(
        self, prev_state, lstm_lib.LSTMState(shape, shape), self._dtype,
        inputs)
    self._initialize(inputs)
    gates = (self._input_to_hidden(inputs) +
             self._hidden_to_hidden(prev_state.hidden))
    axis = n + 1 if self._channel_index == -1 else 1
    bias_shape = [-1] + [1] * (n if axis == 1 else 0)
    gates += tf.reshape(self.b, bias_shape)
    next_hidden, next_cell = lstm_lib.lstm_gates(gates, prev_state.cell, axis)
    return next_hidden, lstm_lib.LSTMState(hidden=next_hidden, cell=next_cell)


class Conv1DLSTM(ConvNDLSTM):
  """1-D convolutional LSTM over `[B, W, C]` inputs (or "NCW").

      >>> import sonnet_like as snt, tensorflow as tf
      >>> core = snt.Conv1DLSTM(input_shape=[8, 3], output_channels=4,
      ...                       kernel_shape=3, name="conv1d_lstm_example")
      >>> outputs, state = core(tf.ones([2, 8, 3]), core.initial_state(2))
      >>> outputs.shape
      TensorShape([2, 8, 4])
  """

  __init__ = conv.fixed_dims_init(ConvNDLSTM.__init__, 1)


class Conv2DLSTM(ConvNDLSTM):
  """2-D convolutional LSTM over `[B, H, W, C]` inputs (or "NCHW").

      >>> import sonnet_like as snt, tensorflow as tf
      >>> core = snt.Conv2DLSTM(input_shape=[5, 5, 3], output_channels=4,
      ...                       kernel_shape=3, name="conv2d_lstm_example")
      >>> outputs, state = core(tf.ones([2, 5, 5, 3]), core.initial_state(2))
      >>> outputs.shape
      TensorShape([2, 5, 5, 4])
      >>> sorted(v.name for v in core.variables)
      ['conv2d_lstm_example/b:0', 'conv2d_lstm_example/hidden_to_hidden/w:0',
       'conv2d_lstm_example/input_to_hidden/w:0']
  """

  __init__ = conv.fixed_dims_init(ConvNDLSTM.__init__, 2)


class Conv3DLSTM(ConvNDLSTM):
  """3-D convolutional LSTM over `[B, D, H, W, C]` inputs (or "NCDHW").

      >>> import sonnet_like as snt, tensorflow as tf
      >>> core = snt.Conv3DLSTM(input_shape=[4, 4, 4, 2], output_channels=3,
      ...                       kernel_shape=3, name="conv3d_lstm_example")
      >>> outputs, state = core(tf.ones([2, 4, 4, 4, 2]),
      ...                       core.initial_state(2))
      >>> outputs.shape
      TensorShape([2, 4, 4, 4, 3])
  """

  __init__ = conv.fixed_dims_init(ConvNDLSTM.__init__, 3)
