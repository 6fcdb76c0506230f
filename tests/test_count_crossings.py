"""benchmarks/count_crossings.py counts toy two-file calls by its rule (the
real runs take minutes: BUILD_NOTES "Crossings")."""

import importlib
import importlib.util
import pathlib
import sys

_SCRIPT = (pathlib.Path(__file__).parent.parent / "benchmarks" /
           "count_crossings.py")

_A = '''
from toypkg import b

def f(user, thing):
  return b.g(user, thing) + b.g(user, thing) + helper()

def helper():
  return 1
'''

_B = '''
from toypkg import a

class Thing:
  @property
  def size(self):
    return a.helper()

  def __setattr__(self, name, value):
    a.helper()
    object.__setattr__(self, name, value)

def g(user, thing):
  thing.seen = True  # Attribute access, not a call.
  return thing.size + user.call()
'''


class _User:

  def call(self):
    from toypkg import a  # pylint: disable=g-import-not-at-top
    return a.helper()  # Inside user code: not counted.


def _toy(tmp_path, monkeypatch, files: dict[str, str]):
  """The script, and the modules of a package `toypkg` of `files`."""
  spec = importlib.util.spec_from_file_location("count_crossings", _SCRIPT)
  script = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(script)
  package = tmp_path / "toypkg"
  package.mkdir()
  (package / "__init__.py").write_text("")
  for name, text in files.items():
    (package / f"{name}.py").write_text(text)
  monkeypatch.syspath_prepend(str(tmp_path))
  for name in ["toypkg"] + [f"toypkg.{name}" for name in files]:
    sys.modules.pop(name, None)
  return script, [importlib.import_module(f"toypkg.{name}") for name in files]


def test_counts_each_edge_once_and_stops_at_user_code(tmp_path, monkeypatch):
  script, (a, b) = _toy(tmp_path, monkeypatch, {"a": _A, "b": _B})
  user = _User()
  counter = script.CrossingCounter("toypkg", {"model": user}, lambda: a.f)
  assert counter.run(lambda: a.f(user, b.Thing())) == 5
  assert counter.edges == [("a.py:f", "b.py:g"),
                           ("b.py:g", "user model (_User.call)")]
  assert counter.calls == 4  # Two of each edge, counted once each.
  # Calls within one file, apart: `helper()` (not those made inside the
  # property, the attribute hook or the user's code).
  assert counter.same_file_edges == [("a.py:f", "a.py:helper")]
  assert counter.same_file_calls == 1
  assert counter.property_reads == 2  # `thing.size`: not counted.
  assert counter.attribute_writes == 2  # `thing.seen = True`: not counted.


# Two functions alike in name, line (7) and body, in two files: their code
# objects compare equal (CPython compares code by value, not by file), as
# AutoGraph's `else_body_1` in two rewritten functions can.
_C = '''
from toypkg import d

def f():
  return same() + d.same()

def same():
  return 1
'''

_D = '''
import math

def unused():
  return math.pi

def same():
  return 1
'''


def test_functions_equal_by_value_in_two_files_are_two_functions(
    tmp_path, monkeypatch):
  script, (c, d) = _toy(tmp_path, monkeypatch, {"c": _C, "d": _D})
  assert c.same.__code__ == d.same.__code__  # The trap.
  counter = script.CrossingCounter("toypkg", {}, lambda: c.f)
  assert counter.run(c.f) == 2
  assert counter.edges == [("c.py:f", "d.py:same")]
