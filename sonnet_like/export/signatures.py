"""`save`: a SavedModel with named serving signatures, from Python callables.

`tf.saved_model.save(module, path)` alone gives an object with no signatures
that cannot be called. `save` writes what serving needs: each `Signature`
is a callable plus a description of its inputs (specs or example values,
nested structures allowed) and becomes a signature with named inputs and
outputs. The batch dimension of batched inputs is left unknown. The object
itself is callable too (with the inputs' structure, returning the
function's own structure), and it loads with plain TensorFlow:

    >>> import tempfile, tensorflow as tf
    >>> from sonnet_like import export
    >>> w = tf.Variable([[2.0], [3.0]])
    >>> path = export.save(tempfile.mkdtemp() + "/double", {
    ...     "serving_default": export.Signature(
    ...         lambda x: tf.matmul(x, w), tf.TensorSpec([None, 2]),
    ...         input_name="x", output_name="y")})
    >>> loaded = tf.saved_model.load(path)
    >>> loaded.signatures["serving_default"](x=tf.ones([3, 2]))["y"].numpy()
    array([[5.],
           [5.],
           [5.]], dtype=float32)
    >>> loaded(tf.ones([1, 2])).numpy()
    array([[5.]], dtype=float32)

Input and output names come from the structure: a single tensor is
`input_name` / `output_name`, dict entries are their keys (nested ones
joined by "_"), list and tuple entries `<name>_<index>`.
"""

import dataclasses
import os
import re
import tempfile
import uuid
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import tensorflow as tf

from sonnet_like.core import files

INPUT_ERROR = (
    "{owner}: inputs must be tf.TensorSpecs, example arrays or tensors, or a "
    "nested structure (dict, list, tuple) of them, got {value} at {path}.")

NO_BATCH_ERROR = (
    "{owner}: input {name!r} of signature {signature!r} needs a batch "
    "dimension (rank 1 or more), got shape {shape}. Describe a batch, e.g. "
    "tf.TensorSpec([None, *example_shape]) or an example batch.")

OUTPUT_ERROR = (
    "{owner}: signature {signature!r} returned {value} at {path}; a signature "
    "can only return tensors (or dicts, lists, tuples of them). Return "
    "tensors, e.g. a distribution's mode() or its logits, not the "
    "distribution.")

DUPLICATE_NAME_ERROR = (
    "{owner}: signature {signature!r} has two {what} named {name!r}; give "
    "dict entries names that stay distinct once nested keys are joined by "
    "'_' and other characters are replaced by '_'.")

UNTRACKED_ERROR = (
    "{owner}: the signatures use a resource that is not a variable (a lookup "
    "table, ...) and that nothing saved holds; pass it, or a module holding "
    "it, as trackables=[...] (variables are found by themselves). "
    "TensorFlow said: {error}")

NOT_AN_EXPORT_ERROR = (
    "{owner}: {directory} exists and is not a SavedModel folder (it has no "
    "saved_model.pb and is not empty). Export into a new or empty folder; an "
    "earlier export there is replaced as a whole.")


@dataclasses.dataclass(frozen=True)
class Signature:
  """One serving signature: `function(inputs)` for inputs like `inputs`.

  Attributes:
    function: Called with one argument, a structure of tensors like
      `inputs`; returns a tensor or a dict, list or tuple of tensors.
    inputs: `tf.TensorSpec`s, example arrays or tensors, or a nested dict,
      list or tuple of them. Float64 NumPy examples are taken as float32.
    batched: The inputs have a leading batch dimension, which is exported
      as unknown (None) whatever size the spec or example has.
    input_name: Name of a single input (and prefix of list/tuple entries).
    output_name: Name of a single output (and prefix of list/tuple entries).
  """

  function: Callable[[Any], Any]
  inputs: Any
  batched: bool = True
  input_name: str = "inputs"
  output_name: str = "outputs"


def _clean(name: str) -> str:
  name = re.sub(r"[^A-Za-z0-9_]", "_", name)
  return name if re.match(r"[A-Za-z]", name) else f"x_{name}"


