"""`once`: run a function, or a method per instance, a single time.

Beyond Sonnet's decorator of the same name, this one is

- thread-safe: concurrent first calls run the body once, the others wait;
- transactional: if the body raises, attributes it set on the instance are
  removed (or restored), and the next call runs the body again from a clean
  state;
- explicit about `tf.function` retraces: variables created on a retrace get an
  error that names the module, not TensorFlow's generic one.
"""

import functools
import threading
import types
import weakref
from typing import Any, Callable, TypeVar

import tensorflow as tf

from sonnet_like.core import autograph

T = TypeVar("T")

RETRACE_VARIABLES_ERROR = (
    "{owner} tried to create its variables while a tf.function was being "
    "traced again (a new input signature or a new function). Variables can "
    "only be created on the first trace. Build the module before the retrace, "
    "e.g. call it once with an example input before wrapping it in "
    "tf.function, or give the tf.function an input_signature with a "
    "None batch dimension.")

_global_lock = threading.RLock()
_instance_locks: "weakref.WeakKeyDictionary[Any, threading.RLock]" = (
    weakref.WeakKeyDictionary())


def _lock_for(instance: Any) -> threading.RLock:
  with _global_lock:
    try:
      lock = _instance_locks.get(instance)
      if lock is None:
        lock = _instance_locks[instance] = threading.RLock()
      return lock
    except TypeError:  # Not weak-referenceable or not hashable.
      return _global_lock


def _describe(instance: Any) -> str:
  name = getattr(instance, "name", None)
  kind = type(instance).__name__
  return f"{kind} {name!r}" if isinstance(name, str) else kind


def _is_retrace_variable_error(error: BaseException) -> bool:
  text = str(error)
  return isinstance(error, ValueError) and (
      "singleton" in text or "only supports" in text and "tf.Variable" in text)


class _Rollback:
  """Records an instance's attributes so a failed first call can be undone."""

  def __init__(self, instance: Any):
    self._instance = instance
    self._attributes = dict(vars(instance)) if hasattr(instance,
                                                       "__dict__") else None

  def undo(self) -> None:
    if self._attributes is not None:
      current = vars(self._instance)
      # `_self_*` attributes are tf.Module's own tracking bookkeeping; deleting
      # the tracked attributes below already updates it.
      for key in [k for k in current
                  if k not in self._attributes and not k.startswith("_self_")]:
        delattr(self._instance, key)
      for key, value in self._attributes.items():
        if current.get(key, _MISSING) is not value:
          setattr(self._instance, key, value)


_MISSING = object()


@autograph.as_written
def _nothing(*args, **kwargs) -> None:
  del args, kwargs


class _Once:
  """Callable wrapper returned by `once`; binds per instance like a method."""

  def __init__(self, fn: Callable[..., None]):
    functools.update_wrapper(self, fn)  # Copies only what `fn` has.
    self.fn = fn
    # Sonnet 2 marks its once-wrappers with the wrapped function.
    self.__snt_once_wrapped__ = fn
    self._done = False  # Used when decorating a plain function.
    # Callable objects and partials have no __qualname__.
    label = (getattr(fn, "__qualname__", None) or
             f"{type(fn).__name__}@{id(fn)}")
    self._key = f"_once_done:{label}"
    # AutoGraph must not rewrite the locking and rollback code when a module
    # is first called inside tf.function.
    self._first_call = tf.autograph.experimental.do_not_convert(
        functools.partial(_Once._call_method, self))

  def __get__(self, instance: Any, owner: Any = None):
    if instance is None:
      return self
    if instance.__dict__.get(self._key):
      return _nothing  # The fast path of every call after the first.
    return types.MethodType(self._first_call, instance)

  def __call__(self, *args, **kwargs) -> None:
    if self._done:
      return
    with _global_lock:
      if not self._done:
        _check_no_output(self.fn(*args, **kwargs), self.fn)
        self._done = True

  def _call_method(self, instance: Any, *args, **kwargs) -> None:
    with _lock_for(instance):
      if instance.__dict__.get(self._key):
        return
      rollback = _Rollback(instance)
      try:
        _check_no_output(self.fn(instance, *args, **kwargs), self.fn)
      except BaseException as error:
        rollback.undo()
        if _is_retrace_variable_error(error):
          raise ValueError(RETRACE_VARIABLES_ERROR.format(
              owner=_describe(instance))) from error
        raise
      instance.__dict__[self._key] = True


def _check_no_output(output: Any, fn: Callable[..., Any]) -> None:
  if output is not None:
    raise ValueError(
        f"@snt.once decorated functions cannot return values: "
        f"{getattr(fn, '__qualname__', fn)!r} returned {output!r} (it runs "
        "only on the first call, so it must return None).")


def once(f: Callable[..., None]) -> Callable[..., None]:
  """Runs `f` once; as a method, once per instance.

      >>> import sonnet_like as snt
      >>> class Greeter:
      ...   @snt.once
      ...   def greet(self):
      ...     print("hello")
      >>> g = Greeter()
      >>> g.greet()
      hello
      >>> g.greet()

  If `f` raises, nothing it set on the instance is kept and the next call
  runs it again.

  Args:
    f: The function or method to wrap. It must return None.

  Returns:
    The wrapped function.
  """
  return _Once(f)


def is_once(obj: Any) -> bool:
  return isinstance(obj, _Once)
