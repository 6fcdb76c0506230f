"""Sphinx extension: the API reference is generated from `__all__`.

`.. public-api:: sonnet_like.nets` documents every public name of that
module (its `__all__`; without one, the classes and functions it defines
whose names do not start with `_`) with autodoc. The build then warns, and
a strict build (`-W`) fails, when

- a public name has no docstring (or an empty one), or
- a public module reached from `sonnet_like.__all__` has no
  `public-api` directive anywhere in the docs.

`public_names`, `public_modules` and `missing_docstrings` are plain
functions so that tests/test_docs.py can check them without Sphinx.
"""

import importlib
import inspect
import re
import sys
import types
from typing import Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

_LOGGER = logging.getLogger(__name__)
ROOT = "sonnet_like"


def public_names(module: types.ModuleType) -> list[str]:
  """The public names of `module`: `__all__`, else what it defines."""
  names = getattr(module, "__all__", None)
  if names is not None:
    return list(names)
  return sorted(
      name for name, value in vars(module).items()
      if not name.startswith("_")
      and (inspect.isclass(value) or inspect.isfunction(value))
      and value.__module__ == module.__name__)


def resolve(public_path: str) -> types.ModuleType:
  """The module at a public path (`sonnet_like.initializers`), by attributes:
  the file may live elsewhere (`sonnet_like/core/initializers.py`)."""
  root, *rest = public_path.split(".")
  module = importlib.import_module(root)
  for attribute in rest:
    module = getattr(module, attribute)
  return module


def public_modules(root: str = ROOT) -> list[str]:
  """`root` and every module reached through the public names, in order."""
  found, queue = [], [root]
  while queue:
    name = queue.pop(0)
    if name in found:
      continue
    found.append(name)
    module = resolve(name)
    for attribute in public_names(module):
      value = getattr(module, attribute)
      if isinstance(value, types.ModuleType):
        queue.append(f"{name}.{attribute}")
  return found


def missing_docstrings(module_name: str) -> list[str]:
  """Public names of the module whose docstring is missing or empty."""
  module = resolve(module_name)
  missing = []
  for name in public_names(module):
    value = getattr(module, name)
    if isinstance(value, types.ModuleType):
      doc = value.__doc__
    else:
      doc = inspect.getdoc(value)
    if not (doc or "").strip():
      missing.append(f"{module_name}.{name}")
  return missing


def _directive_for(value: Any) -> str:
  if inspect.isclass(value):
    return "autoclass"
  if callable(value):
    return "autofunction"
  return "autodata"


def reference_lines(module_name: str) -> list[str]:
  """The reStructuredText that documents one public module."""
  module = resolve(module_name)
  lines = [f".. automodule:: {module_name}", "   :no-members:", ""]
  submodules, entries = [], []
  for name in public_names(module):
    value = getattr(module, name)
    if isinstance(value, types.ModuleType):
      submodules.append(f"{module_name}.{name}")
      continue
    entries.append(name)
    directive = _directive_for(value)
    lines.append(f".. {directive}:: {module_name}.{name}")
    if directive == "autoclass":
      lines += ["   :members:", "   :special-members: __call__"]
    lines.append("")
  if submodules:
    lines.insert(3, "Public submodules: " + ", ".join(
        f":py:mod:`{m}`" for m in submodules) + ".")
    lines.insert(4, "")
  return lines


class PublicApi(SphinxDirective):
  """`.. public-api:: module`: autodoc for each of the module's public names."""

  required_arguments = 1

  def run(self) -> list[nodes.Node]:
    module_name = self.arguments[0]
    if not hasattr(self.env, "public_api_modules"):
      self.env.public_api_modules = {}
    self.env.public_api_modules[module_name] = self.env.docname
    for name in missing_docstrings(module_name):
      _LOGGER.warning(f"public name {name} has no docstring",
                      location=(self.env.docname, self.lineno))
    content = StringList(reference_lines(module_name),
                         source=f"<public-api {module_name}>")
    container = nodes.container()
    nested_parse_with_titles(self.state, content, container)
    return container.children


