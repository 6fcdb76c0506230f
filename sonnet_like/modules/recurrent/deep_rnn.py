"""DeepRNN: a stack of cores (and plain callables) run as one core.

Also the two variants Sonnet builds on it: skip connections (each layer also
sees the core's inputs) and residual connections (each layer's inputs are
added to its outputs).
"""

from typing import Any, Callable, Sequence

import tensorflow as tf

from sonnet_like.core import checks
from sonnet_like.core import types
from sonnet_like.modules.recurrent import rnn_core
from sonnet_like.modules.recurrent import state_checks


def _concat(*tensors: tf.Tensor) -> tf.Tensor:
  return tf.concat(tensors, axis=-1)


class _LegacyDeepRNN(rnn_core.RNNCore):
  """The stack, with optional skip connections (see the public factories)."""

  def __init__(self, layers: Sequence[Callable[..., Any]],
               skip_connections: bool, concat_final_output_if_skip: bool = True,
               name: str | None = None):
    super().__init__(name=name)
    owner = type(self).__name__
    if layers is None:
      layers = []
    if not isinstance(layers, (list, tuple)):
      raise TypeError(f"{owner}: layers must be a list of RNNCores or "
                      f"callables, got {layers!r}.")
    for i, layer in enumerate(layers):
      if not callable(layer):
        raise TypeError(f"{owner}: layers[{i}] must be an RNNCore or a "
                        f"callable, got {layer!r}.")
    self._layers = list(layers)
    self._skip_connections = skip_connections
    self._concat_final_output_if_skip = concat_final_output_if_skip

  def _cores(self) -> list[rnn_core.RNNCore]:
    return [l for l in self._layers if isinstance(l, rnn_core.RNNCore)]

  def initial_state(self, batch_size: types.IntLike, **kwargs) -> tuple:
    """A tuple with the initial state of each `RNNCore` layer, in order."""
    return tuple(core.initial_state(batch_size, **kwargs)
                 for core in self._cores())

  def __call__(self, inputs: Any, prev_state: tuple) -> tuple[Any, tuple]:
    """One step through every layer.

    Args:
      inputs: The inputs of the first layer.
      prev_state: A tuple with one state per `RNNCore` layer.

    Returns:
      `(outputs, next_state)`; `next_state` is a tuple like `prev_state`.
    """
    cores = self._cores()
    if not isinstance(prev_state, (tuple, list)) or len(prev_state) != len(
        cores):
      raise checks.StateLengthError(
          f"{checks.describe(self)} expects prev_state to be a tuple with "
          f"one state per recurrent layer ({len(cores)}), got "
          f"{state_checks.describe_structure(prev_state)}. Use "
          "initial_state(batch_size).")
    current, outputs, next_states = inputs, [], []
    states = iter(prev_state)
    for i, layer in enumerate(self._layers):
      if self._skip_connections and i > 0:
        current = tf.nest.map_structure(_concat, inputs, current)
      if isinstance(layer, rnn_core.RNNCore):
        current, next_state = layer(current, next(states))
        next_states.append(next_state)
      else:
        current = layer(current)
      outputs.append(current)
    if self._skip_connections and self._concat_final_output_if_skip:
      return tf.nest.map_structure(_concat, *outputs), tuple(next_states)
    return current, tuple(next_states)


class DeepRNN(_LegacyDeepRNN):
  """Runs layers in sequence; `RNNCore` layers get their own state.

  The state is a tuple with one entry per `RNNCore` layer (empty if there is
  none). Other callables (e.g. `snt.Linear`, `tf.nn.relu`) are applied as is.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> deep = snt.DeepRNN([snt.LSTM(8, name="deep_lstm"), tf.nn.relu,
      ...                     snt.GRU(4, name="deep_gru")], name="deep_example")
      >>> state = deep.initial_state(2)
      >>> len(state)
      2
      >>> outputs, state = deep(tf.ones([2, 3]), state)
      >>> outputs.shape
      TensorShape([2, 4])
  """

  def __init__(self, layers: Sequence[Callable[..., Any]],
               name: str | None = None):
    """Constructs a DeepRNN.

    Args:
      layers: `RNNCore`s and callables, applied in order.
      name: Name of the module.
    """
    super().__init__(layers, skip_connections=False, name=name)


