"""`tf.Module`'s walk, name scope and ignored properties; `tf.function`'s
decorator hook.

Public replacements: `tf.Module.variables` walks only variables, and a
Sonnet-style module without variables refuses it; `tf.Module.name_scope`
is the object whose `name` `name_scope_name` reads, but `core/base.py`
overrides `name_scope`; a `tf.function` has no public way to wrap the
Python function it traces while staying one `tf.function`; nothing public
keeps an attribute out of `tf.Module`'s walk (the class attribute
`_TF_MODULE_IGNORED_PROPERTIES`, which `core/base.py` defines from
`ignored_properties`).
"""

from typing import Any, Callable

import tensorflow as tf


def flatten(module: tf.Module, predicate: Callable[[Any], bool]
            ) -> tuple[Any, ...]:
  """Every object in `module` and its submodules for which `predicate`
  holds, in tf.Module's order (`tf.Module._flatten(predicate=...)`)."""
  return tuple(module._flatten(predicate=predicate))  # pylint: disable=protected-access


def ignored_properties(*names: str, of: type = tf.Module) -> frozenset[str]:
  """The attributes `tf.Module` leaves out of its walk in class `of` (a
  `tf.Module` subclass), with `names` (`_TF_MODULE_IGNORED_PROPERTIES`,
  which a subclass sets as a class attribute)."""
  return of._TF_MODULE_IGNORED_PROPERTIES.union(names)  # pylint: disable=protected-access


def name_scope_name(module: tf.Module) -> str:
  """The name scope `tf.Module.__init__` entered, with its trailing slash
  (`module._name_scope.name`)."""
  return module._name_scope.name  # pylint: disable=protected-access


def given_name(module: tf.Module) -> str | None:
  """The name `tf.Module.__init__` stored before it failed (`_name`), or
  None."""
  return vars(module).get("_name")


def decorate(function: Any, decorator: Callable[[Callable], Callable]
             ) -> None:
  """Makes the `tf.function` `function` trace `decorator(its Python
  function)` (`Function._decorate`), in place."""
  function._decorate(decorator)  # pylint: disable=protected-access
