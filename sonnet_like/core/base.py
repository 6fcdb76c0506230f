"""`Module`: the base class of every sonnet_like module."""

import abc
import functools
import inspect
import pprint
import re
import threading
from typing import Any, Callable, TypeVar

import tensorflow as tf

from sonnet_like.core import autograph
from sonnet_like.core import once as once_lib
from sonnet_like.core.tf_private import modules as tf_modules

T = TypeVar("T")

_NO_NAME_SCOPE = "_sonnet_like_no_name_scope"
_ALLOW_EMPTY = "_sonnet_like_allow_empty_variables"

NO_VARIABLES_ERROR = """\
{module!r} does not currently contain any {property}.

Most modules create their variables the first time they are called, so asking
for them before that usually means the module has not been built. Call it with
an example input first:

    module = {module!r}
    module(example_input)
    params = module.{property}

If the module is stateless, allow an empty result:

    snt.allow_empty_variables(module)        # one instance
    @snt.allow_empty_variables               # or a whole class
    class MyStatelessModule(snt.Module): ...
"""

# `{phrase}` is Sonnet 2's wording for the same mistake (code matches it).
SUPER_INIT_ERROR = (
    "{phrase}: {cls}.__init__ must call super().__init__(name=name) before "
    "calling any other method of the module (methods run inside the module's "
    "name scope, which the base constructor creates). Mark methods that must "
    "run earlier with @snt.no_name_scope.")
_NEVER_CALLED = ("Constructing a snt.Module without calling the super "
                 "constructor is not supported")
_CALLED_LATE = ("The super constructor must be called before any other "
                "methods in your constructor")
UNDERSCORE_SCOPE_ERROR = (
    "{cls}: module {name!r} cannot be {doing} in a tf.function: its name "
    "scope {scope!r} starts with '_', which TensorFlow refuses in graphs. "
    "Give the module a name that starts with a letter, e.g. "
    "{cls}(..., name={suggestion!r}), or construct it inside another module.")


def _check_graph_scope(module: Any, scope: str, doing: str) -> None:
  """Names the module whose scope, which starts with '_', cannot open here:
  TensorFlow refuses graph names that start with '_' (eagerly it takes
  them, as it does for Sonnet 2)."""
  if tf.executing_eagerly():
    return
  name = scope.rstrip("/")
  raise ValueError(UNDERSCORE_SCOPE_ERROR.format(
      cls=type(module).__name__, name=name, doing=doing, scope=scope,
      suggestion=name.lstrip("_") or "module"))


def no_name_scope(method: T) -> T:
  """Marks a method of a `Module` subclass to run outside its name scope."""
  setattr(method, _NO_NAME_SCOPE, True)
  return method


def allow_empty_variables(module_or_cls: T) -> T:
  """Lets `variables`/`trainable_variables` return () instead of raising."""
  setattr(module_or_cls, _ALLOW_EMPTY, True)
  return module_or_cls


def with_name_scope(method: Callable[..., T]) -> Callable[..., T]:
  """Wraps `method` so that it runs inside its module's name scope."""

  @functools.wraps(method)
  def scoped(self, *args, **kwargs):
    scope = self.__dict__.get("_scope_name")
    if scope is None:
      raise AttributeError(SUPER_INIT_ERROR.format(
          phrase=_CALLED_LATE, cls=type(self).__name__))
    if scope[0] == "_":
      _check_graph_scope(self, scope, "called")
    with tf.name_scope(scope):
      return method(self, *args, **kwargs)

  scoped.__dict__.pop("__isabstractmethod__", None)  # See ModuleMetaclass.
  return scoped


_TF_FUNCTION_TYPE = type(tf.function(lambda: None, autograph=False))


def _scope_inside_trace(method: Callable[..., T]) -> Callable[..., T]:
  """`method` in its module's name scope, for a `tf.function`'s body.

  As in Sonnet 2 the wrapper does not carry `method`'s signature, so the
  traced function's arguments are `args_0`, `args_1`, ... (the names of a
  concrete function's placeholders and of a SavedModel signature's inputs).
  """

  def scoped(self, *args, **kwargs):
    scope = self.__dict__["_scope_name"]
    if scope[0] == "_":
      _check_graph_scope(self, scope, "called")
    with tf.name_scope(scope):
      return method(self, *args, **kwargs)

  return scoped


