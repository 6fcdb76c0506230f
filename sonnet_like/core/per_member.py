"""`convert`: pfor's conversion of an op made again for every member.

`tf.vectorized_map` (pfor) has no vectorised form of some ops a member's
step makes: TensorFlow's stateless random ops for a key per member
(`core/generator.py`), `L2Loss` (gradient clipping, a weight penalty),
`Conv3D`, `Sort`. Left to pfor, such an op runs in a `While` over the
members, its outputs gathered in `TensorList`s, at every use. An op given
`convert` as its conversion (`tf_private.pfor.set_converter`, the wall
around pfor's internals) is made once per member instead, on that
member's inputs, and its outputs stacked: each member's value is the op's
own, bit for bit a solo run's. `unconvertible(op)` tells which ops of a
member's step to give it (`population/lockstep.py` walks them).

    half = tf.nn.l2_loss(gradient)
    if not tf.executing_eagerly():  # An eager tensor has no op.
      tf_private.pfor.set_converter(half.op, per_member.convert)
"""

import tensorflow as tf

from sonnet_like.core.tf_private import pfor


def unconvertible(op: tf.Operation) -> bool:
  """Whether `op` should be made per member (`convert`): an op that pfor
  has no conversion for (it would run it in a `While` over the members)
  and that changes no state (its copies may run in any order), or a branch
  (`If`) passing variants (a model's tensor `if`: the intermediates its
  gradient reads, which pfor's conversion loses; an assert or print in it
  runs once per member). Only an op whose outputs have known shapes (they
  stack)."""
  if (pfor.has_converter(op) or not (op.inputs and op.outputs)
      or not all(x.shape.is_fully_defined() for x in op.outputs)):
    return False
  variants = any(x.dtype == tf.variant
                 for x in list(op.outputs) + list(op.inputs))
  if op.type in ("If", "StatelessIf"):
    return variants
  return (not pfor.has_conversion(op.type)
          and not op.op_def.is_stateful and not variants)


def convert(pfor_input) -> list[pfor.WrappedTensor]:
  """The op of `pfor_input` again for each member, on that member's
  inputs, its outputs stacked. A member count known only when run leaves
  it to pfor's `While`."""
  op = pfor.op_of(pfor_input)
  members = pfor.static_member_count(pfor_input)
  if members is None:
    raise pfor.ConversionNotImplementedError(
        f"{op.type} once per member needs a static member count.")
  inputs = []
  for value, stacked, _ in pfor.inputs(pfor_input):
    inputs.append(tf.unstack(value, members) if stacked
                  else [value] * members)
  made = [tf.compat.v1.get_default_graph().create_op(
      op.type, list(member), [x.dtype for x in op.outputs],
      attrs=op.node_def.attr) for member in zip(*inputs)]
  return [pfor.wrap(tf.stack([m.outputs[i] for m in made]), True)
          for i in range(len(op.outputs))]
