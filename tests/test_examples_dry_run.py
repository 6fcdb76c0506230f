"""Every example script takes --dry_run and hands it on (issue 27).

The examples' dry runs themselves take 10-60 s each, too long for the
suite: BUILD_NOTES ("Profiling, best model, dry run") gives the measured
runs; tests/scenarios/test_digits_supervised.py runs one.
"""

import pathlib

import pytest

_EXAMPLES = sorted(p for p in (pathlib.Path(__file__).parent.parent /
                               "examples").glob("*.py")
                   if not p.name.startswith("_"))


def test_there_are_examples():
  assert len(_EXAMPLES) >= 12


@pytest.mark.parametrize("path", _EXAMPLES, ids=[p.stem for p in _EXAMPLES])
def test_the_example_takes_dry_run_and_uses_it(path):
  source = path.read_text()
  assert 'parser.add_argument("--dry_run", action="store_true"' in source
  assert "args.dry_run" in source