def _scoped_attribute(key: str, value: Any) -> Any:
  """Returns `value` wrapped to run in the name scope, or None to leave it."""
  if key.startswith("__") and key != "__call__":
    return None
  if isinstance(value, property):
    accessors = [f and (f if getattr(f, _NO_NAME_SCOPE, False)
                        else with_name_scope(f))
                 for f in (value.fget, value.fset, value.fdel)]
    return property(*accessors, doc=value.__doc__)
  if getattr(value, _NO_NAME_SCOPE, False):
    return None
  if once_lib.is_once(value):
    value.fn = with_name_scope(value.fn)
    return value
  if isinstance(value, _TF_FUNCTION_TYPE):
    # The scope is entered inside the traced function (its ops are named
    # "module/..."), as Sonnet 2 does; tf.function keeps one object.
    tf_modules.decorate(value, _scope_inside_trace)
    return value
  if inspect.isfunction(value):
    return with_name_scope(value)
  return None


# What tf.Module accepts: ASCII letters, digits and underscores.
_IDENTIFIER = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


class InvalidNameError(ValueError, TypeError):
  """A module name that is not a valid Python identifier.

  Sonnet 2 raises a `ValueError`, or a `TypeError` when the name is not a
  string at all; this error is both.
  """


_ctor_scopes = threading.local()


class ModuleMetaclass(abc.ABCMeta):
  """Puts every method in the name scope; runs `__init__` inside it too."""

  def __new__(mcs, name, bases, namespace, **kwargs):
    cls = super().__new__(mcs, name, bases, namespace, **kwargs)
    # As in Sonnet 2, methods are wrapped once the class exists: an abstract
    # method makes this class abstract, but its wrapper is not abstract, so a
    # subclass that does not override it can be instantiated.
    for key, value in namespace.items():
      scoped = _scoped_attribute(key, value)
      if scoped is not None:
        setattr(cls, key, scoped)
    return cls

  def __call__(cls, *args, **kwargs):
    # `Module.__init__` enters the module's name scope so that submodules
    # built in the rest of the subclass constructor nest inside it; the scope
    # is left here, once the whole constructor has returned or raised.
    stack = _ctor_scope_stack()
    depth = len(stack)
    try:
      module = super().__call__(*args, **kwargs)
    finally:
      while len(stack) > depth:
        stack.pop().__exit__(None, None, None)
    if "_scope_name" not in module.__dict__:
      raise ValueError(SUPER_INIT_ERROR.format(phrase=_NEVER_CALLED,
                                               cls=cls.__name__))
    object.__setattr__(module, "_ctor_arguments", _arguments(cls, args, kwargs))
    return module


def _ctor_scope_stack() -> list:
  if not hasattr(_ctor_scopes, "stack"):
    _ctor_scopes.stack = []
  return _ctor_scopes.stack


def _arguments(cls, args, kwargs) -> tuple:
  """The constructor arguments that differ from their defaults, for repr."""
  try:
    signature = inspect.signature(cls.__init__)
    bound = signature.bind(None, *args, **kwargs)
  except (TypeError, ValueError):
    return tuple((f"arg{i}", a) for i, a in enumerate(args)) + tuple(
        kwargs.items())
  shown = []
  for key, value in list(bound.arguments.items())[1:]:
    parameter = signature.parameters[key]
    if parameter.kind == parameter.VAR_KEYWORD:
      shown.extend(value.items())
    elif parameter.kind == parameter.VAR_POSITIONAL:
      shown.extend(("", v) for v in value)  # Shown bare, as passed.
    elif not _same(value, parameter.default):
      shown.append((key, value))
  return tuple(shown)


_REPR_WIDTH = 80


def _call_repr(cls_name: str, arguments: tuple) -> str:
  """`Cls(a=1, b=2)`; one argument per line when that is too wide.

  Positional extras (`*args`) are shown bare, keyword ones as `name=value`,
  as Sonnet 2's repr does, with its 80-character limit and layout.
  """
  labels = [f"{k}=" if k else "" for k, _ in arguments]
  shown = ", ".join(l + repr(v) for l, (_, v) in zip(labels, arguments))
  line = f"{cls_name}({shown})"
  if len(line) <= _REPR_WIDTH:
    return line
  parts = []
  for label, (_, value) in zip(labels, arguments):
    lines = pprint.pformat(value).splitlines() or [""]
    # Continuation lines line up under the value's first character.
    lines[1:] = [" " * len(label) + l for l in lines[1:]]
    parts.append(label + "\n".join(lines))
  body = ",\n".join(parts)
  body = "\n".join("    " + l for l in body.splitlines())
  return f"{cls_name}(\n{body},\n)"


