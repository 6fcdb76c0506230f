"""Only the population knows members: the files outside
`sonnet_like/scenarios/population/` whose code (identifiers, not comments
or strings) names members or populations are the public surface's.

    python tests/test_population_seam.py    # prints the files and names
"""

import collections
import io
import os
import re
import tokenize

_PACKAGE = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "sonnet_like")

_WORDS = {"member", "members", "population", "populations"}

# The public `population=` argument and `Population` (the engine and the
# package's exports), the stacked export, the history and the summaries.
ALLOWED = {
    "scenarios/engine.py", "scenarios/__init__.py", "export/stacked.py",
    "scenarios/run_folder/history.py", "scenarios/reporting/logs.py",
    "scenarios/reporting/distribution.py",
}


def _words(identifier):
  """`MemberMetrics` -> member, metrics; `_add_members` -> add, members."""
  spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", identifier)
  return [w.lower() for w in spaced.split("_") if w]


def naming_files():
  """{file (relative to the package): Counter of the names that say
  member or population}, outside `scenarios/population/`."""
  found = {}
  for parent, _, names in os.walk(_PACKAGE):
    for name in sorted(names):
      path = os.path.join(parent, name)
      relative = os.path.relpath(path, _PACKAGE).replace(os.sep, "/")
      if not name.endswith(".py") or relative.startswith(
          "scenarios/population/"):
        continue
      with open(path, encoding="utf-8") as source:
        tokens = tokenize.generate_tokens(io.StringIO(source.read()).readline)
        counted = collections.Counter(
            t.string for t in tokens if t.type == tokenize.NAME
            and _WORDS.intersection(_words(t.string)))
      if counted:
        found[relative] = counted
  return found


def test_the_words_are_split_as_written():
  assert _words("MemberMetrics") == ["member", "metrics"]
  assert _words("_add_members") == ["add", "members"]
  assert not _WORDS.intersection(_words("_remember_parameters"))


def test_only_the_public_surface_names_members_outside_population():
  found = naming_files()
  assert set(found) <= ALLOWED, {f: dict(found[f])
                                 for f in set(found) - ALLOWED}
  assert len(ALLOWED) <= 6


if __name__ == "__main__":
  files = naming_files()
  for file, names in sorted(files.items()):
    print(f"{sum(names.values()):4d}  {file}  {dict(names.most_common(4))}")
  print(f"{len(files)} files outside scenarios/population/ name members or "
        "populations.")
