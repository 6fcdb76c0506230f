"""`static_unroll` and `dynamic_unroll`: run a core over a sequence.

Both compute

    state = initial_state
    for t in range(T):
      outputs[t], state = core(input_sequence[t], state)

over time-major `[T, B, ...]` inputs. `static_unroll` repeats the step T times
in the graph (T must be known when tracing); `dynamic_unroll` keeps one step
inside a `tf.while_loop` (T may be unknown).

With `sequence_length` (`[B]` integers), a sequence that has ended keeps its
last state and repeats its last output (zeros if its length is 0), as in
Sonnet 2.
"""

from typing import Any, Callable

import tensorflow as tf

from sonnet_like.core import checks
from sonnet_like.modules.recurrent import state_checks

_Core = Callable[[Any, Any], tuple[Any, Any]]


def _check_sequence(owner: str, input_sequence: Any
                   ) -> tuple[list[tf.Tensor], int | None, int | tf.Tensor]:
  """Checks a time-major nest; returns (flat tensors, static T, T tensor)."""
  flat = tf.nest.flatten(input_sequence)
  if not flat:
    raise ValueError(f"{owner}: input_sequence must contain at least one "
                     f"tensor, got {input_sequence!r}.")
  paths = state_checks.leaf_paths(input_sequence, "input_sequence")
  tensors = []
  for path, x in zip(paths, flat):
    try:
      x = tf.convert_to_tensor(x)
    except (TypeError, ValueError):
      raise TypeError(f"{owner}: {path} must be a tensor, got "
                      f"{state_checks.describe_structure(x)}.") from None
    if x.shape.rank is None or x.shape.rank < 2:
      raise ValueError(f"{owner}: {path} must have shape [T, B, ...] "
                       "(time-major), got "
                       f"{state_checks.describe_structure(x)}.")
    tensors.append(x)
  known = {p: x.shape[0] for p, x in zip(paths, tensors)
           if x.shape[0] is not None}
  if len(set(known.values())) > 1:
    shown = ", ".join(f"{p}: {n}" for p, n in known.items())
    raise ValueError(f"{owner}: input_sequence tensors must have consistent "
                     f"number of time steps (axis 0), got {shown}.")
  if 0 in known.values():
    raise ValueError(f"{owner}: input_sequence must have at least a single "
                     "time step, got 0 (axis 0).")
  if len(known) == len(tensors):
    num_steps = int(tensors[0].shape[0])
    return tensors, num_steps, num_steps
  num_steps = tf.shape(tensors[0])[0]
  asserts = [tf.debugging.assert_positive(
      num_steps, message=f"{owner}: input_sequence must have at least a "
      "single time step, got 0 (axis 0).")]
  for path, x in zip(paths[1:], tensors[1:]):
    asserts.append(tf.debugging.assert_equal(
        tf.shape(x)[0], num_steps,
        message=f"{owner}: input_sequence tensors must have consistent "
        f"number of time steps: {path} has a different number of time steps "
        f"(axis 0) from {paths[0]}."))
  # The inputs wait for the checks too: otherwise reading step 0 of an empty
  # sequence may fail first, with TensorFlow's own message.
  with tf.control_dependencies(asserts):
    num_steps = tf.identity(num_steps)
    tensors = [tf.identity(x) for x in tensors]
  return tensors, None, num_steps


def _check_sequence_length(owner: str, sequence_length: Any,
                           inputs: list[tf.Tensor]) -> tf.Tensor | None:
  if sequence_length is None:
    return None
  sequence_length = tf.convert_to_tensor(sequence_length)
  if not sequence_length.dtype.is_integer or sequence_length.shape.rank != 1:
    raise ValueError(f"{owner}: sequence_length must be a [B] integer tensor, "
                     f"got shape {sequence_length.shape.as_list()} of dtype "
                     f"{sequence_length.dtype.name}.")
  batch, given = inputs[0].shape[1], sequence_length.shape[0]
  if batch is not None and given is not None and batch != given:
    raise checks.InputShapeError(
        f"{owner}: sequence_length has {given} entries but the "
        f"batch size (axis 1 of input_sequence) is {batch}.")
  return sequence_length


