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

This uses TensorFlow's checkpoint internals (`_gather_serialized_tensors`,
`MultiDeviceSaver`); where they are missing (another TensorFlow) or the
checkpoint holds an object with its own registered saver, `take` returns
None and the caller writes in place.
"""

from typing import Any

import tensorflow as tf

try:  # TensorFlow's internals; see the module docstring.
  from tensorflow.python.checkpoint import functional_saver
  from tensorflow.python.training.saving import saveable_object
except ImportError:  # pragma: no cover - another TensorFlow layout.
  functional_saver = saveable_object = None


def _held(value: Any) -> Any:
  """A tensor now for `value` (a tensor, or a spec that reads one later)."""
  if saveable_object is None or not isinstance(value,
                                               saveable_object.SaveSpec):
    return value
  tensor = value.tensor  # Calls a variable's read: its value now, on host.
  if tensor is None:  # An uninitialized variable: written as TF would.
    return value
  return saveable_object.SaveSpec(tensor, value.slice_spec, value.name,
                                  dtype=value.dtype, device=value.device)


class Snapshot:
  """The tensors of a checkpoint at one step; `write` puts them in files."""

  def __init__(self, tensors: Any):
    self._tensors = tensors

  def write(self, prefix: str) -> None:
    """Writes `prefix.index` and `prefix.data-*` (data first, as TF does)."""
    with tf.device("CPU:0"):
      prefix_tensor = tf.constant(prefix, tf.string)
    functional_saver.MultiDeviceSaver(self._tensors).save(prefix_tensor)


def take(checkpoint: tf.train.Checkpoint) -> Snapshot | None:
  """The state `checkpoint` would write now, or None (see module doc)."""
  saver = getattr(checkpoint, "_saver", None)
  gather = getattr(saver, "_gather_serialized_tensors", None)
  if gather is None or functional_saver is None:
    return None
  tensors, _, registered, _ = gather(None)
  if registered:
    return None
  held = type(tensors)()  # Keyed by object identity, like TF's.
  for trackable, by_key in tensors.items():
    held[trackable] = {
        key: ({spec: _held(v) for spec, v in value.items()}
              if isinstance(value, dict) else _held(value))
        for key, value in by_key.items()}
  return Snapshot(held)
