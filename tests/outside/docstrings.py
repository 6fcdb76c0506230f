"""Probes from dm-sonnet 2.0.2's own docstring examples.

Sonnet runs the examples in its public docstrings as doctests with `snt`,
`tf` and `tree` in scope. Each docstring here becomes a probe: its examples
run in order with `snt` bound to either library, and what each prints or
evaluates to (its repr, object addresses and module paths removed) must be
the same. The outputs are compared with each other, not with the text in
Sonnet's docstring (which elides values with `...`).
"""

import contextlib
import doctest
import inspect
import io
from typing import Any

import numpy as np
import tensorflow as tf
import tree

from tests.outside import framework

def _public_objects(sonnet: Any):
  """(qualified name, object) for Sonnet's public API, like Sonnet's test."""
  seen = set()

  def walk(module, prefix):
    for name in getattr(module, "__all__", ()):
      value = getattr(module, name)
      if inspect.ismodule(value):
        if value.__name__ not in seen:
          seen.add(value.__name__)
          yield from walk(value, f"{prefix}{name}.")
      else:
        yield f"{prefix}{name}", value

  yield from walk(sonnet, "")
  yield "mixed_precision", sonnet.mixed_precision


def _undecorated(fn: Any) -> Any:
  """A method under Sonnet's name-scope wrapper (which drops `__doc__`)."""
  from tests import test_signatures  # pylint: disable=g-import-not-at-top
  return test_signatures._undecorate(fn)  # pylint: disable=protected-access


def _documented(qualified: str, value: Any):
  """(name, docstring) of `value` and, for a class, of its own methods."""
  yield qualified, getattr(value, "__doc__", None)
  if inspect.isclass(value):
    for key, member in vars(value).items():
      if isinstance(member, property):
        member = member.fget
      if isinstance(member, (staticmethod, classmethod)):
        member = member.__func__
      if inspect.isfunction(member):
        yield f"{qualified}.{key}", getattr(_undecorated(member), "__doc__",
                                            None)


def _tests(sonnet: Any) -> list[doctest.DocTest]:
  parser = doctest.DocTestParser()
  found, docs = [], set()
  for qualified, value in _public_objects(sonnet):
    if inspect.ismodule(value):  # `mixed_precision`: no `__all__`.
      members = [(f"{qualified}.{k}", v) for k, v in vars(value).items()
                 if not k.startswith("_") and inspect.isfunction(v)]
    elif inspect.isclass(value) or inspect.isfunction(value):
      members = [(qualified, value)]
    else:
      continue
    for name, member in members:
      for doc_name, doc in _documented(name, member):
        if not doc or ">>>" not in doc or doc in docs:
          continue
        docs.add(doc)
        test = parser.get_doctest(doc, {}, doc_name, None, 0)
        if test.examples:
          found.append(test)
  return found


@contextlib.contextmanager
def _tpu_is_replicator(snt: Any):
  """As Sonnet's doctest does off TPU: TpuReplicator -> Replicator."""
  saved = snt.distribute.TpuReplicator
  snt.distribute.TpuReplicator = snt.distribute.Replicator
  try:
    yield
  finally:
    snt.distribute.TpuReplicator = saved


@contextlib.contextmanager
def _restored(snt: Any):
  """Undoes what a docstring does globally (`mixed_precision.modes` patches
  `snt.Linear.__call__`, `enable` sets a policy)."""
  saved = snt.Linear.__dict__["__call__"]
  try:
    yield
  finally:
    snt.Linear.__call__ = saved
    snt.mixed_precision.disable()


def _run(test: doctest.DocTest, snt: Any) -> list[str]:
  namespace = {"snt": snt, "tf": tf, "tree": tree, "np": np}
  outputs = []
  with _tpu_is_replicator(snt), _restored(snt):
    for example in test.examples:
      buffer = io.StringIO()
      try:
        code = compile(example.source, f"<{test.name}>", "single")
        with contextlib.redirect_stdout(buffer):
          exec(code, namespace)  # pylint: disable=exec-used
        outputs.append(framework.normalized(buffer.getvalue()))
      except Exception as e:  # pylint: disable=broad-except
        outputs.append(f"raises {type(e).__name__}")
  return outputs


def probes() -> list[framework.Probe]:
  try:
    import sonnet  # pylint: disable=g-import-not-at-top
  except ImportError:
    return []
  return [framework.Probe(f"doc.{test.name}",
                          lambda snt, test=test: _run(test, snt))
          for test in _tests(sonnet)]
