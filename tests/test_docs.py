"""The guides under docs/ stay true, and the API reference stays complete.

Every code block of a guide is checked:

- ```python blocks run, in order, in one namespace per page, in a
  temporary folder; what a block prints must be its `# ...` lines in
  column 0, in order (as in the README, tests/test_readme.py).
- ```{code-block} python blocks with `:caption: name.py` are written to
  that file in the folder (a script that a later block runs).
- ```bash blocks are commands for a shell on a fresh machine (pip, the
  examples): each `python path.py` must name a file of this checkout and
  each `.[extra]` an extra of setup.py.

A page whose first line under its title is `<!-- run in a fresh process -->`
runs in a subprocess (it configures TensorFlow devices before TensorFlow
starts). Any other kind of block is an error, so none goes unchecked.

The Sphinx build itself (`docs/build.sh`, strict) runs in `.ci/docs`; the
tests here check the reference's coverage without Sphinx.
"""

import contextlib
import dataclasses
import io
import os
import pathlib
import re
import subprocess
import sys
import types

import pytest

_ROOT = pathlib.Path(__file__).parent.parent
_DOCS = _ROOT / "docs"
_GUIDES = sorted((_DOCS / "guides").glob("*.md"))
_FRESH_PROCESS = "<!-- run in a fresh process -->"
_FENCE = re.compile(r"^```(\S*)[ ]?(.*)$")


@dataclasses.dataclass
class Block:
  kind: str  # "python", "file" or "bash".
  code: str
  line: int
  filename: str | None = None


def blocks(text: str) -> list[Block]:
  """The fenced code blocks of a Markdown page, with their kind."""
  found, lines, i = [], text.splitlines(), 0
  while i < len(lines):
    match = _FENCE.match(lines[i])
    if not match or not match[1]:
      i += 1
      continue
    start, info, argument = i + 1, match[1], match[2].strip()
    i += 1
    options = {}
    if info.startswith("{"):
      while i < len(lines) and lines[i].startswith(":"):
        key, _, value = lines[i][1:].partition(":")
        options[key.strip()] = value.strip()
        i += 1
    body = []
    while lines[i] != "```":
      body.append(lines[i])
      i += 1
    i += 1
    code = "\n".join(body) + "\n"
    if info == "python":
      found.append(Block("python", code, start))
    elif info == "bash":
      found.append(Block("bash", code, start))
    elif (info == "{code-block}" and argument == "python"
          and options.get("caption", "").endswith(".py")):
      found.append(Block("file", code, start, options["caption"]))
    elif info == "{toctree}":
      continue
    else:
      raise AssertionError(
          f"line {start}: a ```{info} {argument} block is not checked by "
          "tests/test_docs.py; use ```python, ```bash or a "
          "```{code-block} python with :caption: name.py")
  return found


def shown_output(code: str) -> list[str]:
  """What a block must print: its lines that start with `# ` in column 0
  (comments about the code are indented or follow code on its line)."""
  return [line[2:] for line in code.splitlines() if line.startswith("# ")]


def run_page(path: pathlib.Path, folder: pathlib.Path) -> None:
  """Runs a guide's blocks in `folder`; raises on the first that fails."""
  namespace: dict = {"__name__": "__docs__"}
  cwd = os.getcwd()
  os.chdir(folder)
  try:
    for block in blocks(path.read_text()):
      where = f"{path.name}, the block at line {block.line}"
      if block.kind == "file":
        (folder / block.filename).write_text(block.code)
      elif block.kind == "bash":
        check_commands(block.code, where)
      else:
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
          exec(compile(block.code, where, "exec"), namespace)  # pylint: disable=exec-used
        assert printed.getvalue().splitlines() == shown_output(block.code), (
            f"{where} printed:\n{printed.getvalue()}")
  finally:
    os.chdir(cwd)


def check_commands(code: str, where: str) -> None:
  extras = re.search(r"extras_require=\{(.*?)\n    \}",
                     (_ROOT / "setup.py").read_text(), re.S)[1]
  for extra in re.findall(r'\.\[([\w,]+)\]', code):
    for name in extra.split(","):
      assert f'"{name}":' in extras, f"{where}: no extra [{name}] in setup.py"
  for script in re.findall(r"(?:python|bash) ([\w/.-]+\.(?:py|sh))", code):
    assert (_ROOT / script).is_file(), f"{where}: {script} does not exist"


@pytest.mark.parametrize("path", _GUIDES, ids=[p.stem for p in _GUIDES])
def test_guide_blocks_run_and_print_what_they_show(path, tmp_path):
  if _FRESH_PROCESS in path.read_text():
    script = (f"import sys; sys.path[:0] = [{str(_ROOT)!r}]\n"
              "import pathlib\nfrom tests import test_docs\n"
              f"test_docs.run_page(pathlib.Path({str(path)!r}), "
              f"pathlib.Path({str(tmp_path)!r}))\n")
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    result = subprocess.run([sys.executable, "-c", script], cwd=_ROOT, env=env,
                            capture_output=True, text=True, timeout=240)
    assert result.returncode == 0, result.stderr[-4000:]
  else:
    pytest.importorskip("sklearn")
    run_page(path, tmp_path)