def _select(done: tf.Tensor, old: Any, new: Any) -> Any:
  """Per batch entry, `old` where `done` else `new` (scalars: `new`)."""
  if new is None or new.shape.rank == 0:
    return new
  done = tf.reshape(done, [-1] + [1] * (new.shape.rank - 1))
  return tf.where(done, old, new)


def _step(owner: str, core: _Core, inputs: Any, t: Any,
          sequence_length: tf.Tensor | None, prev_outputs: Any,
          prev_state: Any) -> tuple[Any, Any]:
  """One step, then masking of the sequences that have ended."""
  outputs, state = core(inputs, prev_state)
  try:
    tf.nest.assert_same_structure(prev_state, state, check_types=False)
  except (ValueError, TypeError):
    raise ValueError(
        f"{owner}: the core returned a next_state of structure "
        f"{state_checks.describe_structure(state)}, but its prev_state was "
        f"{state_checks.describe_structure(prev_state)}; a core must return "
        "a state of the same structure as the one it receives (see "
        "core.initial_state).") from None
  state = tf.nest.pack_sequence_as(prev_state, tf.nest.flatten(state))
  if sequence_length is None:
    return outputs, state
  if prev_outputs is None:
    prev_outputs = tf.nest.map_structure(tf.zeros_like, outputs)
  done = tf.cast(t, sequence_length.dtype) >= sequence_length
  outputs = tf.nest.map_structure(lambda o, n: _select(done, o, n),
                                  prev_outputs, outputs)
  state = tf.nest.map_structure(lambda o, n: _select(done, o, n),
                                prev_state, state)
  return outputs, state


def static_unroll(core: _Core, input_sequence: Any, initial_state: Any,
                  sequence_length: Any = None) -> tuple[Any, Any]:
  """Runs `core` over a sequence with the step repeated T times in the graph.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> core = snt.LSTM(hidden_size=4, name="static_example")
      >>> outputs, final_state = snt.static_unroll(
      ...     core, tf.ones([5, 2, 3]), core.initial_state(2))
      >>> outputs.shape
      TensorShape([5, 2, 4])

  Args:
    core: An `RNNCore`, or any `(inputs, prev_state) -> (outputs,
      next_state)` callable.
    input_sequence: A nest of time-major tensors `[T, B, ...]`; T must be
      known when tracing.
    initial_state: The state before the first step.
    sequence_length: Optional `[B]` integer lengths of the (padded)
      sequences.

  Returns:
    `(output_sequence, final_state)`: outputs stacked to `[T, B, ...]`, and the
    state after the last step.

  Raises:
    ValueError: if `input_sequence` is empty, has no time step, tensors with
      different numbers of steps, or an unknown number of steps.
  """
  owner = "static_unroll"
  flat, num_steps, _ = _check_sequence(owner, input_sequence)
  if num_steps is None:
    raise ValueError(
        f"{owner}: input_sequence must have a statically known number of "
        f"time steps (axis 0) when tracing, got shape "
        f"{flat[0].shape.as_list()}. Use "
        "dynamic_unroll, or trace with a known number of steps.")
  sequence_length = _check_sequence_length(owner, sequence_length, flat)
  steps = [tf.unstack(x, num=num_steps) for x in flat]
  outputs, state, all_outputs = None, initial_state, []
  for t in range(num_steps):
    inputs = tf.nest.pack_sequence_as(input_sequence, [s[t] for s in steps])
    outputs, state = _step(owner, core, inputs, t, sequence_length, outputs,
                           state)
    all_outputs.append(tf.nest.flatten(outputs))
  stacked = [tf.stack(column) for column in zip(*all_outputs)]
  return tf.nest.pack_sequence_as(outputs, stacked), state


