"""`grad`, `value_and_grad`, `jit`, `device_get`, `device_put`: a little JAX.

Function transformations in the style of JAX, on TensorFlow: they compose
with `transform(f).apply`, whose parameters are plain tensors.
"""

import functools
from typing import Any, Callable, Sequence

import tensorflow as tf


def _first_accelerator() -> str:
  for kind in ("TPU", "GPU"):
    devices = tf.config.list_logical_devices(kind)
    if devices:
      return devices[0].name
  return "/device:CPU:0"


def _on_device(f: Callable[..., Any], device: str | None) -> Callable[..., Any]:
  """`f` run under `tf.device(device)`, its inputs copied there first."""

  @functools.wraps(f)
  def placed(*args, **kwargs):
    with tf.device(device):
      args, kwargs = tf.nest.map_structure(tf.identity, (args, kwargs))
      return f(*args, **kwargs)

  return placed


def device_put(t: Any, device: str | None = None) -> Any:
  """Copies every leaf of the structure `t` to `device` as a tensor."""
  return tf.nest.map_structure(_on_device(lambda x: x, device), t)


def device_get(t: Any) -> Any:
  """The structure `t` with every tensor leaf as a NumPy value."""
  return tf.nest.map_structure(lambda x: x.numpy(), t)


def jit(f: Callable[..., Any], device: str | None = None) -> Callable[..., Any]:
  """`f` as a `tf.function` running on `device`.

  Args:
    f: The function to compile. Its arguments are converted to tensors on
      `device` (so Python numbers become tensors, as in JAX).
    device: Where to run; by default the first TPU, else the first GPU, else
      the CPU.

  Returns:
    A `tf.function`.
  """
  if device is None:
    device = _first_accelerator()
  return tf.function(_on_device(f, device))


def value_and_grad(f: Callable[..., Any],
                   argnums: int | Sequence[int] = 0,
                   has_aux: bool = False) -> Callable[..., Any]:
  """A function returning `f`'s value and its gradient w.r.t. some arguments.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> value, g = snt.functional.value_and_grad(lambda x: x ** 2)(
      ...     tf.constant(3.))
      >>> float(value), float(g)
      (9.0, 6.0)

  Args:
    f: A function returning a scalar (or `(scalar, aux)` with `has_aux`).
    argnums: The position, or a structure of positions, of the arguments to
      differentiate with respect to; the gradients come in the same
      structure. Those arguments must be tensors (or structures of them).
    has_aux: Whether `f` returns `(value, aux)`; aux is passed through.

  Returns:
    A function with `f`'s arguments returning `(value, grads)`, or
    `((value, aux), grads)` with `has_aux`.
  """

  @functools.wraps(f)
  def wrapper(*args, **kwargs):
    wrt = tf.nest.map_structure(lambda i: args[i], argnums)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
      tf.nest.map_structure(tape.watch, wrt)
      out = f(*args, **kwargs)
    value = out[0] if has_aux else out
    grads = tape.gradient(value, wrt)
    return (out if has_aux else value), grads

  return wrapper


def grad(f: Callable[..., Any], argnums: int | Sequence[int] = 0,
         has_aux: bool = False) -> Callable[..., Any]:
  """A function returning the gradient of `f` (see `value_and_grad`).

  Returns:
    A function with `f`'s arguments returning `grads`, or `(grads, aux)`
    with `has_aux`.
  """
  with_value = value_and_grad(f, argnums=argnums, has_aux=has_aux)

  @functools.wraps(f)
  def wrapper(*args, **kwargs):
    out, grads = with_value(*args, **kwargs)
    return (grads, out[1]) if has_aux else grads

  return wrapper
