"""Checks of constructor and call arguments, with one wording per rule.

    >>> check_positive_int("Supervised", "batch_size", 0)
    Traceback (most recent call last):
    ...
    ValueError: Supervised: batch_size must be a positive int, got 0.
    >>> check_keywords("Supervised", {"eval_evry": 5}, ["eval_every", "seed"])
    Traceback (most recent call last):
    ...
    TypeError: Supervised: got an unexpected keyword argument 'eval_evry'; did you mean 'eval_every'?
"""

import difflib
import inspect
import numbers
from typing import Any, Iterable

import tensorflow as tf

from sonnet_like.core import autograph
from sonnet_like.core import checks


@autograph.as_written
def check_positive_int(owner: str, argument: str, value: Any,
                       optional: bool = False) -> Any:
  """Returns `value` if it is an int >= 1 (or None when `optional`).

  NumPy ints count as ints (and are returned as given).

  Raises:
    ValueError: naming `owner` and `argument`, otherwise.
  """
  if value is None and optional:
    return value
  if (isinstance(value, bool) or not isinstance(value, numbers.Integral) or
      value < 1):
    raise ValueError(f"{owner}: {argument} must be a positive int"
                     f"{' or None' if optional else ''}, got {value!r}.")
  return value


def check_floating_dtype(owner: str, dtype: Any) -> tf.DType:
  """Returns `dtype` as a `tf.DType` if it is a floating-point dtype.

  Raises:
    ArgumentTypeError: (a `TypeError` and a `ValueError`) otherwise.
  """
  try:
    converted = tf.as_dtype(dtype)
  except TypeError:
    converted = None
  if converted is None or not converted.is_floating:
    raise checks.ArgumentTypeError(
        f"{owner}: dtype must be a floating-point dtype, got {dtype!r}.")
  return converted


def check_no_b_init_without_bias(owner: str, with_bias: Any,
                                 b_init: Any) -> None:
  """Raises if `b_init` is given while `with_bias` is false (Sonnet 2's
  words end the message)."""
  if not with_bias and b_init is not None:
    raise ValueError(f"{owner}: b_init must be None when with_bias=False, got "
                     f"{b_init!r}. When not using a bias the b_init must be "
                     "None.")


def check_non_negative_int(owner: str, argument: str, value: Any) -> None:
  """Raises unless `value` is an int >= 0."""
  if (isinstance(value, bool) or not isinstance(value, numbers.Integral) or
      value < 0):
    raise ValueError(f"{owner}: {argument} must be a non-negative int, got "
                     f"{value!r}.")


def check_positive_number(owner: str, name: str, value: Any,
                          upper: float | None = None) -> None:
  """`value` is a real number > 0 (and <= `upper` when given)."""
  ok = (not isinstance(value, bool) and isinstance(value, (int, float)) and
        value > 0 and (upper is None or value <= upper))
  if not ok:
    bound = f" and at most {upper}" if upper is not None else ""
    raise ValueError(f"{owner}: {name} must be a number above 0{bound}, got "
                     f"{value!r}.")


def check_non_negative(owner: str, name: str, value: Any,
                       upper: float | None = None) -> None:
  """`value` is a real number >= 0 (and <= `upper` when given)."""
  ok = (not isinstance(value, bool) and isinstance(value, (int, float)) and
        value >= 0 and (upper is None or value <= upper))
  if not ok:
    bound = f" and at most {upper}" if upper is not None else ""
    raise ValueError(f"{owner}: {name} must be a number of at least 0{bound}, "
                     f"got {value!r}.")


def check_keywords(owner: str, given: Iterable[str],
                   accepted: Iterable[str]) -> None:
  """Raises a TypeError naming `owner` and the closest accepted name."""
  accepted = list(dict.fromkeys(accepted))
  for name in given:
    if name not in accepted:
      close = difflib.get_close_matches(name, accepted, n=1, cutoff=0.6)
      hint = (f"; did you mean {close[0]!r}?" if close else
              f". It takes: {', '.join(sorted(accepted))}.")
      raise TypeError(f"{owner}: got an unexpected keyword argument "
                      f"{name!r}{hint}")


def keyword_names(cls: type) -> list[str]:
  """The keyword arguments `cls(...)` accepts, following `**kwargs` that are
  passed on to base classes' `__init__` (as scenarios do)."""
  names: list[str] = []
  for klass in cls.__mro__:
    if "__init__" not in vars(klass) or klass is object:
      continue
    parameters = inspect.signature(vars(klass)["__init__"]).parameters
    names += [p.name for p in parameters.values()
              if p.name != "self" and p.kind in (p.POSITIONAL_OR_KEYWORD,
                                                  p.KEYWORD_ONLY)]
    if not any(p.kind == p.VAR_KEYWORD for p in parameters.values()):
      break
  return names


def check_module(owner: str, argument: str, value: Any) -> None:
  """Raises unless `value` is a module (with `trainable_variables`) that can
  be called."""
  if not callable(value) or not hasattr(type(value), "trainable_variables"):
    raise TypeError(f"{owner}: {argument} must be a module (snt.Module, "
                    f"tf.Module) that can be called, got {value!r}.")
