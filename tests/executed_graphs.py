"""What TensorFlow runs for a call: the op types of the graphs it executes
after its own rewrites (a `tf.cond` lowered to switches and merges, or an
`If` left to call its branch), which the traced graph does not show."""

import collections
from typing import Any, Callable

# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.eager import context as context_lib


def op_types(call: Callable[[], Any]) -> collections.Counter:
  """How many nodes of each op type the graphs run by `call()` hold (the
  run metadata's partition graphs of every function it instantiates)."""
  context = context_lib.context()
  context.enable_run_metadata()
  try:
    call()
    metadata = context.export_run_metadata()
  finally:
    context.disable_run_metadata()
  return collections.Counter(
      node.op for graph in metadata.function_graphs
      for partition in graph.partition_graphs for node in partition.node)
