"""Checks of a recurrent core's inputs and state, with errors naming the core.

A core describes the state it expects as a nest of `tf.TensorShape`s (the
shape of each leaf without the batch axis), e.g. `LSTMState(hidden=[3],
cell=[4])`; `check_state` then reports a wrong structure, rank, size, dtype
or batch size as "LSTM 'lstm' expects prev_state.cell of shape [B, 4], got
[2, 5]." instead of a kernel error (or a silent broadcast) later on.
"""

from typing import Any

import tensorflow as tf

from sonnet_like.core import checks

WRONG_STRUCTURE_ERROR = (
    "{module} expects {argument} to be {expected}, got {actual}. Make the "
    "state with the core's initial_state(batch_size), or pass back the "
    "next_state it returned.")


def _is_namedtuple(value: Any) -> bool:
  return isinstance(value, tuple) and hasattr(value, "_fields")


def leaf_paths(structure: Any, prefix: str = "") -> list[str]:
  """Readable paths of the leaves, in `tf.nest.flatten` order.

  `LSTMState(h, c)` gives `[".hidden", ".cell"]`, `(a, (b, c))` gives
  `["[0]", "[1][0]", "[1][1]"]` and `{"x": a}` gives `["['x']"]`.
  """
  if _is_namedtuple(structure):
    parts = [(f".{f}", v) for f, v in zip(structure._fields, structure)]
  elif isinstance(structure, (tuple, list)):
    parts = [(f"[{i}]", v) for i, v in enumerate(structure)]
  elif isinstance(structure, dict):
    parts = [(f"[{k!r}]", structure[k]) for k in sorted(structure)]
  else:
    return [prefix]
  return [p for key, value in parts for p in leaf_paths(value, prefix + key)]


def _show_shape(shape: tf.TensorShape, batch: bool) -> str:
  dims = ["?" if d is None else str(d) for d in
          (shape.as_list() if shape.rank is not None else [])]
  if shape.rank is None:
    return "<unknown rank>"
  return "[" + ", ".join((["B"] if batch else []) + dims) + "]"


def describe_structure(structure: Any, expected: bool = False) -> str:
  """A compact picture of a nest: `LSTMState(hidden=[2, 3], cell=None)`.

  Args:
    structure: The nest; tensor-like leaves are shown by their shape.
    expected: Whether `structure` holds expected per-example shapes
      (`tf.TensorShape`s), shown with a leading batch axis `B`.
  """
  if _is_namedtuple(structure):
    inner = ", ".join(f"{f}={describe_structure(v, expected)}"
                      for f, v in zip(structure._fields, structure))
    return f"{type(structure).__name__}({inner})"
  if isinstance(structure, tuple):
    inner = ", ".join(describe_structure(v, expected) for v in structure)
    return f"({inner}{',' if len(structure) == 1 else ''})"
  if isinstance(structure, list):
    return "[" + ", ".join(describe_structure(v, expected)
                           for v in structure) + "]"
  if isinstance(structure, dict):
    return "{" + ", ".join(
        f"{k!r}: {describe_structure(structure[k], expected)}"
        for k in sorted(structure)) + "}"
  if isinstance(structure, tf.TensorShape):
    return _show_shape(structure, batch=expected)
  shape = getattr(structure, "shape", None)
  if shape is not None:
    return _show_shape(tf.TensorShape(shape), batch=False)
  if structure is None or isinstance(structure, (bool, int, float, str)):
    return repr(structure)
  return type(structure).__name__


def check_inputs(module: Any, inputs: Any, dtype: tf.DType, rank: int,
                 layout: str) -> tf.Tensor:
  """Converts `inputs` and checks its rank and dtype; returns the tensor."""
  inputs = tf.convert_to_tensor(inputs)
  checks.check_rank(module, inputs, rank=rank, layout=layout)
  check_dtype(module, inputs, dtype)
  return inputs


def check_dtype(module: Any, inputs: tf.Tensor, dtype: tf.DType) -> None:
  """The inputs must have the dtype the core was constructed with."""
  if tf.as_dtype(inputs.dtype) != tf.as_dtype(dtype):
    raise checks.InputDTypeError(
        f"{checks.describe(module)} was constructed with dtype "
        f"{tf.as_dtype(dtype).name}: inputs must have dtype "
        f"{tf.as_dtype(dtype)!r}, got {tf.as_dtype(inputs.dtype)!r}. Cast the "
        "inputs or pass dtype= to the constructor.")


