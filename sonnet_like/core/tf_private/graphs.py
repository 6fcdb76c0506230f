"""A graph's function library, XLA contexts, a called branch and a graph
error.

Public replacements: none for the first three (`tf.Graph` has no public
lookup of a function by name, nothing public tells whether the graph
being built is compiled by XLA, and `tf.cond` has no option to call its
branch); `tf.errors` does not export `InaccessibleTensorError`.
"""

from typing import Any, Callable

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


# The attribute of an `If` op that, true (`tf.cond`'s choice), inlines both
# branches into the enclosing graph behind switches when the graph runs.
_INLINED = "_lower_using_switch_merge"
_IF_OPS = ("If", "StatelessIf")


def cond_called(pred: Any, true_fn: Callable[[], Any],
                false_fn: Callable[[], Any]) -> Any:
  """`tf.cond(pred, true_fn, false_fn)` whose `If` op calls the branch it
  takes as a function instead of having both inlined (`Operation.
  _set_attr` of `_lower_using_switch_merge`). Inlined, the executor passes
  over every op of the branch not taken, and over a switch for each of its
  inputs, at every run; called, the `If` is one op. For a branch most runs
  skip whose inputs are many. Eagerly it is `tf.cond`."""
  if tf.executing_eagerly():
    return tf.cond(pred, true_fn, false_fn)
  graph = tf.compat.v1.get_default_graph()
  before = len(graph.get_operations())
  out = tf.cond(pred, true_fn, false_fn)
  made = [op for op in graph.get_operations()[before:]
          if op.type in _IF_OPS]
  if len(made) != 1:
    raise ValueError(f"cond_called: tf.cond made {len(made)} If ops, "
                     "expected 1.")
  made[0]._set_attr(_INLINED, tf.compat.v1.AttrValue(b=False))  # pylint: disable=protected-access
  return out