def _require_cores(owner: str, layers: Sequence[Any]) -> None:
  for i, layer in enumerate(layers):
    if not isinstance(layer, rnn_core.RNNCore):
      raise ValueError(f"{owner} requires all layers to be instances of "
                       f"RNNCore, got layers[{i}] = {layer!r}.")


def deep_rnn_with_skip_connections(
    layers: Sequence[rnn_core.RNNCore], concat_final_output: bool = True,
    name: str = "deep_rnn_with_skip_connections") -> rnn_core.RNNCore:
  """A deep core whose layers after the first also see the core's inputs.

  Layer `i > 0` receives `concat([inputs, outputs[i - 1]], axis=-1)`. The
  output is the concatenation of every layer's outputs, or only the last
  layer's with `concat_final_output=False`.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> deep = snt.deep_rnn_with_skip_connections(
      ...     [snt.LSTM(4, name="skip_l0"), snt.LSTM(5, name="skip_l1")],
      ...     name="skip_example")
      >>> outputs, _ = deep(tf.ones([2, 3]), deep.initial_state(2))
      >>> outputs.shape
      TensorShape([2, 9])

  Args:
    layers: `RNNCore`s only.
    concat_final_output: Whether to output all layers' outputs concatenated.
    name: Name of the module.

  Returns:
    The deep core.

  Raises:
    ValueError: if a layer is not an `RNNCore`.
  """
  _require_cores("deep_rnn_with_skip_connections", layers)
  return _LegacyDeepRNN(layers, skip_connections=True,
                      concat_final_output_if_skip=concat_final_output,
                      name=name)


class _ResidualWrapper(rnn_core.RNNCore):
  """A core whose outputs have its inputs added."""

  def __init__(self, base_core: rnn_core.RNNCore):
    super().__init__(name=base_core.name + "_residual")
    self._base_core = base_core

  def initial_state(self, batch_size: types.IntLike, **kwargs) -> Any:
    return self._base_core.initial_state(batch_size, **kwargs)

  def __call__(self, inputs: Any, prev_state: Any) -> tuple[Any, Any]:
    outputs, next_state = self._base_core(inputs, prev_state)
    try:
      tf.nest.assert_same_structure(inputs, outputs, check_types=False)
      residual = tf.nest.map_structure(self._add, inputs, outputs)
    except (ValueError, TypeError) as error:
      raise ValueError(
          f"{checks.describe(self)}: a residual connection needs outputs of "
          f"the same shape as the inputs, got inputs "
          f"{state_checks.describe_structure(inputs)} and outputs "
          f"{state_checks.describe_structure(outputs)} from "
          f"{checks.describe(self._base_core)}.") from error
    return residual, next_state

  def _add(self, x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
    x = tf.convert_to_tensor(x)
    if (x.shape.rank is not None and y.shape.rank is not None and
        not x.shape.is_compatible_with(y.shape)):
      raise ValueError(f"shapes {x.shape} and {y.shape} differ")
    return x + y


def deep_rnn_with_residual_connections(
    layers: Sequence[rnn_core.RNNCore],
    name: str = "deep_rnn_with_residual_connections") -> rnn_core.RNNCore:
  """A deep core in which every layer adds its inputs to its outputs.

  `outputs[i] = layers[i](outputs[i - 1]) + outputs[i - 1]`, with
  `outputs[-1]` the core's inputs; so every layer keeps the input size.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> layers = [snt.GRU(3, name="res_g0"), snt.GRU(3, name="res_g1")]
      >>> deep = snt.deep_rnn_with_residual_connections(layers,
      ...                                              name="residual_example")
      >>> x = tf.ones([2, 3])
      >>> outputs, _ = deep(x, deep.initial_state(2))
      >>> h0, _ = layers[0](x, layers[0].initial_state(2))
      >>> h1, _ = layers[1](h0 + x, layers[1].initial_state(2))
      >>> float(tf.reduce_max(tf.abs(outputs - (h1 + h0 + x)))) < 1e-6
      True

  Args:
    layers: `RNNCore`s only, each with output size equal to its input size.
    name: Name of the module.

  Returns:
    The deep core.

  Raises:
    ValueError: if a layer is not an `RNNCore`.
  """
  _require_cores("deep_rnn_with_residual_connections", layers)
  return _LegacyDeepRNN([_ResidualWrapper(l) for l in layers],
                      skip_connections=False, name=name)
