"""Mixed precision: float32 variables, float16 or bfloat16 arithmetic.

The same API as Sonnet 2.0.2's `snt.mixed_precision`. A global mode (`enable`,
`disable`, `scope`) names the compute dtype; functions and methods decorated
with `modes(valid_types)` run in it when it is one of their valid types:

- their first call (per instance, for methods) runs as written, so
  variables are created in float32;
- later calls cast floating-point tensor arguments, and every floating-point
  variable a module reads, to the compute dtype, and cast floating-point
  outputs to float32, as Sonnet 2.0.2 does (measured side by side in
  tests/test_mixed_precision.py: nested modules, scope and disable, several
  instances, modules made inside `tf.function`, bfloat16 inputs).

Nothing is cast unless a `modes` decorator asks for it: `enable` alone changes
no module. The scenarios' `precision=` setting runs a whole model in one cast
call (`call_in`), so its layers compute in the low precision throughout.
"""

import contextlib
import functools
import threading
import types
import weakref
from typing import Any, Callable, Collection, Iterator

import tensorflow as tf

from sonnet_like.core import autograph
from sonnet_like.core import custom_getter

__all__ = ["disable", "enable", "modes", "scope"]

_mode: tf.DType | None = None
_active = threading.local()  # `.stack`: compute dtypes of running cast calls.


def enable(dtype: tf.DType | None) -> None:
  """Sets the global compute dtype (None turns mixed precision off).

  Args:
    dtype: A floating-point dtype such as `tf.float16` or `tf.bfloat16`.
  """
  global _mode
  if dtype is not None:
    dtype = tf.as_dtype(dtype)
    if not dtype.is_floating:
      raise ValueError("mixed_precision.enable: dtype must be a floating-point "
                       f"dtype or None, got {dtype.name}.")
  _mode = dtype


def disable() -> None:
  """Turns mixed precision off: decorated functions run as written."""
  enable(None)


@contextlib.contextmanager
def scope(dtype: tf.DType | None) -> Iterator[None]:
  """Sets the compute dtype inside a `with` block, then restores the old one.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> with snt.mixed_precision.scope(tf.bfloat16):
      ...   pass
  """
  previous = _mode
  enable(dtype)
  try:
    yield
  finally:
    enable(previous)


def compute_dtype() -> tf.DType | None:
  """The dtype a `modes` call on this thread is computing in, else None.

  Input checks use it to accept inputs that a `modes` wrapper has cast.
  """
  stack = getattr(_active, "stack", None)
  return stack[-1] if stack else None


def _cast(structure: Any, dtype: tf.DType) -> Any:
  def cast(x):
    if isinstance(x, (tf.Tensor, tf.Variable)) and x.dtype.is_floating:
      return tf.cast(x, dtype)
    return x
  return tf.nest.map_structure(cast, structure)


@contextlib.contextmanager
def _computing(dtype: tf.DType) -> Iterator[None]:
  stack = _active.__dict__.setdefault("stack", [])
  stack.append(dtype)
  try:
    yield
  finally:
    stack.pop()


@autograph.as_written
def call_in(dtype: tf.DType, fn: Callable[..., Any], args: tuple = (),
            kwargs: dict | None = None, trainable_only: bool = False) -> Any:
  """`fn(*args, **kwargs)` computing in `dtype`; floating outputs in float32.

  Floating-point tensor arguments and the floating-point variables that
  `snt.Module`s read while `fn` runs are cast to `dtype` (with
  `trainable_only`, only trainable ones: state such as moving statistics is
  read, and can be assigned, as it is). This is what a `modes` call does
  after its first call.
  """
  args, kwargs = _cast((args, kwargs or {}), dtype)

  def getter(value):
    if trainable_only and not getattr(value, "trainable", True):
      return value
    return _cast(value, dtype)

  with _computing(dtype), custom_getter.custom_variable_getter(getter):
    outputs = autograph.as_user_code(fn)(*args, **kwargs)
  return _cast(outputs, tf.float32)


class _Decorated:
  """A function or method that follows the global mixed-precision mode."""

  def __init__(self, fn: Callable[..., Any], valid_types: Collection[Any]):
    functools.update_wrapper(self, getattr(fn, "__func__", fn))
    self._valid = tuple(tf.as_dtype(t) for t in valid_types)
    if isinstance(fn, types.MethodType):  # Bound: `obj.f = modes(..)(obj.f)`.
      self._fn, self._owner = fn.__func__, fn.__self__
    elif not isinstance(fn, types.FunctionType) and hasattr(fn, "__call__"):
      self._fn, self._owner = type(fn).__call__, fn  # A callable object.
    else:
      self._fn, self._owner = fn, None
    self._seen = weakref.WeakKeyDictionary()
    self._seen_ids: set[int] = set()  # Owners that take no weak reference.

  def __get__(self, instance: Any, owner: Any = None) -> Any:
    if instance is None or self._owner is not None:
      return self
    return types.MethodType(self._call_method, instance)

  def __call__(self, *args, **kwargs) -> Any:
    if self._owner is None:
      return self._run(self._fn, self, args, kwargs)
    return self._call_method(self._owner, *args, **kwargs)

  def _call_method(self, instance: Any, *args, **kwargs) -> Any:
    return self._run(functools.partial(self._fn, instance), instance, args,
                     kwargs)

  def _run(self, fn: Callable[..., Any], key: Any, args: tuple,
           kwargs: dict) -> Any:
    dtype = _mode
    if dtype is None or dtype not in self._valid:
      return fn(*args, **kwargs)
    if not self._first_call_done(key):
      # Runs as written (creates float32 variables). Inputs the caller cast
      # to the compute dtype pass the modules' dtype checks, as in Sonnet,
      # where e.g. a bfloat16 input meets float32 weights in tf.matmul.
      with _computing(dtype):
        outputs = fn(*args, **kwargs)
      self._mark_done(key)
      return outputs
    return call_in(dtype, fn, args, kwargs)

  def _first_call_done(self, key: Any) -> bool:
    try:
      return key in self._seen
    except TypeError:
      return id(key) in self._seen_ids

  def _mark_done(self, key: Any) -> None:
    try:
      self._seen[key] = True
    except TypeError:
      self._seen_ids.add(id(key))


def modes(valid_types: Collection[tf.DType]
          ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
  """A decorator that runs a function in the compute dtype when it is valid.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> class HalfLinear(snt.Linear):
      ...   __call__ = snt.mixed_precision.modes([tf.float32, tf.float16])(
      ...       snt.Linear.__call__)
      >>> layer = HalfLinear(2, name="half")
      >>> x = tf.ones([1, 3])
      >>> with snt.mixed_precision.scope(tf.float16):
      ...   y = layer(x)  # First call: float32, creates float32 variables.
      ...   y = layer(x)  # Then: matmul and add in float16.
      >>> layer.w.dtype.name, y.dtype.name  # Outputs: float32, as in Sonnet.
      ('float32', 'float32')

  Works on functions, on methods (in a class body, or assigned to a class or
  an instance), and on callable objects.

  Args:
    valid_types: The dtypes the function may compute in. When the global mode
      is None or not among them, the function runs unchanged.

  Returns:
    The decorator.
  """
  valid_types = tuple(valid_types)
  return lambda fn: _Decorated(fn, valid_types)
