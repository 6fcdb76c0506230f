"""Probes generated from the descriptor rows: the surface of every module.

For each row of `tests/descriptors.py` that builds a module, what a user
reads: public attributes before and after the first call, the output of the
first call from the same global seed (default initializers draw the same
numbers), variables (names, shapes, dtypes, trainability, order),
submodules, `repr`, the module inside `tf.function` with an unknown batch
size (rows of `DESCRIPTORS`, written for any batch size), and the same call
on float16, float64 and bfloat16 inputs (output shapes and dtypes, or the
error).
"""

from typing import Any

import numpy as np
import tensorflow as tf

from tests import descriptors
from tests.outside import framework

# Rows whose first call must see a fully known shape (the state takes the
# value's shape): their unknown-batch probe is a mistake.
_STATE_SHAPED_BY_FIRST_VALUE = frozenset({"ExponentialMovingAverage_debiased"})

# Rows whose call mixes float32 tensors into the computation: other input
# dtypes are a mistake there.
_CALL_MIXES_DTYPES = frozenset({"BatchApply_nested_and_kwargs"})

# Attributes every module has, compared by their own probes.
_SKIPPED = frozenset({"variables", "trainable_variables", "submodules",
                      "non_trainable_variables", "name_scope"})


class Open(dict):
  """Attributes: ours may have more than Sonnet's (`framework.differences`)."""
  open = True


def attributes(module: Any) -> Open:
  """Public attributes that are not methods, as plain values."""
  found = Open()
  for key in dir(module):
    if key.startswith("_") or key in _SKIPPED:
      continue
    try:
      value = getattr(module, key)
    except Exception:  # pylint: disable=broad-except
      continue  # Raising properties are compared by the error probes.
    if callable(value) and not isinstance(value, tf.Module) and (
        hasattr(value, "__self__") or isinstance(value, type)):
      continue  # Bound methods and classes.
    found[key] = framework.plain(value)
  return found


def variables(module: Any) -> Any:
  def described(getter):
    try:
      return [(v.name, tuple(v.shape), v.dtype.name, v.trainable)
              for v in getter()]
    except ValueError as e:
      return framework.Raised(e)
  return {"variables": described(lambda: module.variables),
          "trainable_variables": described(
              lambda: module.trainable_variables)}


def _example(d: descriptors.Descriptor, dtype: tf.DType | None = None):
  x = np.random.default_rng(0).normal(size=d.shape)
  return tf.constant(x, dtype=dtype or d.dtype)


def _fixed_dtype(module: Any) -> bool:
  import sonnet_like as snt  # pylint: disable=g-import-not-at-top
  return isinstance(module, (snt.RNNCore, snt.UnrolledRNN,
                             snt.nets.VectorQuantizer,
                             snt.nets.VectorQuantizerEMA))


def _is_module_row(d: descriptors.Descriptor) -> bool:
  try:
    return isinstance(d.create(), tf.Module)
  except Exception:  # pylint: disable=broad-except
    return False


def _probes_for(d: descriptors.Descriptor) -> list[framework.Probe]:
  def make(snt):
    return framework.as_library(d.create, snt)()

  def call(snt, module, x):
    return framework.as_library(d.call, snt)(module, x)

  def attrs(snt):
    module = make(snt)
    before = attributes(module)
    call(snt, module, _example(d))
    return {"before": before, "after": attributes(module)}

  def variables_and_submodules(snt):
    module = make(snt)
    call(snt, module, _example(d))
    return {**variables(module),
            "submodules": [(type(m).__name__, m.name, m.name_scope.name)
                           for m in module.submodules]}

  def names(snt):
    module = make(snt)
    return (repr(module), module.name, module.name_scope.name)

  def unknown_batch(snt):
    module = make(snt)
    spec = tf.TensorSpec((None,) + tuple(d.shape[1:]), d.dtype)
    traced = tf.function(lambda x: call(snt, module, x),
                         input_signature=[spec])
    outputs = traced.get_concrete_function().structured_outputs
    return tf.nest.map_structure(
        lambda t: (t.shape.as_list(), t.dtype.name), outputs)

  def in_dtype(dtype):
    def run(snt):
      module = make(snt)
      outputs = call(snt, module, _example(d, dtype))
      return tf.nest.map_structure(lambda t: (t.shape, t.dtype), outputs)
    return run

  def same_seed(snt):
    return call(snt, make(snt), _example(d))

  probes = [
      framework.Probe(f"{d.name}.attributes", attrs),
      framework.Probe(f"{d.name}.same_seed", same_seed),
      framework.Probe(f"{d.name}.variables", variables_and_submodules),
      framework.Probe(f"{d.name}.repr_and_names", names),
  ]
  if d in descriptors.DESCRIPTORS:  # Rows written for any batch size.
    probes.append(framework.Probe(
        f"{d.name}.unknown_batch", unknown_batch,
        mistake=d.name in _STATE_SHAPED_BY_FIRST_VALUE))
  if d.dtype == tf.float32:
    # A module whose dtype is a constructor argument (recurrent cores, vector
    # quantizers; float32 by default) refuses other inputs: a mistake.
    mistake = d.name in _CALL_MIXES_DTYPES or _fixed_dtype(d.create())
    probes += [framework.Probe(f"{d.name}.{dtype.name}", in_dtype(dtype),
                               mistake=mistake)
               for dtype in (tf.float16, tf.float64, tf.bfloat16)]
  return probes


def probes() -> list[framework.Probe]:
  found = []
  for d in descriptors.DESCRIPTORS + descriptors.SIDE_BY_SIDE_ROWS:
    if _is_module_row(d):
      found.extend(_probes_for(d))
  return found
