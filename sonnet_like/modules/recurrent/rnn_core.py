"""`RNNCore` and `UnrolledRNN`: the interfaces of recurrent modules.

A core advances one time step, `core(inputs, prev_state) -> (outputs,
next_state)`; an unrolled RNN consumes a whole time-major sequence,
`rnn(input_sequence, initial_state) -> (output_sequence, final_state)`. Both
make their starting state with `initial_state(batch_size)`.
"""

import abc
from typing import Any

from sonnet_like.core import base
from sonnet_like.core import types


class RNNCore(base.Module):
  """Base class of recurrent cores: one step of a recurrent network.

  Subclasses implement `__call__` and `initial_state`. Cores run over a
  sequence with `snt.static_unroll` or `snt.dynamic_unroll`.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> class Counter(snt.RNNCore):
      ...   def __call__(self, inputs, prev_state):
      ...     return inputs + prev_state, prev_state + 1.
      ...   def initial_state(self, batch_size):
      ...     return tf.zeros([batch_size, 1])
      >>> core = Counter(name="counter_core")
      >>> outputs, state = core(tf.ones([2, 1]), core.initial_state(2))
      >>> state.numpy().tolist()
      [[1.0], [1.0]]
  """

  @abc.abstractmethod
  def __call__(self, inputs: Any, prev_state: Any) -> tuple[Any, Any]:
    """Advances one time step.

    Args:
      inputs: A nest of tensors of shape `[B, ...]`, `B` being the batch size.
      prev_state: The state after the previous step (or `initial_state`).

    Returns:
      `(outputs, next_state)`: a nest of `[B, ...]` tensors, and a state of the
      same structure and shapes as `prev_state`.
    """

  @abc.abstractmethod
  def initial_state(self, batch_size: types.IntLike, **kwargs) -> Any:
    """The state to start a sequence from.

    Args:
      batch_size: A Python int or a scalar integer tensor.
      **kwargs: Core-specific options.

    Returns:
      A nest of tensors whose first axis has size `batch_size`.
    """


class UnrolledRNN(base.Module):
  """Base class of recurrent networks that consume a whole sequence at once.

  Subclasses implement `__call__(input_sequence, initial_state)` over
  time-major `[T, B, ...]` inputs, and `initial_state(batch_size)`.
  """

  @abc.abstractmethod
  def __call__(self, input_sequence: Any,
               initial_state: Any) -> tuple[Any, Any]:
    """Runs over a time-major sequence.

    Args:
      input_sequence: A nest of tensors of shape `[T, B, ...]`.
      initial_state: The state before the first step.

    Returns:
      `(output_sequence, final_state)`: a nest of `[T, B, ...]` tensors and the
      state after the last step.
    """

  @abc.abstractmethod
  def initial_state(self, batch_size: types.IntLike, **kwargs) -> Any:
    """The state to start a sequence from (see `RNNCore.initial_state`)."""