def dynamic_unroll(core: _Core, input_sequence: Any, initial_state: Any,
                   sequence_length: Any = None, parallel_iterations: int = 1,
                   swap_memory: bool = False) -> tuple[Any, Any]:
  """Runs `core` over a sequence inside a `tf.while_loop`.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> core = snt.GRU(hidden_size=4, name="dynamic_example")
      >>> outputs, final_state = snt.dynamic_unroll(
      ...     core, tf.ones([5, 2, 3]), core.initial_state(2),
      ...     sequence_length=[5, 2])
      >>> outputs.shape
      TensorShape([5, 2, 4])

  The first step runs before the loop, to learn the structure of the outputs.
  State leaves that are None (e.g. the unused dropout masks of
  `lstm_with_recurrent_dropout`) are passed through.

  Args:
    core: An `RNNCore`, or any `(inputs, prev_state) -> (outputs,
      next_state)` callable.
    input_sequence: A nest of time-major tensors `[T, B, ...]`.
    initial_state: The state before the first step.
    sequence_length: Optional `[B]` integer lengths of the (padded)
      sequences.
    parallel_iterations: Passed to `tf.while_loop`.
    swap_memory: Passed to `tf.while_loop`.

  Returns:
    `(output_sequence, final_state)`: outputs stacked to `[T, B, ...]`, and the
    state after the last step.

  Raises:
    ValueError: if `input_sequence` is empty, has no time step, or tensors
      with different numbers of steps (checked when the graph runs if the
      number of steps is unknown when tracing).
  """
  owner = "dynamic_unroll"
  flat, static_steps, num_steps = _check_sequence(owner, input_sequence)
  sequence_length = _check_sequence_length(owner, sequence_length, flat)
  arrays = [tf.TensorArray(x.dtype, size=num_steps, element_shape=x.shape[1:])
            .unstack(x) for x in flat]

  def read(t):
    return tf.nest.pack_sequence_as(input_sequence, [a.read(t) for a in arrays])

  outputs, state = _step(owner, core, read(0), 0, sequence_length, None,
                         initial_state)
  flat_outputs = tf.nest.flatten(outputs)
  output_arrays = [
      tf.TensorArray(o.dtype, size=num_steps, element_shape=o.shape).write(0, o)
      for o in flat_outputs]
  if static_steps == 1:
    stacked = [a.stack() for a in output_arrays]
    return tf.nest.pack_sequence_as(outputs, stacked), state

  # Loop variables must be tensors: None leaves of the state stay outside.
  flat_state = tf.nest.flatten(state)
  present = [i for i, s in enumerate(flat_state) if s is not None]

  def pack_state(tensors):
    leaves = list(flat_state)
    for i, tensor in zip(present, tensors):
      leaves[i] = tensor
    return tf.nest.pack_sequence_as(state, leaves)

  def body(t, prev_outputs, state_tensors, output_arrays):
    prev = tf.nest.pack_sequence_as(outputs, prev_outputs)
    new_outputs, new_state = _step(owner, core, read(t), t, sequence_length,
                                   prev, pack_state(state_tensors))
    new_flat = tf.nest.flatten(new_outputs)
    output_arrays = [a.write(t, o) for a, o in zip(output_arrays, new_flat)]
    new_state = tf.nest.flatten(new_state)
    return t + 1, new_flat, [new_state[i] for i in present], output_arrays

  _, _, final_tensors, output_arrays = tf.while_loop(
      lambda t, *_: t < num_steps, body,
      (tf.constant(1), flat_outputs, [flat_state[i] for i in present],
       output_arrays),
      parallel_iterations=parallel_iterations, swap_memory=swap_memory,
      maximum_iterations=num_steps - 1)
  stacked = [a.stack() for a in output_arrays]
  return (tf.nest.pack_sequence_as(outputs, stacked),
          pack_state(final_tensors))
