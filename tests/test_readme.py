"""The README's commands and example stay true."""

import pathlib
import re

import pytest

_ROOT = pathlib.Path(__file__).parent.parent
_README = (_ROOT / "README.md").read_text()


def _blocks(language: str) -> list[str]:
  return re.findall(rf"```{language}\n(.*?)```", _README, re.S)


def test_ci_runs_the_readme_test_command():
  commands = [b.strip() for b in _blocks("bash")]
  assert len(commands) == 2, "The README gives exactly two commands."
  ci_lines = (_ROOT / ".ci" / "run").read_text().strip().splitlines()
  assert ci_lines[-1].strip() == commands[1]


def test_main_job_script_exists():
  script = re.search(r"python (examples/\S+\.py)", _blocks("bash")[0])[1]
  assert (_ROOT / script).is_file()


def test_short_example_runs_and_its_error_is_as_shown():
  example = _blocks("python")[0]
  code, bad_call = example.split("\nmodel(tf.zeros([8, 65]))")
  namespace = {}
  exec(code, namespace)  # pylint: disable=exec-used
  names = [v.name for v in namespace["model"].trainable_variables]
  shown = re.search(r"# \[(.*), \.\.\.\]", code)[1]
  for name in re.findall(r"'([^']+)'", shown):
    assert name in names
  expected = re.search(r"# ValueError: (.*)", bad_call)[1]
  with pytest.raises(ValueError) as info:
    exec("model(tf.zeros([8, 65]))", namespace)  # pylint: disable=exec-used
  assert str(info.value) == expected