def _same(a: Any, b: Any) -> bool:
  try:
    return bool(a is b or a == b)
  except Exception:  # Arrays and tensors compare elementwise.  # pylint: disable=broad-except
    return False


class Module(tf.Module, metaclass=ModuleMetaclass):
  """Base class for modules: a `tf.Module` with automatic name scopes.

  Every method (and `__call__`) runs inside the module's name scope, so the
  variables it creates are named after it (`mlp/linear_0/w:0`). As in
  Sonnet 2, the scope is `tf.name_scope(name)` entered where the module is
  constructed: eagerly two top-level `Linear()`s are both `linear/`; inside
  a `tf.function` (a graph) the second one's scope is `linear_1/`, while its
  `name` stays `linear`.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> class Scale(snt.Module):
      ...   @snt.once
      ...   def _initialize(self, x):
      ...     self.s = tf.Variable(tf.ones([x.shape[-1]]), name="s")
      ...   def __call__(self, x):
      ...     self._initialize(x)
      ...     return x * self.s
      >>> m = Scale(name="scale")
      >>> _ = m(tf.ones([1, 3]))
      >>> m.s.name
      'scale/s:0'
  """

  # tf.Module's and AutoGraph's hooks, named by TensorFlow (the wall,
  # `core/tf_private/`, tests both names).
  _TF_MODULE_IGNORED_PROPERTIES = tf_modules.ignored_properties(
      "_ctor_arguments", "_scope_name")
  # A library module whose `__call__` is `as_written` is not rewritten.
  autograph_info__ = autograph.WrittenCall()

  def __init__(self, name: str | None = None):
    # Without a name, tf.Module names the module after its class in snake
    # case (`MLPBlock` -> `mlp_block`, `_Head` -> `__head`), as in Sonnet 2.
    if name is not None and (not isinstance(name, str) or
                             not _IDENTIFIER.fullmatch(name)):
      raise InvalidNameError(
          f"{type(self).__name__}: {name!r} is not a valid module name. "
          "Module names must be valid Python identifiers.")
    # tf.Module enters `tf.name_scope(name)` here: eagerly that is
    # "<enclosing scope>/<name>/", in a graph the graph makes it unique.
    try:
      super().__init__(name=name)
    except ValueError:
      name = tf_modules.given_name(self)  # tf.Module sets it first.
      if name and name[0] == "_":
        _check_graph_scope(self, name + "/", "constructed")
      raise
    scope_name = tf_modules.name_scope_name(self)
    object.__setattr__(self, "_scope_name", scope_name)
    if getattr(type(self).__init__, _NO_NAME_SCOPE, False):
      return
    ctor_scope = tf.name_scope(scope_name)
    ctor_scope.__enter__()
    _ctor_scope_stack().append(ctor_scope)

  @property
  @no_name_scope
  def module_name(self) -> str:
    """The full scope name without the trailing slash (`mlp/linear_0`)."""
    return self._scope_name[:-1]

  @property
  @no_name_scope
  def variables(self) -> tuple[tf.Variable, ...]:
    """All variables of this module and its submodules.

    Raises:
      ValueError: if there are none and the module does not allow that (see
        `allow_empty_variables`): usually the module is not built yet.
    """
    return self._nonempty(super().variables, "variables")

  @property
  @no_name_scope
  def trainable_variables(self) -> tuple[tf.Variable, ...]:
    """All trainable variables of this module and its submodules.

    Raises:
      ValueError: as for `variables`.
    """
    return self._nonempty(super().trainable_variables, "trainable_variables")

  @no_name_scope
  def _nonempty(self, found: tuple, what: str) -> tuple:
    if not found and not getattr(self, _ALLOW_EMPTY, False):
      raise ValueError(NO_VARIABLES_ERROR.format(module=self, property=what))
    return found

  def __repr__(self) -> str:
    return _call_repr(type(self).__name__,
                      self.__dict__.get("_ctor_arguments", ()))
