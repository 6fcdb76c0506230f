"""custom_variable_getter: transform variables as modules read them."""

import contextlib
from typing import Any, Callable, Iterable, Iterator

import tensorflow as tf

from sonnet_like.core import base


def _transform(getter: Callable[[tf.Variable], Any], value: Any) -> Any:
  """Applies `getter` to every variable in `value` (a leaf or a structure)."""
  if isinstance(value, tf.Variable):
    return getter(value)
  if not isinstance(value, (list, tuple, dict)):
    return value
  try:
    leaves = tf.nest.flatten(value)
  except (TypeError, ValueError):  # E.g. a dict with unsortable keys.
    return value
  if not any(isinstance(leaf, tf.Variable) for leaf in leaves):
    return value
  return tf.nest.pack_sequence_as(
      value, [getter(leaf) if isinstance(leaf, tf.Variable) else leaf
              for leaf in leaves])


def _skipped(name: str) -> bool:
  # Dunders (`__dict__`, `__class__`) and tf.Module's own bookkeeping
  # (`_self_*`) are machinery, not members: transforming them would hand
  # `vars(module)` or the checkpoint code a copy.
  return name.startswith("__") or name.startswith("_self_")


@contextlib.contextmanager
def _patched(cls: type, getter: Callable[[tf.Variable], Any],
             instance_ids: frozenset | None) -> Iterator[None]:
  had_own = "__getattribute__" in cls.__dict__
  original = cls.__getattribute__

  def getattribute(obj, name):
    value = original(obj, name)
    if _skipped(name) or (instance_ids is not None and
                          id(obj) not in instance_ids):
      return value
    return _transform(getter, value)

  cls.__getattribute__ = getattribute
  try:
    yield
  finally:
    if had_own:
      cls.__getattribute__ = original
    else:
      del cls.__getattribute__


def custom_variable_getter(
    getter: Callable[[tf.Variable], Any],
    classes: Iterable[type] | None = None,
    instances: Iterable[Any] | None = None
) -> contextlib.AbstractContextManager:
  """A context in which modules read `getter(v)` for each variable `v`.

  Inside the context, `module.w` (or a list, tuple or dict of variables held
  by a module) comes back transformed, so a module's own code sees what the
  getter returns. A typical use is to block or cast gradients:

      >>> import sonnet_like as snt, tensorflow as tf
      >>> class Scale(snt.Module):
      ...   def __init__(self):
      ...     super().__init__(name="scale")
      ...     self.s = tf.Variable(2.)
      ...   def __call__(self, x):
      ...     return x * self.s
      >>> scale = Scale()
      >>> with snt.custom_variable_getter(tf.stop_gradient):
      ...   with tf.GradientTape() as tape:
      ...     y = scale(3.)
      >>> print(tape.gradient(y, scale.s))
      None

  Args:
    getter: Called with each variable read; returns what the reader gets.
    classes: The classes whose members are transformed (subclasses
      included). Default: the classes of `instances`, or `snt.Module` if
      `instances` is None too.
    instances: If given, only these objects' members are transformed.

  Returns:
    A context manager. The classes are patched while it is entered (so
    reads from other threads are transformed too) and restored on exit.
  """
  instances = None if instances is None else tuple(instances)
  if classes is None:
    classes = ([base.Module] if instances is None else
               list({type(i): None for i in instances}))
  return _patch_all(tuple(classes), getter, instances)


@contextlib.contextmanager
def _patch_all(classes: tuple[type, ...], getter: Callable[[tf.Variable], Any],
               instances: tuple[Any, ...] | None) -> Iterator[None]:
  # `instances` stays referenced here, so the ids cannot be reused meanwhile.
  instance_ids = None if instances is None else frozenset(map(id, instances))
  with contextlib.ExitStack() as stack:
    for cls in classes:
      stack.enter_context(_patched(cls, getter, instance_ids))
    yield
