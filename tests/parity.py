"""How much of what dm-sonnet 2.0.2 does sonnet_like does the same way.

Run from the worktree root (dm-sonnet installed):

    python -m tests.parity            # side-by-side checks only
    python -m tests.parity --all      # and every public signature
    python -m tests.parity -n 2       # extra arguments go to pytest

It runs `tests/test_side_by_side.py` and `tests/test_sonnet_outside.py` (the
outside probe; with `--all` also `tests/test_signatures.py`) and counts each
test item as one check:

- agrees: the item passed and is not a deliberate difference;
- differs: the item is a deliberate difference (named in a table of
  `tests/error_cases.py`, `KNOWN_GAPS`, `SONNET_FAILS`, `ROWS_ON_PURPOSE`,
  `test_sonnet_outside`'s `ON_PURPOSE`, `SONNET_FAILS`, `OURS_ONLY`,
  `OTHER_ERROR`,
  `test_signatures.DIFFERENCES`, or a
  test whose name ends in `differs_on_purpose`), an expected failure, or a
  failure;
- not measured: skipped (dm-sonnet 2.0.2 cannot run that row here) and the
  tests that only check the tables themselves.

It prints the differing checks with the reason and the rates: overall, on
valid use, and on mistakes (`test_same_error_as_dm_sonnet` and
`test_mistake_like_dm_sonnet`: the same misuse made with both libraries).
Valid code that dm-sonnet 2.0.2 itself cannot run (the `SONNET_FAILS`
tables; ours runs it) counts as a difference; the rate on valid use without
those checks is printed too.
"""

import collections
import re
import sys

import pytest

from tests import error_cases

_SIDE_BY_SIDE = "tests/test_side_by_side.py"
_OUTSIDE = "tests/test_sonnet_outside.py"
_SIGNATURES = "tests/test_signatures.py"
_TABLE_TESTS = ("test_known_gaps_name_rows", "test_error_tables_name_cases",
                "test_walk_covers_the_api", "test_differences_are_explained",
                "test_probe_tables_name_probes")
_MISTAKE_TESTS = ("test_same_error_as_dm_sonnet", "test_mistake_like_dm_sonnet")


def _deliberate() -> dict[str, str]:
  """Error-case or row name -> reason, for the differences kept on purpose."""
  from tests import test_side_by_side  # pylint: disable=g-import-not-at-top
  from tests import test_signatures  # pylint: disable=g-import-not-at-top
  from tests import test_sonnet_outside  # pylint: disable=g-import-not-at-top
  reasons = {}
  for table in (test_sonnet_outside.ON_PURPOSE,
                test_sonnet_outside.SONNET_FAILS,
                test_sonnet_outside.OURS_ONLY,
                test_sonnet_outside.OTHER_ERROR):
    reasons.update(table)
  for table in (error_cases.EARLIER, error_cases.OURS_ONLY,
                error_cases.OTHER_TYPE, error_cases.SONNET_ONLY):
    reasons.update(table)
  reasons.update(test_side_by_side.KNOWN_GAPS)
  reasons.update(test_side_by_side.SONNET_FAILS)
  reasons.update(test_side_by_side.ROWS_ON_PURPOSE)
  for (qualified, method), reason in test_signatures.DIFFERENCES.items():
    reasons[f"{qualified}.{method}" if method else qualified] = reason
  return reasons


class _Counter:
  """A pytest plugin that sorts each test item into agrees/differs/skipped."""

  def __init__(self):
    self.outcomes: dict[str, str] = {}
    self.reasons: dict[str, str] = {}

  def pytest_runtest_logreport(self, report):
    nodeid = report.nodeid
    if report.when == "call" or (report.when == "setup" and
                                 (report.skipped or report.failed)):
      if hasattr(report, "wasxfail"):
        self.outcomes[nodeid] = "xfail"
      else:
        self.outcomes[nodeid] = report.outcome


def _classify(nodeid: str, outcome: str, deliberate: dict[str, str]):
  function = nodeid.split("::")[-1]
  base, _, param = function.partition("[")
  param = param.rstrip("]")
  if base in _TABLE_TESTS:
    return "not measured", ""
  if outcome == "skipped":
    return "not measured", "skipped"
  if outcome == "failed":
    return "differs", "FAILED (an unexplained difference)"
  if outcome == "xfail":
    return "differs", deliberate.get(param, "known gap")
  if param in deliberate:
    return "differs", deliberate[param]
  if base.endswith("differs_on_purpose"):
    return "differs", "a measured, deliberate difference (see its docstring)"
  return "agrees", ""


def _sonnet_fails() -> set[str]:
  """Checks of valid code that dm-sonnet 2.0.2 itself cannot run."""
  from tests import test_side_by_side  # pylint: disable=g-import-not-at-top
  from tests import test_sonnet_outside  # pylint: disable=g-import-not-at-top
  return set(test_side_by_side.SONNET_FAILS) | set(
      test_sonnet_outside.SONNET_FAILS)


def main(argv: list[str]) -> int:
  files = [_SIDE_BY_SIDE, _OUTSIDE]
  if "--all" in argv:
    argv = [a for a in argv if a != "--all"]
    files.append(_SIGNATURES)
  counter = _Counter()
  pytest.main(["-q", "-p", "no:cacheprovider", "--no-header", "-rN",
               *files, *argv], plugins=[counter])
  deliberate = _deliberate()
  sonnet_fails = _sonnet_fails()
  totals = collections.Counter()
  by_kind = collections.defaultdict(collections.Counter)
  by_test = collections.defaultdict(collections.Counter)
  differing = []
  for nodeid, outcome in sorted(counter.outcomes.items()):
    verdict, reason = _classify(nodeid, outcome, deliberate)
    totals[verdict] += 1
    test = nodeid.split("::")[-1].partition("[")[0]
    kind = "mistakes" if test in _MISTAKE_TESTS else "valid use"
    by_kind[kind][verdict] += 1
    if kind == "valid use" and nodeid.partition("[")[2][:-1] in sonnet_fails:
      by_kind["dm-sonnet fails"][verdict] += 1
    by_test[test][verdict] += 1
    if verdict == "differs":
      differing.append((re.sub(r"^tests/", "", nodeid), reason))
  print("\nDiffering checks:")
  for nodeid, reason in differing:
    print(f"  {nodeid}: {reason}")
  print("\nBy test (agree / measured):")
  for name, counts in sorted(by_test.items()):
    if counts["agrees"] + counts["differs"]:
      print(f"  {name}: {counts['agrees']} / "
            f"{counts['agrees'] + counts['differs']}")
  print()
  for kind in ("valid use", "mistakes"):
    counts = by_kind[kind]
    measured = counts["agrees"] + counts["differs"]
    print(f"{kind}: {counts['agrees']} of {measured} agree "
          f"({100. * counts['agrees'] / max(measured, 1):.1f}%)")
  fails = by_kind["dm-sonnet fails"]["differs"]
  counts = by_kind["valid use"]
  measured = counts["agrees"] + counts["differs"] - fails
  print(f"valid use that dm-sonnet 2.0.2 can run (without the {fails} "
        f"SONNET_FAILS checks): {counts['agrees']} of {measured} agree "
        f"({100. * counts['agrees'] / max(measured, 1):.1f}%)")
  measured = totals["agrees"] + totals["differs"]
  rate = 100. * totals["agrees"] / max(measured, 1)
  print(f"\nagrees {totals['agrees']}, differs {totals['differs']}, "
        f"not measured {totals['not measured']}: "
        f"{rate:.1f}% of {measured} checks agree")
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
