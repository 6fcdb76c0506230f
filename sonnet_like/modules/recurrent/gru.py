"""GRU: the gated recurrent unit core."""

from typing import Any

import tensorflow as tf

from sonnet_like.core import initializers
from sonnet_like.core import once
from sonnet_like.modules.recurrent import hidden_state
from sonnet_like.modules.recurrent import weights


class GRU(weights.DenseWeights, hidden_state.HiddenStateCore):
  """Gated recurrent unit core.

  With `x` the input and `h` the previous state, each step computes

      z, r = sigmoid(x @ w_i[:, :2H] + h @ w_h[:, :2H] + b[:2H])
      a    = tanh(x @ w_i[:, 2H:] + (r * h) @ w_h[:, 2H:] + b[2H:])
      next = (1 - z) * h + z * a

  and returns `next` as both output and state.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> gru = snt.GRU(hidden_size=4, name="gru_example")
      >>> outputs, state = gru(tf.ones([2, 3]), gru.initial_state(2))
      >>> outputs.shape
      TensorShape([2, 4])
      >>> sorted(v.name for v in gru.variables)
      ['gru_example/b:0', 'gru_example/w_h:0', 'gru_example/w_i:0']

  Attributes:
    input_to_hidden: `w_i`, `[input_size, 3 * hidden_size]` (z, r, a).
    hidden_to_hidden: `w_h`, `[hidden_size, 3 * hidden_size]`.
    b: `[3 * hidden_size]`.
  """

  def __init__(self, hidden_size: int,
               w_i_init: initializers.Initializer | None = None,
               w_h_init: initializers.Initializer | None = None,
               b_init: initializers.Initializer | None = None,
               dtype: tf.DType = tf.float32, name: str | None = None):
    """Constructs a GRU.

    Args:
      hidden_size: Size of the hidden state (and of the output).
      w_i_init: Initializer of `w_i`; Glorot uniform by default.
      w_h_init: Initializer of `w_h`; Glorot uniform by default.
      b_init: Initializer of `b`; zeros by default.
      dtype: Dtype of the variables, the state and the expected inputs.
      name: Name of the module.
    """
    super().__init__(hidden_size, b_init, dtype, name)
    glorot_uniform = initializers.VarianceScaling(mode="fan_avg",
                                                  distribution="uniform")
    self._w_i_init = w_i_init or glorot_uniform
    self._w_h_init = w_h_init or glorot_uniform

  @once.once
  def _initialize(self, inputs: tf.Tensor) -> None:
    size = self._hidden_size
    self._create_weights(inputs, 3 * size, size, self._w_i_init,
                         self._w_h_init)
    self.b = tf.Variable(self._b_init([3 * size], self._dtype), name="b")

  def _step(self, inputs: Any, prev_state: Any) -> tf.Tensor:
    inputs = self._checked_inputs(inputs, "[B, input_size]")
    prev_state = self._checked_state(prev_state, inputs)
    gates_x = tf.matmul(inputs, self._w_i)
    zr_x, a_x = tf.split(gates_x, [2 * self._hidden_size, self._hidden_size],
                         axis=-1)
    w_h_zr, w_h_a = tf.split(self._w_h, [2 * self._hidden_size,
                                         self._hidden_size], axis=-1)
    b_zr, b_a = tf.split(self.b, [2 * self._hidden_size, self._hidden_size])
    z, r = tf.split(tf.sigmoid(zr_x + tf.matmul(prev_state, w_h_zr) + b_zr),
                    2, axis=-1)
    a = tf.tanh(a_x + tf.matmul(r * prev_state, w_h_a) + b_a)
    return (1 - z) * prev_state + z * a
