"""The README's commands, examples and their shown output stay true.

Every ```python block runs, in order, in one namespace (in a temporary
folder), and what it prints must be what the README shows under each
`print(...)` as `# ...` lines. The export snippet needs the main job's
output; tests/export/test_readme_export.py runs it against a fresh export.
"""

import contextlib
import io
import os
import pathlib
import re

import pytest

pytest.importorskip("sklearn")

_ROOT = pathlib.Path(__file__).parent.parent
_README = (_ROOT / "README.md").read_text()
_EXPORT_SNIPPET = 'tf.saved_model.load("runs/digits/export")'


def _blocks(language: str) -> list[str]:
  return re.findall(rf"```{language}\n(.*?)```", _README, re.S)


def _shown_output(block: str) -> list[str]:
  """The `# ...` lines right after each print(...) statement."""
  shown, lines = [], block.splitlines()
  for i, line in enumerate(lines):
    if line.startswith("print("):
      j = i + 1
      while j < len(lines) and not lines[j].startswith("# "):
        j += 1  # A print may span several lines.
      j_end = j
      while j_end < len(lines) and lines[j_end].startswith("# "):
        shown.append(lines[j_end][2:])
        j_end += 1
  return shown


def test_ci_runs_the_readme_test_command():
  commands = [b.strip() for b in _blocks("bash")]
  assert len(commands) == 2, "The README gives exactly two commands."
  ci_lines = (_ROOT / ".ci" / "run").read_text().strip().splitlines()
  assert ci_lines[-1].strip() == commands[1]


def test_main_job_script_exists():
  script = re.search(r"python (examples/\S+\.py)", _blocks("bash")[0])[1]
  assert (_ROOT / script).is_file()


def test_every_python_block_runs_and_prints_what_it_shows(tmp_path):
  blocks = [b for b in _blocks("python") if _EXPORT_SNIPPET not in b]
  assert len(blocks) >= 4
  first, rest = blocks[0], blocks[1:]
  code, bad_call = first.split("\nmodel(tf.zeros([8, 65]))")
  namespace: dict = {}
  cwd = os.getcwd()
  os.chdir(tmp_path)
  try:
    exec(code, namespace)  # pylint: disable=exec-used
    # The variable names, in the order the code gives them.
    names = [v.name for v in namespace["model"].trainable_variables]
    shown = re.findall(r"'([^']+)'", re.search(r"# \[(.*), \.\.\.\]",
                                               code)[1])
    assert names[:len(shown)] == shown
    kind, expected = re.search(r"# ([\w.]+): (.*)", bad_call).groups()
    with pytest.raises(ValueError) as info:  # InputShapeError is one.
      exec("model(tf.zeros([8, 65]))", namespace)  # pylint: disable=exec-used
    assert f"{type(info.value).__module__}.{type(info.value).__name__}" == kind
    assert str(info.value) == expected
    for block in rest:
      printed = io.StringIO()
      with contextlib.redirect_stdout(printed):
        exec(block, namespace)  # pylint: disable=exec-used
      assert printed.getvalue().splitlines() == _shown_output(block), block
  finally:
    os.chdir(cwd)


def test_the_export_snippet_is_in_the_readme():
  assert any(_EXPORT_SNIPPET in b for b in _blocks("python"))