def _purge(app, env, docname):  # pylint: disable=unused-argument
  modules = getattr(env, "public_api_modules", {})
  for module_name in [m for m, d in modules.items() if d == docname]:
    del modules[module_name]


def _merge(app, env, docnames, other):  # pylint: disable=unused-argument
  if not hasattr(env, "public_api_modules"):
    env.public_api_modules = {}
  env.public_api_modules.update(getattr(other, "public_api_modules", {}))


def _check_coverage(app, env):  # pylint: disable=unused-argument
  documented = getattr(env, "public_api_modules", {})
  for module_name in public_modules():
    if module_name not in documented:
      _LOGGER.warning(
          f"public module {module_name} has no API reference: add a page "
          f"under docs/api/ with `.. public-api:: {module_name}`")


def alias_public_modules() -> None:
  """Makes each public path importable (autodoc imports what it documents):
  `sonnet_like.initializers` is `sonnet_like/core/initializers.py`."""
  for public_path in public_modules():
    sys.modules.setdefault(public_path, resolve(public_path))


# `RNNCore`s: Markdown lets a letter follow the closing backtick, reST
# needs an escaped space there.
_CODE_THEN_LETTER = re.compile(r"(`[^`\s][^`]*`)(?=[A-Za-z])")
_TABLE_RULE = re.compile(r"^\s*\|(\s*:?-+:?\s*\|)+\s*$")


def _escape(text: str) -> str:
  return _CODE_THEN_LETTER.sub(r"\1\\ ", text)


def _indent(line: str) -> int:
  return len(line) - len(line.lstrip())


def _starts_list(previous: list[str], line: str) -> bool:
  """Whether `line` is a bullet right under text that is not the list's."""
  if not line.lstrip().startswith("- ") or not previous or not previous[-1].strip():
    return False
  for earlier in reversed(previous):
    if earlier.strip() and _indent(earlier) <= _indent(line):
      return not (_indent(earlier) == _indent(line)
                  and earlier.lstrip().startswith("- "))
  return True


def _cells(line: str) -> list[str]:
  return [cell.strip() for cell in line.strip().strip("|").split("|")]


def markdown_to_rest(lines: list[str]) -> list[str]:
  """Rewrites the Markdown habits of our docstrings as reStructuredText.

  Code followed by a letter (`` `Hook`s ``) gets an escaped space, a pipe
  table becomes a `list-table`, and a bullet list that starts right under
  a line of text gets the blank line reST needs before it.
  """
  out, i = [], 0
  while i < len(lines):
    line = lines[i]
    if (line.lstrip().startswith("|") and i + 1 < len(lines)
        and _TABLE_RULE.match(lines[i + 1])):
      indent = line[:len(line) - len(line.lstrip())]
      rows = [_cells(line)]
      i += 2
      while i < len(lines) and lines[i].lstrip().startswith("|"):
        rows.append(_cells(lines[i]))
        i += 1
      if out and out[-1].strip():
        out.append("")
      out += [f"{indent}.. list-table::", f"{indent}   :header-rows: 1", ""]
      for row in rows:
        out.append(f"{indent}   * - {_escape(row[0])}")
        out += [f"{indent}     - {_escape(c)}"
                for c in row[1:]]
      out.append("")
      continue
    if _starts_list(out, line):
      out.append("")
    out.append(_escape(line))
    i += 1
  return out


def _process_docstring(app, what, name, obj, options, lines):  # pylint: disable=unused-argument
  lines[:] = markdown_to_rest(lines)


def setup(app):
  alias_public_modules()
  app.connect("autodoc-process-docstring", _process_docstring, priority=400)
  app.add_directive("public-api", PublicApi)
  app.connect("env-purge-doc", _purge)
  app.connect("env-merge-info", _merge)
  app.connect("env-check-consistency", _check_coverage)
  return {"version": "1", "parallel_read_safe": True,
          "parallel_write_safe": True}
