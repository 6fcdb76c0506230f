"""benchmarks/count_crossings.py counts a toy two-file call by its rule (the
real runs take a minute: BUILD_NOTES "One batch through the house")."""

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


def test_counts_each_edge_once_and_stops_at_user_code(tmp_path, monkeypatch):
  spec = importlib.util.spec_from_file_location("count_crossings", _SCRIPT)
  script = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(script)
  package = tmp_path / "toypkg"
  package.mkdir()
  (package / "__init__.py").write_text("")
  (package / "a.py").write_text(_A)
  (package / "b.py").write_text(_B)
  monkeypatch.syspath_prepend(str(tmp_path))
  for name in ("toypkg", "toypkg.a", "toypkg.b"):
    sys.modules.pop(name, None)
  a = importlib.import_module("toypkg.a")
  b = importlib.import_module("toypkg.b")
  user = _User()
  counter = script.CrossingCounter("toypkg", {"model": user}, lambda: a.f)
  assert counter.run(lambda: a.f(user, b.Thing())) == 5
  assert counter.edges == [("a.py:f", "b.py:g"),
                           ("b.py:g", "user model (_User.call)")]
  assert counter.calls == 4  # Two of each edge, counted once each.
  assert counter.property_reads == 2  # `thing.size`: not counted.
  assert counter.attribute_writes == 2  # `thing.seen = True`: not counted.
