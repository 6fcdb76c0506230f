"""`tf.vectorized_map` without the unconverted copy of the member's step.

`tf.vectorized_map` traces the function once for one member, into the
graph being built, and adds the vectorised ops beside it. The traced copy
stays in that graph: TensorFlow runs whatever of it is stateful (a `tf.cond`
whose branch reads a variable, such as DQN's learning step sampling its
replay buffer) and, inside a loop, every branch and loop it lowers to
`Switch`/`Merge`, so a step's scalar copy ran beside the vectorised one,
and XLA refused the graph for an op of that copy. Here the member's step is
traced into a function graph that is never called, and its ops are
vectorised from there into the graph being built (TensorFlow's own
conversion, as for a function a vectorised step calls).

    >>> import tensorflow as tf
    >>> @tf.function
    ... def squares():
    ...   return vectorized_map(lambda x: x * x, tf.range(4), 4)
    >>> squares().numpy().tolist()
    [0, 1, 4, 9]
"""

from typing import Any, Callable

import tensorflow as tf

from sonnet_like.core import autograph
from sonnet_like.core.tf_private import autograph as tf_autograph
from sonnet_like.core.tf_private import pfor


def vectorized_map(fn: Callable[[Any], Any], elems: Any, size: int) -> Any:
  """`tf.vectorized_map(fn, elems)` for `size` members (the leading axis of
  every tensor in `elems`), inside a graph being built."""
  flat = tf.nest.flatten(elems)
  specs = [tf.TensorSpec(t.shape[1:], t.dtype) for t in flat]
  # As `tf.vectorized_map` calls it: rewritten under the caller's status,
  # or as written under it (its calls to user code rewritten).
  call = (autograph.keeps_status(fn) if autograph.is_written(fn) else
          tf_autograph.convert(fn, tf_autograph.control_status()))
  made = None  # What `fn` returned for one member (its structure).

  def member(*args):
    nonlocal made
    made = call(tf.nest.pack_sequence_as(elems, list(args)))
    return tf.nest.flatten(made)

  traced = tf.function(member, autograph=False).get_concrete_function(
      *specs)
  with tf.name_scope("members"):
    converter = pfor.new_converter(size, traced.graph.get_operations())
    inputs = ([pfor.wrap(t, True) for t in flat]
              + [pfor.wrap(t, False) for t in traced.captured_inputs])
    outputs = pfor.convert_function_call(traced, converter, inputs)
    stacked = [out.t if out.is_stacked else pfor.stack(out.t, [size])
               for out in outputs]
  return tf.nest.pack_sequence_as(made, stacked)
