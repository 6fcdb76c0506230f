"""`convert`: pfor's conversion of an op made again for every iteration.

`tf.vectorized_map` (pfor) has no vectorised form of some ops: TensorFlow's
stateless random ops for a key per iteration (`generator.py`), `L2Loss`,
`Conv3D`, `Sort`. Left to pfor, such an op runs in a `While` over the
iterations, its outputs gathered in `TensorList`s, at every use. An op
given `convert` as its conversion (`tf_private.pfor.set_converter`, the
wall around pfor's internals) is made once per iteration instead, on that
iteration's inputs, and its outputs stacked: each iteration's value is the
op's own, bit for bit. (A population vectorises its members' steps so:
`scenarios/population/lockstep.py` decides which ops get it.)

    half = tf.nn.l2_loss(gradient)
    if not tf.executing_eagerly():  # An eager tensor has no op.
      tf_private.pfor.set_converter(half.op, per_iteration.convert)
"""

import tensorflow as tf

from sonnet_like.core.tf_private import pfor


def convert(pfor_input) -> list[pfor.WrappedTensor]:
  """The op of `pfor_input` again for each iteration, on that iteration's
  inputs, its outputs stacked. A count known only when run leaves it to
  pfor's `While`."""
  op = pfor.op_of(pfor_input)
  count = pfor.static_iteration_count(pfor_input)
  if count is None:
    raise pfor.ConversionNotImplementedError(
        f"{op.type} once per iteration needs a static iteration count.")
  inputs = []
  for value, stacked, _ in pfor.inputs(pfor_input):
    inputs.append(tf.unstack(value, count) if stacked
                  else [value] * count)
  made = [tf.compat.v1.get_default_graph().create_op(
      op.type, list(each), [x.dtype for x in op.outputs],
      attrs=op.node_def.attr) for each in zip(*inputs)]
  return [pfor.wrap(tf.stack([m.outputs[i] for m in made]), True)
          for i in range(len(op.outputs))]