def test_every_guide_is_in_the_table_of_contents():
  index = (_DOCS / "index.md").read_text()
  for path in _GUIDES:
    assert f"guides/{path.stem}\n" in index, path.name


def test_unchecked_block_kinds_are_refused():
  with pytest.raises(AssertionError, match="not checked"):
    blocks("# T\n\n```text\nx\n```\n")
  found = blocks("```python\nprint(1)\n# 1\n```\n\n```{code-block} python\n"
                 ":caption: w.py\n\nimport os\n```\n")
  assert [(b.kind, b.filename) for b in found] == [("python", None),
                                                   ("file", "w.py")]


def test_a_wrong_shown_output_fails(tmp_path):
  page = tmp_path / "page.md"
  page.write_text("# T\n\n```python\nprint(1 + 1)\n# 3\n```\n")
  with pytest.raises(AssertionError, match="printed"):
    run_page(page, tmp_path)


def test_bash_blocks_name_real_scripts_and_extras():
  check_commands('pip install -e ".[examples]" && python examples/vae.py', "x")
  with pytest.raises(AssertionError, match="does not exist"):
    check_commands("python examples/nothing_here.py", "x")
  with pytest.raises(AssertionError, match="no extra"):
    check_commands('pip install ".[nonsense]"', "x")


# ---- the API reference ----

sys.path.insert(0, str(_DOCS / "_ext"))
import public_api  # pylint: disable=g-import-not-at-top,wrong-import-position


def _api_pages() -> dict[str, str]:
  pages = {}
  for page in (_DOCS / "api").glob("*.rst"):
    for module in re.findall(r"^\.\. public-api:: (\S+)$", page.read_text(),
                             re.M):
      pages[module] = page.stem
  return pages


def test_every_public_module_has_a_reference_page_in_the_toctree():
  modules = public_api.public_modules()
  assert {"sonnet_like", "sonnet_like.nets", "sonnet_like.scenarios",
          "sonnet_like.export", "sonnet_like.envs"} <= set(modules)
  pages = _api_pages()
  assert sorted(pages) == sorted(modules)
  index = (_DOCS / "api" / "index.rst").read_text()
  for page in pages.values():
    assert f"   {page}\n" in index, page


def test_every_public_name_has_a_docstring():
  for module in public_api.public_modules():
    assert public_api.missing_docstrings(module) == [], module


def test_the_checks_catch_a_name_without_docstring_or_page(monkeypatch):
  fake = types.ModuleType("sonnet_like_fake")
  fake.__all__ = ["documented", "bare", "sub"]

  def documented():
    """Has one."""

  def bare():
    pass

  sub = types.ModuleType("sonnet_like_fake.sub")
  sub.__doc__ = "A subpackage."
  sub.__all__ = []
  fake.documented, fake.bare, fake.sub = documented, bare, sub
  monkeypatch.setitem(sys.modules, "sonnet_like_fake", fake)
  assert public_api.missing_docstrings("sonnet_like_fake") == [
      "sonnet_like_fake.bare"]
  assert public_api.public_modules("sonnet_like_fake") == [
      "sonnet_like_fake", "sonnet_like_fake.sub"]
  lines = "\n".join(public_api.reference_lines("sonnet_like_fake"))
  assert ".. autofunction:: sonnet_like_fake.bare" in lines
  assert ":py:mod:`sonnet_like_fake.sub`" in lines


def test_modules_without_all_list_what_they_define():
  names = public_api.public_names(
      public_api.resolve("sonnet_like.scenarios.gan_losses"))
  assert "wgan_gp_penalty" in names and "get" in names
  assert not any(n.startswith("_") for n in names)
  assert "tf" not in names  # Imported, not defined there.


def test_markdown_habits_become_restructured_text():
  rest = public_api.markdown_to_rest([
      "Takes `Hook`s.", "  env: One of", "    - an `Environment`;",
      "      more", "    - a name.", "", "| a | b |", "|---|---|",
      "| `x` | y |"])
  assert rest[0] == r"Takes `Hook`\ s."
  assert rest[1:4] == ["  env: One of", "", "    - an `Environment`;"]
  assert rest[4:6] == ["      more", "    - a name."]  # No blank inside.
  assert ".. list-table::" in rest and "   * - `x`" in rest


def test_docs_extra_and_ci_script():
  setup = (_ROOT / "setup.py").read_text()
  assert re.search(r'"docs": \[[^\]]*"sphinx>=', setup)
  ci = (_ROOT / ".ci" / "docs").read_text()
  assert "set -euo pipefail" in ci and '.[docs]' in ci
  assert "sphinx-build -W --keep-going -b html docs docs/_build/html" in ci
