"""`save_module`: a module (or any callable of modules) as a SavedModel.

    >>> import tempfile, numpy as np, sonnet_like as snt, tensorflow as tf
    >>> model = snt.nets.MLP([8, 3], name="classifier")
    >>> path = snt.export.save_module(
    ...     model, tempfile.mkdtemp() + "/classifier",
    ...     tf.TensorSpec([None, 4]), classifier=True)
    >>> serve = tf.saved_model.load(path).signatures["serving_default"]
    >>> sorted(serve(inputs=tf.ones([5, 4])))
    ['classes', 'outputs', 'probabilities']

The module runs in inference mode: a module whose `__call__` takes
`is_training` gets `False` (dropout off, batch norm on its moving
statistics).
"""

import os
from typing import Any, Callable, Mapping

import tensorflow as tf

from sonnet_like.core import utils
from sonnet_like.export import signatures as signatures_lib


def call_for_inference(module: Callable[..., Any], inputs: Any) -> Any:
  """`module(inputs, is_training=False)` where the module takes it."""
  return utils.call_model(module, inputs, training=False)


def classifier_outputs(logits: Any) -> dict[str, tf.Tensor]:
  """Logits `[batch, classes]` as outputs, probabilities and classes."""
  logits = tf.convert_to_tensor(logits)
  if logits.shape.rank != 2:
    raise ValueError(f"save_module: classifier=True needs outputs shaped "
                     f"[batch, classes], got shape {logits.shape}.")
  return {"outputs": logits,
          "probabilities": tf.nn.softmax(tf.cast(logits, tf.float32)),
          "classes": tf.argmax(logits, axis=-1)}


def save_module(module: Callable[..., Any], directory: str | os.PathLike,
                inputs: Any, *, classifier: bool = False,
                output_name: str = "outputs",
                signatures: Mapping[str, signatures_lib.Signature] | None
                = None) -> str:
  """Writes `module` as a SavedModel for serving; returns the path.

  The "serving_default" signature takes the inputs by name (see
  `export.Signature`: "inputs" for a single tensor, the keys of a dict) at
  any batch size and returns the module's outputs by name ("outputs" for a
  single tensor). The loaded object is also callable like the module:
  `tf.saved_model.load(path)(x)`.

  Args:
    module: A module, or any callable of modules (their variables are
      found from the trace); called with `is_training=False` where its
      `__call__` takes it.
    directory: Folder to write; an earlier export there is replaced.
    inputs: `tf.TensorSpec`s or an example batch (arrays, tensors; nested
      dicts, lists, tuples allowed) of the module's input. The batch size is
      exported as unknown.
    classifier: The outputs are logits `[batch, classes]`: serving_default
      also returns "probabilities" (softmax, float32) and "classes" (the
      arg-max, int64).
    output_name: Name of a single output.
    signatures: Further signatures, name -> `export.Signature`.

  Returns:
    `directory` as a string.
  """
  if not callable(module):
    raise TypeError(f"save_module: module must be callable, got {module!r}.")

  def serve(x):
    outputs = call_for_inference(module, x)
    return classifier_outputs(outputs) if classifier else outputs

  named = {"serving_default": signatures_lib.Signature(
      serve, inputs, output_name=output_name)}
  for name, signature in (signatures or {}).items():
    if name in named:
      raise ValueError(f"save_module: signatures must not redefine "
                       f"{name!r}, which save_module writes.")
    named[name] = signature
  trackables = [module] if isinstance(module, tf.Module) else []
  return signatures_lib.save(directory, named, trackables=trackables,
                             owner="save_module")