def check_state(module: Any, state: Any, expected: Any, dtype: tf.DType,
                batch_like: tf.Tensor | None = None,
                argument: str = "prev_state", batch_axis: int = 0) -> Any:
  """Checks `state` against `expected`; returns it with tensor leaves.

  Sizes and batch sizes that are only known when the graph runs are checked
  then, with the same messages.

  Args:
    module: The core, for error messages.
    state: The state received.
    expected: The same structure, with a `tf.TensorShape` per leaf giving its
      shape without the batch axis.
    dtype: The dtype every leaf must have.
    batch_like: A tensor with a batch axis (usually the inputs); every leaf
      must have the same batch size.
    argument: The argument's name in messages.
    batch_axis: The batch axis of `batch_like` (1 for time-major inputs).

  Returns:
    `state`, its leaves converted to tensors.

  Raises:
    ValueError: wrong structure, rank, size or batch size.
    TypeError: wrong dtype, or a leaf that is not tensor-like.
  """
  who = checks.describe(module)
  try:
    tf.nest.assert_same_structure(expected, state, check_types=True)
  except (ValueError, TypeError):
    raise ValueError(WRONG_STRUCTURE_ERROR.format(
        module=who, argument=argument,
        expected=describe_structure(expected, expected=True),
        actual=describe_structure(state))) from None
  paths = leaf_paths(expected)
  leaves = []
  asserts = []
  batch_name, batch_size, batch_tensor = None, None, None
  if batch_like is not None:
    batch_name, batch_size = "inputs", batch_like.shape[batch_axis]
    batch_tensor = batch_like
  for path, tail, leaf in zip(paths, tf.nest.flatten(expected),
                              tf.nest.flatten(state)):
    name = argument + path
    try:
      leaf = tf.convert_to_tensor(leaf)
    except (TypeError, ValueError):
      raise TypeError(f"{who} expects {name} to be a tensor, got "
                      f"{describe_structure(leaf)}.") from None
    wanted = _show_shape(tail, batch=True)
    if leaf.shape.rank != tail.rank + 1:
      raise checks.InputShapeError(
          f"{who} expects {name} of shape {wanted}, got "
          f"{_show_shape(leaf.shape, batch=False)}.")
    for axis, size in enumerate(tail.as_list(), start=1):
      got = leaf.shape[axis]
      if got is not None and got != size:
        raise checks.InputShapeError(
            f"{who} expects {name} of shape {wanted}, got "
            f"{_show_shape(leaf.shape, batch=False)}.")
      if got is None:
        asserts.append(tf.debugging.assert_equal(
            tf.shape(leaf)[axis], size,
            message=f"{who} expects {name} of shape {wanted}, got another "
            "size."))
    if leaf.dtype != tf.as_dtype(dtype):
      raise checks.InputDTypeError(f"{who} expects {name} of dtype "
                      f"{tf.as_dtype(dtype).name}, got {leaf.dtype.name}.")
    if batch_tensor is None:
      batch_name, batch_size, batch_tensor = name, leaf.shape[0], leaf
      batch_axis = 0
    elif batch_size is not None and leaf.shape[0] is not None:
      if batch_size != leaf.shape[0]:
        raise checks.InputShapeError(f"{who} got {batch_name} with batch size "
                         f"{batch_size} but {name} with batch size "
                         f"{leaf.shape[0]}.")
    else:
      asserts.append(tf.debugging.assert_equal(
          tf.shape(batch_tensor)[batch_axis], tf.shape(leaf)[0],
          message=f"{who} got {batch_name} and {name} with different batch "
          "sizes."))
      if batch_size is None:
        batch_name, batch_size, batch_tensor = name, leaf.shape[0], leaf
        batch_axis = 0
    leaves.append(leaf)
  if asserts and not tf.executing_eagerly():
    with tf.control_dependencies(asserts):
      leaves = [tf.identity(leaf) for leaf in leaves]
  return tf.nest.pack_sequence_as(state, leaves)
