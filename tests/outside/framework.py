"""Probes: the same Sonnet 2 code, run with either library, compared.

A `Probe` is a function of the library (`sonnet_like` or dm-sonnet 2.0.2)
that does what a Sonnet 2 user, or Sonnet's own tests and docstrings, do,
and returns what the user would look at: outputs, names, attributes, reprs.
`observe` runs it and turns the result into plain values (arrays, tuples,
strings) or a `Raised`; `differences` compares two observations.
"""

import dataclasses
import os
import re
import types
from typing import Any, Callable

import numpy as np
import tensorflow as tf


@dataclasses.dataclass(frozen=True)
class Probe:
  """One use of the library.

  Attributes:
    name: Test id (unique across all probes).
    run: `run(snt)` -> what the user looks at.
    mistake: Whether the code is a misuse (counted apart from valid use).
    phrase: Where Sonnet raises: its key phrase, required in our message.
  """
  name: str
  run: Callable[[Any], Any]
  mistake: bool = False
  phrase: str | None = None


_REGISTERED: dict[str, list[Probe]] = {}


def probe(name: str, mistake: bool = False, phrase: str | None = None):
  """Decorator: `@probe("id")` makes `def _(snt)` a `Probe` of its module.

  `registered(module_name)` lists the probes a module made this way.
  """
  def make(fn):
    made = Probe(name, fn, mistake, phrase)
    _REGISTERED.setdefault(fn.__module__, []).append(made)
    return made
  return make


def registered(module_name: str) -> list[Probe]:
  return list(_REGISTERED.get(module_name, ()))


@dataclasses.dataclass
class Raised:
  error: BaseException

  def __repr__(self):
    return f"Raised({type(self.error).__name__}: {str(self.error)[:200]})"


@dataclasses.dataclass(frozen=True)
class Array:
  dtype: str
  shape: tuple
  values: Any


ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_PATH = re.compile(r"\b(sonnet_like|sonnet)(\.\w+)*\.(\w+)")


def normalized(text: str) -> str:
  """`text` without object addresses, with `sonnet.src.x.Cls` as `Cls`.

  The two libraries' classes live in different modules
  (`sonnet.src.initializers.Ones`, `sonnet_like.core.initializers.Ones`);
  reprs are compared without the module path.
  """
  return _PATH.sub(lambda m: m.group(3), ADDRESS.sub("", text))


def plain(value: Any, depth: int = 0) -> Any:
  """`value` as comparable plain data (arrays, tuples, dicts, strings)."""
  if depth > 8:
    return "<deep>"
  if isinstance(value, Raised):
    return value
  if isinstance(value, tf.TensorShape):
    return ("TensorShape", tuple(value.as_list()) if value.rank is not None
            else None)
  if isinstance(value, tf.DType):
    return ("DType", value.name)
  if isinstance(value, tf.TensorSpec):
    return ("TensorSpec", plain(value.shape), value.dtype.name)
  if isinstance(value, tf.IndexedSlices):
    return ("IndexedSlices", plain(tf.convert_to_tensor(value)))
  if isinstance(value, (tf.Tensor, tf.Variable, np.ndarray, np.generic)):
    if isinstance(value, tf.Tensor) and not hasattr(value, "numpy"):
      return ("SymbolicTensor", plain(value.shape), value.dtype.name)
    array = np.asarray(value)
    dtype = value.dtype.name if hasattr(value.dtype, "name") else str(
        array.dtype)
    return Array(dtype, tuple(array.shape),
                 array.astype(np.float64) if array.dtype.kind in "fc" or
                 dtype == "bfloat16" else array)
  if isinstance(value, tf.Module):
    return ("Module", type(value).__name__, value.name)
  if isinstance(value, dict):
    kind = type(value) if getattr(type(value), "open", False) else dict
    return kind((k, plain(v, depth + 1)) for k, v in value.items())
  if isinstance(value, tuple) and hasattr(value, "_fields"):
    return (type(value).__name__,) + tuple(plain(v, depth + 1) for v in value)
  if isinstance(value, (list, tuple)):
    kind = tuple if isinstance(value, tuple) else list
    return kind(plain(v, depth + 1) for v in value)
  if isinstance(value, float):
    return round(value, 6)
  if isinstance(value, (bool, int, str, type(None))):
    return normalized(value) if isinstance(value, str) else value
  if isinstance(value, (types.FunctionType, types.BuiltinFunctionType,
                        types.MethodType)):
    return ("function", getattr(value, "__name__", "?"))
  if isinstance(value, type):
    return ("class", value.__name__)
  return ("object", type(value).__name__)


