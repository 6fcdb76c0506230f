"""TrainableState: a learned initial state for a recurrent core."""

from typing import Any

import numpy as np
import tensorflow as tf

from sonnet_like.core import base
from sonnet_like.core import checks
from sonnet_like.core import types
from sonnet_like.modules.recurrent import rnn_core
from sonnet_like.modules.recurrent import state_checks


def _variable_name(path: str) -> str:
  """`.hidden` -> `hidden`, `[1][0]` -> `1/0`, `['a']` -> `a`; "" -> state."""
  parts = path.replace("]", "").replace("[", "/").replace(".", "/").split("/")
  return "/".join(p.strip("'\"") for p in parts if p) or "state"


class TrainableState(base.Module):
  """A state whose initial value is learned, one copy per batch entry.

  Each leaf of the state is a variable of shape `[1, ...]`; calling the module
  tiles it to `[batch_size, ...]`, so gradients flow back into it.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> core = snt.LSTM(hidden_size=4, name="lstm_for_state")
      >>> state = snt.TrainableState.for_core(core, name="learned_start")
      >>> state(3).hidden.shape
      TensorShape([3, 4])
      >>> [v.name for v in state.variables]
      ['learned_start/hidden:0', 'learned_start/cell:0']
  """

  @classmethod
  def for_core(cls, core: rnn_core.RNNCore, mask: Any = None,
               name: str | None = None) -> "TrainableState":
    """A trainable state starting from `core.initial_state(1)`.

    Args:
      core: The core whose state is learned.
      mask: Optional nest of bools, the structure of the core's state, saying
        which leaves are trainable (all by default).
      name: Name of the module.

    Returns:
      A `TrainableState`.
    """
    initial_values = tf.nest.map_structure(lambda s: tf.squeeze(s, axis=0),
                                           core.initial_state(1))
    return cls(initial_values, mask, name)

  def __init__(self, initial_values: Any, mask: Any = None,
               name: str | None = None):
    """Constructs a trainable state.

    Args:
      initial_values: A nest of tensors: the initial value of each leaf, for
        one batch entry (without the batch axis).
      mask: Optional nest of bools of the same structure, saying which leaves
        are trainable (all by default).
      name: Name of the module.
    """
    super().__init__(name=name)
    flat = tf.nest.flatten(initial_values)
    if not flat:
      raise ValueError("TrainableState: initial_values must contain at least "
                       f"one tensor, got {initial_values!r}.")
    if mask is None:
      flat_mask = [True] * len(flat)
    else:
      try:
        tf.nest.assert_same_structure(initial_values, mask, check_types=False)
      except (ValueError, TypeError):
        raise ValueError(
            "TrainableState: mask must have the structure of initial_values, "
            f"{state_checks.describe_structure(initial_values)}, got "
            f"{state_checks.describe_structure(mask)}.") from None
      flat_mask = tf.nest.flatten(mask)
      if not all(isinstance(m, bool) for m in flat_mask):
        raise TypeError("TrainableState: mask must hold Python bools, got "
                        f"{mask!r}.")
    variables = []
    for path, value, trainable in zip(state_checks.leaf_paths(initial_values),
                                      flat, flat_mask):
      value = tf.convert_to_tensor(value)
      variables.append(tf.Variable(tf.expand_dims(value, axis=0),
                                   trainable=trainable,
                                   name=_variable_name(path)))
    self._template = tf.nest.pack_sequence_as(initial_values, variables)

  def __call__(self, batch_size: types.IntLike) -> Any:
    """The state tiled to `[batch_size, ...]` per leaf."""
    batch_size = _check_batch_size(self, batch_size)
    return tf.nest.map_structure(
        lambda v: tf.tile(v, [batch_size] + [1] * (v.shape.rank - 1)),
        self._template)


def _check_batch_size(module: Any, batch_size: types.IntLike) -> Any:
  """`batch_size` if it is >= 0; an error naming `module` otherwise.

  A Python number is checked now; a tensor when the graph runs (an
  `InvalidArgumentError`, as the tiling kernel would raise, but naming the
  module).
  """
  message = (f"{checks.describe(module)} needs a batch size >= 0, got "
             "{got}.")
  if isinstance(batch_size, (int, np.integer)):
    if batch_size < 0:
      raise checks.InputShapeError(message.format(got=batch_size))
    return batch_size
  batch_size = tf.convert_to_tensor(batch_size)
  static = tf.get_static_value(batch_size)
  if static is not None and static < 0:
    raise checks.InputShapeError(message.format(got=static))
  check = tf.debugging.assert_non_negative(
      batch_size, message=message.format(got="a negative number"))
  with tf.control_dependencies([check]):
    return tf.identity(batch_size)
