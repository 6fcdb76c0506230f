"""Every public callable of dm-sonnet 2.0.2 has the same signature here.

For each public name of Sonnet 2.0.2 (walked from its `__all__`s): functions,
classes' `__init__`, `__call__` and public methods are compared for parameter
names, order, kinds and defaults. Deliberate differences are listed in
`DIFFERENCES` with the reason; a listed difference that no longer exists
fails too, so the table stays true.
"""

import inspect
from typing import Any, Iterator

import pytest

import sonnet_like as snt

# (qualified name, method or "" for a function) -> why we differ.
DIFFERENCES: dict[tuple[str, str], str] = {}


def _reference():
  return pytest.importorskip("sonnet")


def _public(module) -> Iterator[tuple[str, Any]]:
  """(qualified name, object) for the public API under `module`."""
  seen = set()

  def walk(mod, prefix):
    names = getattr(mod, "__all__", None)
    if names is None:
      names = [n for n in dir(mod) if not n.startswith("_")]
    if not prefix:  # Public in Sonnet 2.0.2 but missing from its `__all__`.
      names = list(names) + ["mixed_precision"]
    for name in names:
      obj = getattr(mod, name)
      qualified = prefix + name
      if inspect.ismodule(obj):
        if obj.__name__ not in seen:
          seen.add(obj.__name__)
          yield from walk(obj, qualified + ".")
      else:
        yield qualified, obj

  yield from walk(module, "")


def _lookup(root, qualified: str):
  for part in qualified.split("."):
    root = getattr(root, part)
  return root


def _undecorate(fn):
  """The function under dm-sonnet's `utils.decorator` wrappers.

  Sonnet's method decorators (name scopes, `once`) hide the signature behind
  `(*args, **kwargs)` without `__wrapped__`; the wrapped function is the
  closure cell `f`.
  """
  for _ in range(10):
    code = getattr(fn, "__code__", None)
    if (code is not None and fn.__name__.startswith("_decorate") and
        "f" in code.co_freevars):
      fn = fn.__closure__[code.co_freevars.index("f")].cell_contents
      continue
    wrapped = getattr(fn, "__wrapped__", None)
    if wrapped is not None and fn.__name__ == "wrapper" and (
        fn.__qualname__.startswith("once.")):
      fn = wrapped
      continue
    break
  return fn


def _signature(fn) -> list[tuple[str, str, str]] | None:
  try:
    signature = inspect.signature(fn)
  except (TypeError, ValueError):
    return None
  return [(p.name, p.kind.name,
           "-" if p.default is p.empty else repr(p.default))
          for p in signature.parameters.values()]


def _methods(cls) -> Iterator[str]:
  yield "__init__"
  for name in sorted(dir(cls)):
    if name.startswith("_") and name != "__call__":
      continue
    if isinstance(inspect.getattr_static(cls, name), property):
      continue
    if callable(getattr(cls, name)):
      yield name


def _cases() -> list[tuple[str, str]]:
  try:
    import sonnet  # pylint: disable=g-import-not-at-top
  except ImportError:
    return []
  cases = []
  for qualified, obj in _public(sonnet):
    if inspect.isclass(obj):
      cases.extend((qualified, m) for m in _methods(obj))
    elif callable(obj):
      cases.append((qualified, ""))
  return cases


_CASES = _cases()


@pytest.mark.parametrize("qualified,method", _CASES,
                         ids=[f"{q}.{m}" if m else q for q, m in _CASES])
def test_same_signature_as_sonnet(qualified, method):
  sonnet = _reference()
  theirs = _lookup(sonnet, qualified)
  try:
    ours = _lookup(snt, qualified)
  except AttributeError:
    pytest.fail(f"snt.{qualified} is missing")
  if method:
    assert hasattr(ours, method), f"snt.{qualified}.{method} is missing"
    theirs, ours = getattr(theirs, method), getattr(ours, method)
  expected = _signature(_undecorate(theirs))
  got = _signature(ours)
  if (qualified, method) in DIFFERENCES:
    assert got != expected, (
        f"{qualified}.{method} now matches Sonnet: remove it from "
        "DIFFERENCES")
    return
  assert got == expected


def test_walk_covers_the_api():
  """The walk finds the names test_sonnet_api lists, and functional."""
  _reference()
  names = {q for q, _ in _CASES}
  for expected in ("Linear", "GroupNorm", "nets.MLP", "optimizers.Adam",
                   "functional.transform", "functional.adam",
                   "initializers.VarianceScaling", "pad.same",
                   "mixed_precision.enable", "distribute.Replicator"):
    assert expected in names


def test_differences_are_explained():
  for key, reason in DIFFERENCES.items():
    assert key in _CASES and len(reason) > 20, key


def test_group_norm_takes_sonnets_positional_arguments():
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  # `axis=True`: a Python bool is an int, so Sonnet normalizes over axis 1.
  gn = snt.GroupNorm(2, True, True, name="gn")
  out = gn(tf.reshape(tf.range(8.), [2, 4]))
  assert out.shape == (2, 4)
  reference = pytest.importorskip("sonnet").GroupNorm(2, True, True)
  import numpy as np  # pylint: disable=g-import-not-at-top
  np.testing.assert_allclose(
      out, reference(tf.reshape(tf.range(8.), [2, 4])), atol=1e-5)