def named_leaves(structure: Any, base: str) -> list[tuple[str, Any]]:
  """(name, leaf) pairs in `tf.nest.flatten` order."""
  pairs: list[tuple[str, Any]] = []

  def visit(value: Any, path: tuple) -> None:
    if isinstance(value, Mapping):
      for key in sorted(value):  # tf.nest's order.
        visit(value[key], path + (str(key),))
    elif isinstance(value, tuple) and hasattr(value, "_fields"):
      for field in value._fields:
        visit(getattr(value, field), path + (field,))
    elif isinstance(value, (list, tuple)):
      for i, item in enumerate(value):
        visit(item, path + (str(i),) if path else (base, str(i)))
    else:
      pairs.append((_clean("_".join(path) if path else base), value))

  visit(structure, ())
  return pairs


def _spec(owner: str, signature: str, name: str, value: Any,
          batched: bool) -> tf.TensorSpec:
  if isinstance(value, tf.TensorSpec):
    shape, dtype = value.shape, value.dtype
  elif isinstance(value, (np.ndarray, np.generic, tf.Tensor, tf.Variable)):
    dtype = tf.as_dtype(value.dtype)
    if dtype == tf.float64 and isinstance(value, (np.ndarray, np.generic)):
      dtype = tf.float32
    shape = tf.TensorShape(value.shape)
  else:
    raise TypeError(INPUT_ERROR.format(owner=owner, value=repr(value)[:100],
                                       path=repr(name)))
  if batched:
    if shape.rank is None or shape.rank < 1:
      raise ValueError(NO_BATCH_ERROR.format(
          owner=owner, name=name, signature=signature, shape=shape))
    shape = tf.TensorShape([None]).concatenate(shape[1:])
  return tf.TensorSpec(shape, dtype, name=name)


def input_specs(owner: str, signature: str, inputs: Any, batched: bool = True,
                base: str = "inputs") -> tuple[Any, dict[str, tf.TensorSpec]]:
  """`inputs` as nested named `TensorSpec`s, and the same by name."""
  if isinstance(inputs, tf.data.Dataset):
    inputs = inputs.element_spec
  pairs = named_leaves(inputs, base)
  flat: dict[str, tf.TensorSpec] = {}
  for name, value in pairs:
    if name in flat:
      raise ValueError(DUPLICATE_NAME_ERROR.format(
          owner=owner, signature=signature, what="inputs", name=name))
    flat[name] = _spec(owner, signature, name, value, batched)
  nested = tf.nest.pack_sequence_as(inputs, list(flat.values()))
  return nested, flat


def named_outputs(owner: str, signature: str, outputs: Any,
                  base: str = "outputs") -> dict[str, tf.Tensor]:
  """A function's outputs as a flat dict of tensors with names."""
  named: dict[str, tf.Tensor] = {}
  for name, value in named_leaves(outputs, base):
    if name in named:
      raise ValueError(DUPLICATE_NAME_ERROR.format(
          owner=owner, signature=signature, what="outputs", name=name))
    if not isinstance(value, (tf.Tensor, tf.Variable, np.ndarray)):
      raise TypeError(OUTPUT_ERROR.format(owner=owner, signature=signature,
                                          value=repr(value)[:100],
                                          path=repr(name)))
    named[name] = tf.identity(value, name=name)
  return named


def check_directory(owner: str, directory: str) -> None:
  files.check_scheme(owner, "directory", directory)
  if not files.exists(directory):
    return
  if not files.isdir(directory) or (
      files.listdir(directory) and
      not files.exists(files.join(directory, "saved_model.pb"))):
    raise ValueError(NOT_AN_EXPORT_ERROR.format(owner=owner,
                                                directory=directory))


