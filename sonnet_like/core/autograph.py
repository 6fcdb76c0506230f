"""What AutoGraph rewrites: user code, not the library on the way to it.

AutoGraph rewrites every Python function a `tf.function` reaches, once per
process (~20-50 ms each). The library's own functions on the way from a
compiled step to the user's model, loss, metrics and optimizer branch
only on Python values, so they carry `as_written` and run as written; where
one of them calls code a user supplies or overrides, it calls it through
`as_user_code`, which rewrites it as AutoGraph would have from converted
code. A user's model, loss or optimizer keeps Python control flow on
tensors; the library's path to it costs no conversion.
"""

from typing import Callable, TypeVar

from sonnet_like.core.tf_private import autograph as tf_autograph

F = TypeVar("F", bound=Callable)

# The mark `tf.autograph.experimental.do_not_convert` puts on its wrapper:
# AutoGraph calls whatever carries it without rewriting it.
_MARK = tf_autograph.DO_NOT_CONVERT_MARK


def as_written(fn: F) -> F:
  """Marks `fn` to be called as written inside a `tf.function`.

  For library functions that branch only on Python values: AutoGraph would
  rewrite each once in every new process for nothing. A call from `fn` to
  code a user supplies or overrides goes through `as_user_code`. Unlike
  `do_not_convert` it adds no wrapper, so an eager call costs nothing more.
  """
  setattr(fn, _MARK, frozenset())
  return fn


def is_written(fn: Callable) -> bool:
  """Whether `fn` (a function, the function of a bound method, or an object
  of a class that has `WrittenCall`) is `as_written`."""
  return hasattr(fn, _MARK)


def user_call(fn: F) -> F:
  """`fn`, called through `as_user_code` at every call: for code a user
  supplies that the library binds once (at setup) and calls from its
  functions that run as written. `fn` itself if it is `as_written`."""
  if is_written(fn):
    return fn

  def call(*args, **kwargs):
    return as_user_code(fn)(*args, **kwargs)
  return call  # type: ignore[return-value]


class WrittenCall:
  """A class attribute under AutoGraph's mark: an instance is called as
  written where its class's `__call__` is `as_written`.

  AutoGraph looks for the mark on the object it calls, not on its
  `__call__`. A subclass whose own `__call__` is not `as_written` is
  rewritten as usual.
  """

  def __get__(self, instance, owner=None):
    if instance is None or not hasattr(getattr(owner, "__call__", None),
                                       _MARK):
      raise AttributeError(_MARK)
    return frozenset()


def as_user_code(fn: F) -> F:
  """`fn` as a call from converted code would run it.

  While a `tf.function` with AutoGraph on is traced, `fn` rewritten by
  AutoGraph (its Python `if`/`for` on tensors become graph control flow,
  and so do those of what it calls); `fn` itself elsewhere (eagerly, under
  `autograph=False`) and when it is `as_written` (the library's own
  method, not overridden).
  """
  if is_written(fn):
    return fn
  context = tf_autograph.control_status()
  if not tf_autograph.enabled(context):
    return fn
  return tf_autograph.convert(fn, context)


def keeps_status(fn: F) -> F:
  """`fn`, run as written under the AutoGraph status of where
  `keeps_status` is called, wherever it runs: in a `MirroredStrategy`'s
  replica thread (a thread starts with none) or in a `tf.function(
  autograph=False)` tracing it. Its `as_user_code` calls then rewrite
  the user's code as they would where it was made."""
  context = tf_autograph.control_status()

  @as_written
  def call(*args, **kwargs):
    with tf_autograph.status_scope(context):
      return fn(*args, **kwargs)
  return call  # type: ignore[return-value]
