"""pfor, the converter under `tf.vectorized_map`: what a population uses.

A population vectorises a member's step with TensorFlow's own converter,
called on a function graph the population traced itself (`tf.vectorized_map`
would leave an unconverted copy of the step in the graph), and gives some
ops a conversion of its own. None of this has a public API: the public one
is `tf.vectorized_map(fn, elems)`, which would replace `new_converter` +
`convert_function_call` + `stack` if it could take an already traced
function; a public per-op conversion hook would replace `set_converter` and
the `pfor_input` readers below.

The readers of `pfor_input` (the object pfor hands to an op's conversion,
`_PforInput`) keep the population's converters free of its attributes;
the `WrappedTensor`s they return and take are read by their fields
(`WRAPPED_TENSOR_FIELDS`) in those converters.
"""

from typing import Any, Callable

import tensorflow as tf
# pylint: disable-next=g-direct-tensorflow-import
from tensorflow.python.ops.parallel_for import pfor as _pfor

# A value in a conversion: (t, is_stacked, is_sparse_stacked); `t` holds
# every iteration's value on a leading axis when `is_stacked`.
WrappedTensor = _pfor.WrappedTensor
WRAPPED_TENSOR_FIELDS = ("t", "is_stacked", "is_sparse_stacked")
# What a conversion raises to leave an op to pfor's `While` fallback.
ConversionNotImplementedError = _pfor.ConversionNotImplementedError


def wrap(tensor: tf.Tensor, stacked: bool) -> WrappedTensor:
  """`tensor` as a conversion's value (`stacked`: one value per iteration on
  its leading axis). Public replacement: none."""
  return _pfor.wrap(tensor, stacked)


def new_converter(loop_len: int, ops: list[tf.Operation]) -> Any:
  """A converter of `ops` (a traced function's) for `loop_len` iterations,
  falling back to a `While` for an op it cannot convert: what
  `tf.vectorized_map` makes. Public replacement: `tf.vectorized_map`."""
  return _pfor.PFor(
      loop_var=tf.compat.v1.placeholder_with_default(0, shape=[]),
      loop_len=loop_len, pfor_ops=ops, fallback_to_while_loop=True)


def inner_converter(pfor_input: Any, loop_len: int,
                    ops: list[tf.Operation]) -> Any:
  """A converter of `ops` (a loop's condition or body) inside the
  conversion of `pfor_input`'s op, with its settings (the loop variable,
  the fallback, the indices of a branch): how pfor converts a function an
  op calls. Reads `PFor`'s private `_fallback_to_while_loop` and
  `_all_indices_partitioned`. Public replacement: none."""
  outer = pfor_input.pfor
  return _pfor.PFor(
      loop_var=outer.loop_var, loop_len=loop_len, pfor_ops=ops,
      fallback_to_while_loop=outer._fallback_to_while_loop,  # pylint: disable=protected-access
      all_indices=outer.all_indices,
      all_indices_partitioned=outer._all_indices_partitioned,  # pylint: disable=protected-access
      pfor_config=outer.pfor_config)


def convert_function_call(fn: Any, converter: Any,
                          inputs: list[WrappedTensor]
                          ) -> list[WrappedTensor]:
  """The outputs of `fn` (a concrete function) vectorised by `converter`
  on `inputs`, as ops in the current graph (`pfor._convert_function_call`,
  pfor's conversion of a `PartitionedCall`). Public replacement: none."""
  return _pfor._convert_function_call(fn, converter, inputs)  # pylint: disable=protected-access


def convert_while(pfor_input: Any) -> list[WrappedTensor]:
  """pfor's own conversion of the `While` op of `pfor_input` (each iteration
  stops at its own iteration; `pfor._convert_while`). Public replacement:
  none."""
  return _pfor._convert_while(pfor_input)  # pylint: disable=protected-access


def stack(tensor: tf.Tensor, length: Any) -> tf.Tensor:
  """`tensor` (the same for every iteration) tiled on a new leading axis of
  `length` (a [1] vector or list), as pfor stacks a value
  (`pfor._stack`). Public replacement: `tf.tile(tensor[None], ...)`, not
  bitwise the same graph."""
  return _pfor._stack(tensor, length).t  # pylint: disable=protected-access


def has_conversion(op_type: str) -> bool:
  """Whether pfor has a vectorised conversion for ops of `op_type` (its
  registry `_pfor_converter_registry`). Public replacement: none."""
  return op_type in _pfor._pfor_converter_registry  # pylint: disable=protected-access


def set_converter(op: tf.Operation,
                  converter: Callable[[Any], list[WrappedTensor]]) -> None:
  """Makes pfor convert `op` with `converter(pfor_input)` (the attribute
  `pfor_converter` pfor reads on an op before its registry). Public
  replacement: none."""
  op.pfor_converter = converter


def has_converter(op: tf.Operation) -> bool:
  """Whether `op` has a conversion of its own (`set_converter`)."""
  return hasattr(op, "pfor_converter")


# ---- What a conversion reads of the `pfor_input` pfor hands it.


def op_of(pfor_input: Any) -> tf.Operation:
  """The op being converted."""
  return pfor_input.op


def iteration_count(pfor_input: Any) -> tf.Tensor:
  """The iteration count as a [1] int32 vector (`PFor.loop_len_vector`)."""
  return pfor_input.pfor.loop_len_vector


def static_iteration_count(pfor_input: Any) -> int | None:
  """The iteration count if it is known while tracing, else None."""
  count = tf.get_static_value(iteration_count(pfor_input))
  return None if count is None else int(count[0])


def every_iteration(pfor_input: Any) -> bool:
  """Whether the op runs for every iteration in order (False inside a
  branch some iterations take: `PFor.all_indices_partitioned`)."""
  return not pfor_input.pfor.all_indices_partitioned


def input_at(pfor_input: Any, index: int) -> WrappedTensor:
  """The op's input `index`, converted (`_PforInput.input`)."""
  return pfor_input.input(index)


def inputs(pfor_input: Any) -> list[WrappedTensor]:
  """The op's inputs, converted."""
  return [pfor_input.input(i) for i in range(pfor_input.num_inputs)]


def unstacked_input(pfor_input: Any, index: int) -> tf.Tensor:
  """Input `index`, known to be the same for every iteration."""
  return pfor_input.unstacked_input(index)


def stacked_input(pfor_input: Any, index: int) -> tf.Tensor:
  """Input `index`, one value per iteration on the leading axis."""
  return pfor_input.stacked_input(index)


def stack_inputs(pfor_input: Any, indices: list[int],
                 tile_variants: bool = False) -> None:
  """Makes the inputs at `indices` per iteration (tiled), in place."""
  pfor_input.stack_inputs(stack_indices=indices, tile_variants=tile_variants)


def attr(pfor_input: Any, name: str) -> Any:
  """The op's attribute `name`."""
  return pfor_input.get_attr(name)
