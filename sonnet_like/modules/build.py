"""build: create a module's variables and get its output spec, no compute."""

from typing import Any, Callable

import tensorflow as tf


def _as_spec(arg: Any) -> Any:
  """A list or tuple of ints and Nones is a shape: float32 TensorSpec."""
  if isinstance(arg, (list, tuple)) and all(
      d is None or (isinstance(d, int) and not isinstance(d, bool))
      for d in arg):
    return tf.TensorSpec(arg)
  return arg


def build(f: Callable[..., Any], *args, **kwargs) -> Any:
  """Traces `f` once, creating its variables, and returns its output spec.

  Nothing is computed: `f` is traced into a graph (as `tf.function` does) with
  the arguments given as specs, so variables are created and initialised but
  no other op runs.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> layer = snt.Linear(10, name="head")
      >>> snt.build(layer, [None, 784])
      TensorSpec(shape=(None, 10), dtype=tf.float32, name=None)
      >>> [v.name for v in layer.variables]
      ['head/b:0', 'head/w:0']

  Args:
    f: A module or any function that creates variables.
    *args: Positional arguments for `f`. A list or tuple of ints and Nones is
      taken as a shape and becomes a float32 `tf.TensorSpec`; tensors and
      `tf.TensorSpec`s are used as they are.
    **kwargs: Keyword arguments for `f`, passed as they are.

  Returns:
    The structure `f` returns, with every tensor replaced by a `tf.TensorSpec`
    of its shape and dtype (and any other value by None).
  """
  traced = tf.function(f).get_concrete_function(*map(_as_spec, args),
                                                **kwargs)
  outputs = traced.structured_outputs
  return tf.nest.map_structure(
      lambda t: tf.TensorSpec(t.shape, t.dtype) if isinstance(t, tf.Tensor)
      else None, outputs)
