"""MLP: a stack of Linear layers with activations (and optional dropout)."""

from typing import Iterable

import tensorflow as tf

from sonnet_like.core import autograph
from sonnet_like.core import base
from sonnet_like.core import checks
from sonnet_like.core import initializers
from sonnet_like.core import types
from sonnet_like.modules import dropout
from sonnet_like.modules import linear


class MLP(base.Module):
  """Multi-layer perceptron: `Linear` layers with an activation in between.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> mlp = snt.nets.MLP([8, 3], name="doc_mlp")
      >>> mlp(tf.ones([2, 5])).shape
      TensorShape([2, 3])
      >>> [v.name for v in mlp.trainable_variables]
      ['doc_mlp/linear_0/b:0', 'doc_mlp/linear_0/w:0',
       'doc_mlp/linear_1/b:0', 'doc_mlp/linear_1/w:0']

  With `dropout_rate`, dropout is applied before each activation in training
  and `is_training` must be passed to every call.
  """

  def __init__(self, output_sizes: Iterable[int],
               w_init: initializers.Initializer | None = None,
               b_init: initializers.Initializer | None = None,
               with_bias: bool = True,
               activation: types.Activation = tf.nn.relu,
               dropout_rate: types.FloatLike | None = None,
               activate_final: bool = False, name: str | None = None):
    """Constructs the MLP and its layers `linear_0`, `linear_1`, ....

    Args:
      output_sizes: Output size of each layer.
      w_init: Initializer of every layer's `w` (see `Linear`).
      b_init: Initializer of every layer's `b`; must be None without bias.
      with_bias: Whether the layers add a bias.
      activation: Applied after every layer but the last (and after the last
        too with `activate_final`).
      dropout_rate: Dropout rate in [0, 1) applied before each activation in
        training; None or 0 for none.
      activate_final: Whether to activate (and drop out) the last layer's
        output too.
      name: Name of the module.
    """
    super().__init__(name=name)
    if not with_bias and b_init is not None:
      raise ValueError("MLP: When with_bias=False b_init must not be set, "
                       f"got b_init={b_init!r}.")
    if not callable(activation):
      raise TypeError(f"MLP: activation must be callable, got "
                      f"{activation!r}.")
    if dropout_rate is not None:
      dropout.check_rate("MLP", "dropout_rate", dropout_rate)
    self._w_init = w_init
    self._b_init = b_init
    self._with_bias = with_bias
    self._activation = activation
    self._dropout_rate = dropout_rate
    self._activate_final = activate_final
    self._layers = [
        linear.Linear(size, with_bias=with_bias, w_init=w_init, b_init=b_init,
                      name=f"linear_{i}")
        for i, size in enumerate(output_sizes)]

  @property
  def _use_dropout(self) -> bool:
    rate = self._dropout_rate
    if isinstance(rate, (tf.Tensor, tf.Variable)):
      rate = tf.get_static_value(rate)
      return rate is None or rate != 0  # A variable rate may change.
    return rate is not None and rate != 0

  @autograph.as_written
  def __call__(self, inputs: tf.Tensor,
               is_training: types.BoolLike | None = None) -> tf.Tensor:
    """Applies the layers to `inputs` of shape `[batch, input_size]`.

    Args:
      inputs: The input tensor.
      is_training: Whether dropout is on; required with `dropout_rate`, and
        must be None without it.

    Returns:
      The last layer's (activated, with `activate_final`) output.
    """
    if self._use_dropout and is_training is None:
      raise ValueError(f"{checks.describe(self)} uses dropout "
                       f"(dropout_rate={self._dropout_rate!r}): The "
                       "`is_training` argument is required when dropout is "
                       "used. Call mlp(x, is_training=...).")
    if not self._use_dropout and is_training is not None:
      raise ValueError(f"{checks.describe(self)} has no dropout "
                       "(dropout_rate=None): The `is_training` argument should "
                       "only be used with dropout.")
    if self._use_dropout:
      checks.check_is_training(self, is_training)
    last = len(self._layers) - 1
    activation = autograph.as_user_code(self._activation)  # May be a user's.
    for i, layer in enumerate(self._layers):
      inputs = layer(inputs)
      if i < last or self._activate_final:
        if self._use_dropout:
          inputs = dropout.dropout(self, inputs, self._dropout_rate,
                                   is_training)
        inputs = activation(inputs)
    return inputs

  def reverse(self, activate_final: bool | None = None,
              name: str | None = None) -> "MLP":
    """A new MLP mapping this one's output size back to its input size.

    The layers' sizes are this MLP's input sizes in reverse order, so this
    one must have been called. The new MLP shares no variables with this one.

    Args:
      activate_final: Whether its last layer is activated; this MLP's setting
        by default.
      name: Its name; this one's with "_reversed" appended by default.

    Returns:
      The reversed MLP.
    """
    if not all(hasattr(layer, "input_size") for layer in self._layers):
      raise checks.NotBuiltError(
          f"{checks.describe(self)} must be called once before "
          "reverse(): the reversed MLP's sizes are this one's input sizes.")
    return MLP(
        output_sizes=[layer.input_size for layer in reversed(self._layers)],
        w_init=self._w_init, b_init=self._b_init, with_bias=self._with_bias,
        activation=self._activation, dropout_rate=self._dropout_rate,
        activate_final=(self._activate_final if activate_final is None else
                        activate_final),
        name=name or f"{self.name}_reversed")
