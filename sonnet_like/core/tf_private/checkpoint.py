"""A checkpoint's object graph and its tensors, gathered now, written later.

`scenarios/run_folder/` reads a checkpoint's object graph (to refuse one
that does not match the models), tells which objects hold values, and
takes a save's tensors in memory to write them on another thread
(background saves). Public replacements: `tf.train.load_checkpoint(...)
.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH")` gives the serialized graph but
no parser (`TrackableObjectGraph`); `tf.train.Checkpoint.write` writes in
place, with no way to take the tensors now and write them later
(`gather_serialized_tensors`, `read_spec`, `write_tensors`); the nearest
public one is `tf.train.CheckpointOptions(
experimental_enable_async_checkpoint=True)`, experimental, and its thread
is TensorFlow's, not ours.
"""

from typing import Any

import tensorflow as tf
# pylint: disable=g-direct-tensorflow-import
from tensorflow.core.protobuf import trackable_object_graph_pb2
try:  # Missing in another layout: saves are then written in place.
  from tensorflow.python.checkpoint import functional_saver
  from tensorflow.python.training.saving import saveable_object
except ImportError:  # pragma: no cover - another TensorFlow layout.
  functional_saver = saveable_object = None
# pylint: enable=g-direct-tensorflow-import

# The proto of a checkpoint's object graph (its `ParseFromString` reads the
# "_CHECKPOINTABLE_OBJECT_GRAPH" tensor).
TrackableObjectGraph = trackable_object_graph_pb2.TrackableObjectGraph


def serializes_tensors(cls: type) -> bool:
  """Whether objects of `cls` write tensors of their own to a checkpoint
  (they override `Trackable._serialize_to_tensors`)."""
  serialize = getattr(cls, "_serialize_to_tensors", None)
  base = getattr(tf.__internal__.tracking.Trackable, "_serialize_to_tensors",
                 None)
  return serialize is not None and serialize is not base


def gather_serialized_tensors(checkpoint: tf.train.Checkpoint) -> Any:
  """Every object's serialized tensors that `checkpoint.write` would write
  now (a dict keyed by object, of dicts of `SaveSpec`s or tensors), or None
  if this TensorFlow does not have `Checkpoint._saver.
  _gather_serialized_tensors` or the checkpoint holds an object with a
  registered saver (then it must be written in place)."""
  saver = getattr(checkpoint, "_saver", None)
  gather = getattr(saver, "_gather_serialized_tensors", None)
  if gather is None or functional_saver is None:
    return None
  tensors, _, registered, _ = gather(None)
  return None if registered else tensors


def read_spec(value: Any) -> Any:
  """A `SaveSpec` among gathered tensors read now (its tensor on the host,
  held: a later write to the variable gets a new buffer), or `value` as it
  is (a tensor, or a variable not initialized: written as TF would)."""
  if saveable_object is None or not isinstance(value,
                                               saveable_object.SaveSpec):
    return value
  tensor = value.tensor  # Calls a variable's read: its value now.
  if tensor is None:
    return value
  return saveable_object.SaveSpec(tensor, value.slice_spec, value.name,
                                  dtype=value.dtype, device=value.device)


def write_tensors(tensors: Any, prefix: tf.Tensor) -> None:
  """Writes gathered `tensors` as the tensor bundle `prefix`.index and
  `prefix`.data-* (`functional_saver.MultiDeviceSaver(tensors).save`)."""
  functional_saver.MultiDeviceSaver(tensors).save(prefix)
