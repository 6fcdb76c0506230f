"""Imports run one way between the folders of the house: no folder-level
import loop among the package's rooms (`core`, `modules`, `scenarios`,
...) nor among the rooms of `scenarios/` (`compiled`, `run_folder`,
`population`, `hooks.py`, ...), read from the source as text."""

import ast
import os

import pytest

_PACKAGE = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "sonnet_like")


def _imports(path):
  """The `sonnet_like...` modules one file imports (each name of a
  `from package import name` as `package.name`)."""
  found = []
  for node in ast.walk(ast.parse(open(path, encoding="utf-8").read())):
    if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
        "sonnet_like"):
      found += [f"{node.module}.{alias.name}" for alias in node.names]
    elif isinstance(node, ast.Import):
      found += [a.name for a in node.names if a.name.startswith("sonnet_like")]
  return found


def _rooms(folder):
  """{room: rooms it imports} for the files under `folder` (a room: a
  sub-folder or a module directly in it)."""
  base = os.path.relpath(folder, os.path.dirname(_PACKAGE)).replace(
      os.sep, ".")
  graph = {}
  for parent, _, names in os.walk(folder):
    for name in names:
      if not name.endswith(".py"):
        continue
      path = os.path.join(parent, name)
      room = os.path.relpath(path, folder).split(os.sep)[0].removesuffix(
          ".py")
      targets = graph.setdefault(room, set())
      for module in _imports(path):
        if module.startswith(base + "."):
          target = module[len(base) + 1:].split(".")[0]
          if target != room and target != "__init__":
            targets.add(target)
  graph.pop("__init__", None)  # It gathers the public names.
  return graph


def _loop(graph):
  """One import loop (a list of rooms, the first again at the end), or
  None."""
  state = {}

  def visit(room, path):
    state[room] = "open"
    for target in sorted(graph.get(room, ())):
      if state.get(target) == "open":
        return path[path.index(target):] + [target]
      if target not in state:
        found = visit(target, path + [target])
        if found:
          return found
    state[room] = "done"
    return None

  for room in sorted(graph):
    if room not in state:
      found = visit(room, [room])
      if found:
        return found
  return None


@pytest.mark.parametrize("folder", ["", "scenarios"])
def test_no_folder_level_import_loop(folder):
  loop = _loop(_rooms(os.path.join(_PACKAGE, folder)))
  assert loop is None, (f"sonnet_like/{folder}: an import loop between "
                        f"rooms: {' -> '.join(loop)}")


def test_a_loop_is_found():
  assert _loop({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
  assert _loop({"a": {"b"}, "b": set()}) is None
