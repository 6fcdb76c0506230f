"""A checkpoint's values at one step, held in memory and written later.

`take(checkpoint)` gathers, now, everything `tf.train.Checkpoint.write`
would write: the object graph and every object's serialized tensors
(variables, the data iterator's state, the random generator, Python
states such as the history and the run settings). `Snapshot.write(prefix)`
writes them later, from any thread, as the same tensor bundle under the
same names, so `tf.train.Checkpoint.restore` reads it like any other.

Variables are read without a copy: while a read of a variable is held,
TensorFlow gives the variable a new buffer on its next write (copy on
write; an assignment simply takes the new value's buffer). So taking a
snapshot copies nothing, and the training step after it pays for one copy
of each variable it updates in place; the memory cost is one copy of the
checkpoint while its write is under way. Variables on an accelerator are
copied to the host CPU, as TensorFlow's own save does.

This uses TensorFlow's checkpoint internals, behind the wall
(`core/tf_private/checkpoint.py`: `_gather_serialized_tensors`,
`MultiDeviceSaver`); where they are missing (another TensorFlow) or the
checkpoint holds an object with its own registered saver, `take` returns
None and the caller writes in place.
"""

from typing import Any

import tensorflow as tf

from sonnet_like.core.tf_private import checkpoint as tf_checkpoint


class Snapshot:
  """The tensors of a checkpoint at one step; `write` puts them in files."""

  def __init__(self, tensors: Any):
    self._tensors = tensors

  def write(self, prefix: str) -> None:
    """Writes `prefix.index` and `prefix.data-*` (data first, as TF does)."""
    with tf.device("CPU:0"):
      prefix_tensor = tf.constant(prefix, tf.string)
    tf_checkpoint.write_tensors(self._tensors, prefix_tensor)


def take(checkpoint: tf.train.Checkpoint) -> Snapshot | None:
  """The state `checkpoint` would write now, or None (see module doc)."""
  tensors = tf_checkpoint.gather_serialized_tensors(checkpoint)
  if tensors is None:
    return None
  held = type(tensors)()  # Keyed by object identity, like TF's.
  for trackable, by_key in tensors.items():
    held[trackable] = {
        key: ({spec: tf_checkpoint.read_spec(v) for spec, v in value.items()}
              if isinstance(value, dict) else tf_checkpoint.read_spec(value))
        for key, value in by_key.items()}
  return Snapshot(held)