def observe(snt: Any, p: Probe) -> Any:
  """Runs `p` with `snt` from a fixed global seed; plain result or Raised."""
  tf.random.set_seed(0)
  try:
    return plain(p.run(snt))
  except Exception as e:  # pylint: disable=broad-except
    return Raised(e)


def catches_like(ours: BaseException, their_type: type) -> bool:
  """Whether an `except` written for dm-sonnet's error catches ours too.

  Which `tf.errors.OpError` a TensorFlow kernel raises depends on the
  machine's kernels (oneDNN's transposed convolution raises `AbortedError`
  where the plain CPU kernel raises `InvalidArgumentError`), so code that
  runs anywhere catches `tf.errors.OpError`: where dm-sonnet's error comes
  from a kernel, ours must be one. Elsewhere ours must be of dm-sonnet's
  type or a subclass.
  """
  if issubclass(their_type, tf.errors.OpError):
    return isinstance(ours, tf.errors.OpError)
  return isinstance(ours, their_type)


def from_kernel(error: BaseException | None) -> bool:
  """Whether `error` came out of a TensorFlow kernel, not a Python check.

  Our checks raise from our own code (`sonnet_like/`), before any op sees
  the bad input; a kernel that does see it may abort the whole process on
  some CPUs instead of raising.
  """
  if not isinstance(error, tf.errors.OpError):
    return False
  frame, traceback = None, error.__traceback__
  while traceback is not None:
    frame, traceback = traceback.tb_frame, traceback.tb_next
  where = frame.f_code.co_filename if frame is not None else ""
  return f"{os.sep}sonnet_like{os.sep}" not in where


def _close(a: Array, b: Array) -> bool:
  if (a.dtype, a.shape) != (b.dtype, b.shape):
    return False
  if a.values.dtype.kind in "fc":
    tolerance = 1e-2 if a.dtype in ("float16", "bfloat16") else 1e-4
    return np.allclose(a.values, b.values, rtol=tolerance, atol=tolerance,
                       equal_nan=True)
  return np.array_equal(a.values, b.values)


def differences(ours: Any, theirs: Any, path: str = "") -> list[str]:
  """Where `ours` differs from `theirs` (empty if they agree)."""
  if isinstance(theirs, Raised) or isinstance(ours, Raised):
    if not isinstance(ours, Raised):
      return [f"{path}: Sonnet raises {theirs!r}; ours returns {ours!r}"]
    if not isinstance(theirs, Raised):
      return [f"{path}: ours raises {ours!r}; Sonnet returns {theirs!r}"]
    if not catches_like(ours.error, type(theirs.error)):
      return [f"{path}: Sonnet raises {theirs!r}, ours {ours!r}"]
    return []
  if isinstance(theirs, Array) or isinstance(ours, Array):
    if isinstance(ours, Array) and isinstance(theirs, Array) and _close(
        ours, theirs):
      return []
    return [f"{path}: {_short(ours)} != Sonnet's {_short(theirs)}"]
  if isinstance(theirs, dict) and isinstance(ours, dict):
    found = []
    for key in theirs:
      if key not in ours:
        found.append(f"{path}.{key}: missing (Sonnet: {_short(theirs[key])})")
      else:
        found.extend(differences(ours[key], theirs[key], f"{path}.{key}"))
    if not getattr(type(theirs), "open", False):
      found.extend(f"{path}.{key}: only ours has it" for key in ours
                   if key not in theirs)
    return found
  if (isinstance(theirs, (list, tuple)) and isinstance(ours, (list, tuple))
      and type(ours) is type(theirs) and len(ours) == len(theirs)):
    found = []
    for i, (a, b) in enumerate(zip(ours, theirs)):
      found.extend(differences(a, b, f"{path}[{i}]"))
    return found
  if ours != theirs:
    return [f"{path}: {_short(ours)} != Sonnet's {_short(theirs)}"]
  return []


def _short(value: Any) -> str:
  if isinstance(value, Array):
    return f"Array({value.dtype}, {value.shape}, {str(value.values)[:120]})"
  text = repr(value)
  return text if len(text) < 300 else text[:297] + "..."


def as_library(fn: Any, snt: Any) -> Any:
  """`fn` with the global `snt` of its module bound to `snt`.

  Helper functions of the same module that `fn` calls are rebound too, so a
  descriptor's `_resnet(...)` builds with the same library as its lambda.
  """
  if not isinstance(fn, types.FunctionType):
    return fn
  original = fn.__globals__
  scope = dict(original)
  scope["snt"] = snt
  for key, value in original.items():
    if (isinstance(value, types.FunctionType) and
        value.__globals__ is original):
      scope[key] = types.FunctionType(value.__code__, scope, value.__name__,
                                      value.__defaults__, value.__closure__)
  return types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__,
                            fn.__closure__)