def write(root: tf.Module, directory: str, signatures: dict[str, Any]) -> None:
  """Saves into a fresh folder beside `directory`, then puts it in place.

  A failed save leaves the earlier export as it was. Locally the new folder
  is swapped in by renames, so a reader never sees half an export. Object
  stores cannot rename a folder: the earlier export is deleted and the new
  files are moved in, `saved_model.pb` last, so a reader that waits for it
  sees a whole export.
  """
  parent = files.parent(directory)
  files.makedirs(parent)
  if files.is_local(directory):
    fresh = tempfile.mkdtemp(prefix=".export-", dir=parent)
  else:
    fresh = files.join(parent, f".export-{uuid.uuid4().hex}")
  old = None
  try:
    tf.saved_model.save(root, fresh, signatures=signatures)
    if not files.is_local(directory):
      files.rmtree(directory)
      _move_saved_model(fresh, directory)
      return
    if files.exists(directory):
      old = fresh + "-old"
      os.rename(directory, old)
    os.rename(fresh, directory)
  finally:
    for path in (fresh, old):
      if path:
        files.rmtree(path)


def _move_saved_model(source: str, target: str) -> None:
  """Moves a SavedModel's files (not folders) into `target`, the graph last."""
  graph = "saved_model.pb"
  files.makedirs(target)
  for name in files.listdir(source):
    if name != graph:
      files.move(files.join(source, name), files.join(target, name))
  files.move(files.join(source, graph), files.join(target, graph))


def save(directory: str | os.PathLike, signatures: Mapping[str, Signature],
         *, call: str | None = "serving_default",
         trackables: Sequence[Any] = (),
         owner: str = "export.save") -> str:
  """Writes a SavedModel with these signatures; returns its path.

  Args:
    directory: The folder to write. An earlier export there is replaced
      (atomically); any other non-empty folder is refused.
    signatures: Name -> `Signature`; "serving_default" is what serving
      systems call by default.
    call: The signature whose function the loaded object's `__call__` runs
      (with the inputs' structure, returning the function's structure), or
      None for an object that is not callable.
    trackables: Modules or other trackables to save with the signatures;
      only needed for resources other than variables (lookup tables),
      because every variable the functions read is saved anyway.
    owner: Named in error messages.

  Returns:
    `directory` as a string.
  """
  directory = files.normalized(directory)
  if not signatures:
    raise ValueError(f"{owner}: signatures must name at least one "
                     "Signature, got none.")
  for name, signature in signatures.items():
    if not isinstance(signature, Signature):
      raise TypeError(f"{owner}: signatures must map names to "
                      f"export.Signature, got {signature!r} for {name!r}.")
  if call is not None and call not in signatures:
    raise ValueError(f"{owner}: call must be one of {sorted(signatures)} or "
                     f"None, got {call!r}.")
  check_directory(owner, directory)
  root = tf.Module()
  concrete = {}
  for name, signature in signatures.items():
    concrete[name], structured = _trace(owner, name, signature)
    if name == call:
      root.__call__ = structured
  seen, variables = set(), []
  for function in list(concrete.values()) + (
      [root.__call__.get_concrete_function()] if call is not None else []):
    for variable in function.variables:
      if variable.ref() not in seen:
        seen.add(variable.ref())
        variables.append(variable)
  root.saved_variables = variables
  root.trackables = list(trackables)
  try:
    write(root, directory, concrete)
  except (AssertionError, ValueError) as error:
    if "untracked" not in str(error).lower():
      raise
    raise ValueError(UNTRACKED_ERROR.format(owner=owner,
                                            error=error)) from error
  return directory


def _trace(owner: str, name: str, signature: Signature):
  """The signature's flat concrete function and its structured tf.function."""
  nested, flat = input_specs(owner, name, signature.inputs, signature.batched,
                             signature.input_name)
  names = list(flat)

  def flat_function(inputs):
    structured = tf.nest.pack_sequence_as(nested, [inputs[n] for n in names])
    return named_outputs(owner, name, signature.function(structured),
                         signature.output_name)

  def structured_function(inputs):
    return signature.function(inputs)

  flat_traced = tf.function(flat_function, input_signature=[flat])
  structured = tf.function(structured_function, input_signature=[nested])
  return flat_traced.get_concrete_function(), structured
