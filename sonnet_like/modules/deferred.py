"""Deferred: construct a module the first time it is used."""

from typing import Any, Callable, Sequence

from sonnet_like.core import base

_OWN = frozenset(("_target", "_constructor", "_call_methods"))


class Deferred(base.Module):
  """Builds its target module with `constructor()` on first use.

  This lets a module be declared before the values it depends on exist, e.g.
  a decoder whose size is the encoder's input size:

      >>> import sonnet_like as snt, tensorflow as tf
      >>> encoder = snt.Linear(16, name="encoder")
      >>> decoder = snt.Deferred(lambda: snt.Linear(encoder.input_size,
      ...                                           name="decoder"))
      >>> x = tf.ones([2, 5])
      >>> decoder(encoder(x)).shape
      TensorShape([2, 5])

  Once built, attributes are read from and written to the target:

      >>> decoder.output_size
      5
  """

  def __init__(self, constructor: Callable[[], Any],
               call_methods: Sequence[str] = ("__call__",),
               name: str | None = None):
    """Constructs a Deferred module.

    Args:
      constructor: Takes no arguments and returns the target module. It runs
        the first time one of `call_methods` is called (or `target` is read),
        in the name scope active at that moment.
      call_methods: Names of the target's methods that trigger construction;
        each is called on the target with the same arguments.
      name: Name of the module.
    """
    super().__init__(name=name)
    if not callable(constructor):
      raise TypeError(f"Deferred: constructor must be callable, got "
                      f"{constructor!r}.")
    if isinstance(call_methods, str) or not all(
        isinstance(m, str) for m in call_methods):
      raise TypeError("Deferred: call_methods must be a sequence of method "
                      f"names, got {call_methods!r}.")
    self._constructor = constructor
    self._call_methods = tuple(call_methods)
    self._target = None

  @property
  @base.no_name_scope
  def target(self) -> Any:
    """The target module, constructed on the first access."""
    if self._target is None:
      self._target = self._constructor()
      object.__setattr__(self, "_constructor", None)
    return self._target

  @base.no_name_scope
  def __call__(self, *args, **kwargs) -> Any:
    target = self.target
    if not callable(target):
      raise TypeError(f"Deferred {self.name!r}: its constructor returned "
                      f"{target!r}, which is not callable.")
    return target(*args, **kwargs)

  @base.no_name_scope
  def _built(self) -> bool:
    return self.__dict__.get("_target") is not None

  def __getattr__(self, name: str) -> Any:
    # Only reached when normal lookup fails.
    if name not in _OWN:
      if self._built():
        return getattr(self.__dict__["_target"], name)
      if name in self.__dict__.get("_call_methods", ()):
        return lambda *args, **kwargs: getattr(self.target, name)(*args,
                                                                  **kwargs)
    raise AttributeError(
        f"'{type(self).__name__}' object has no attribute '{name}'" +
        ("" if self._built() or name in _OWN else
         " (its target module is not constructed yet: call the Deferred "
         "module first)"))

  def __setattr__(self, name: str, value: Any) -> None:
    if name not in _OWN and self._built():
      setattr(self.__dict__["_target"], name, value)
    else:
      super().__setattr__(name, value)

  def __delattr__(self, name: str) -> None:
    if name not in _OWN and self._built():
      delattr(self.__dict__["_target"], name)
    else:
      super().__delattr__(name)

  def __repr__(self) -> str:
    # As in Sonnet 2, showing a Deferred module constructs its target.
    return f"Deferred({self.target!r})"

  def __str__(self) -> str:
    return f"Deferred({self.target})"
