"""`save_stacked`: SavedModels of one kind served as one, outputs stacked.

A population's members each export as a solo run does; `save_stacked`
writes one SavedModel whose every signature (and call) runs each of them
on the same inputs and stacks their outputs on a new leading axis, so
output `[i]` is what member i's own SavedModel gives. It loads with plain
TensorFlow, like every export.
"""

import os
from typing import Any, Sequence

import tensorflow as tf

from sonnet_like.core import files
from sonnet_like.export import signatures as signatures_lib

KIND_ERROR = (
    "{owner}: the SavedModels to stack must have the same signatures; "
    "{path} has {found}, the first has {expected}.")


def _stacked(outputs: list[Any]) -> Any:
  return tf.nest.map_structure(lambda *parts: tf.stack(parts), *outputs)


def _signature(loaded: list[Any], name: str) -> Any:
  """Signature `name` of every SavedModel, on the same named inputs."""
  _, specs = loaded[0].signatures[name].structured_input_signature
  named = {key: tf.TensorSpec(spec.shape, spec.dtype, name=key)
           for key, spec in specs.items()}

  def stacked(inputs):
    return _stacked([model.signatures[name](**inputs) for model in loaded])

  return tf.function(stacked, input_signature=[named]).get_concrete_function()


def _call(loaded: list[Any]) -> Any | None:
  """The loaded objects' own call, stacked; None where they have none."""
  call = getattr(loaded[0], "__call__", None)
  functions = getattr(call, "concrete_functions", None)
  if not functions:
    return None
  args, _ = functions[0].structured_input_signature
  return tf.function(lambda *inputs: _stacked([m(*inputs) for m in loaded]),
                     input_signature=list(args))


def save_stacked(paths: Sequence[str | os.PathLike],
                 directory: str | os.PathLike, *,
                 owner: str = "export.save_stacked") -> str:
  """Writes SavedModels of one kind as one; returns its path.

  Args:
    paths: SavedModels with the same signatures (one per member).
    directory: The folder to write. An earlier export there is replaced
      (atomically); any other non-empty folder is refused.
    owner: Named in error messages.

  Returns:
    `directory` as a string: every signature of it takes the inputs of
    the first SavedModel's and returns each output with a leading axis of
    `len(paths)`; the loaded object is callable the same way.
  """
  directory = files.normalized(directory)
  loaded = [tf.saved_model.load(os.fspath(path)) for path in paths]
  expected = sorted(loaded[0].signatures)
  for path, model in zip(paths, loaded):
    if sorted(model.signatures) != expected:
      raise ValueError(KIND_ERROR.format(owner=owner, path=path,
                                         found=sorted(model.signatures),
                                         expected=expected))
  signatures_lib.check_directory(owner, directory)
  root = tf.Module()
  root.members = loaded
  call = _call(loaded)
  if call is not None:
    root.__call__ = call
  concrete = {name: _signature(loaded, name) for name in expected}
  signatures_lib.write(root, directory, concrete)
  return directory
