"""A graph's function library, XLA contexts and a graph error.

Public replacements: none for the first two (`tf.Graph` has no public
lookup of a function by name, and nothing public tells whether the graph
being built is compiled by XLA); `tf.errors` does not export
`InaccessibleTensorError`.
"""

from typing import Any

import tensorflow as tf
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.framework import errors_impl
try:  # Missing in another layout: then no graph counts as XLA's.
  from tensorflow.python.ops import control_flow_util
except ImportError:  # pragma: no cover - another TensorFlow layout.
  control_flow_util = None
# pylint: enable=g-direct-tensorflow-import

# What TensorFlow raises when a graph uses a tensor of another graph it
# cannot capture (a value defined inside a branch or a loop, read after it).
InaccessibleTensorError = errors_impl.InaccessibleTensorError


def function_in_graph(graph: tf.Graph, name: str | bytes) -> Any:
  """The function named `name` in `graph`'s library or a parent's (the
  body of a `While`, the branch of an `If`), or None (`Graph._get_function`).
  """
  return graph._get_function(tf.compat.as_bytes(name))  # pylint: disable=protected-access


def in_xla_context(graph: tf.Graph) -> bool:
  """Whether `graph` (or a graph it is built in) will be compiled by XLA
  (`control_flow_util.GraphOrParentsInXlaContext`); False where this
  TensorFlow lacks it (the caller then skips an XLA-only check)."""
  in_xla = getattr(control_flow_util, "GraphOrParentsInXlaContext", None)
  return False if in_xla is None else in_xla(graph)
