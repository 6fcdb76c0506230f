"""Digests of every row of the scenario table after a short run, to show a
refactoring changed no weight: run it on two commits and compare.

Each row of `tests/scenario_table.py` (the tiny seeded instances the
cross-cutting tests train) is trained for its 12 steps, with one step per
call and with 4 (the traced loop), and with the per-call NaN check where
the row allows it; the rows that run on two replicas also run under a
`MirroredStrategy` of the two logical CPUs `conftest.py` makes. The printed
line per run is a SHA-256 of every variable of its state (models,
optimizers' slots, EMAs, gradient sums, loss scale, the generator):

    python benchmarks/bitwise_rows.py > new.txt
    git worktree add /tmp/base <commit>
    (cd /tmp/base && PYTHONPATH=/tmp/base python benchmarks/bitwise_rows.py) > old.txt
    diff old.txt new.txt    # empty: bitwise equal

(`benchmarks/bitwise_rows.py` may not exist on the old commit: copy it.)
"""

import hashlib
import os
import sys

sys.path.insert(0, os.getcwd())
import conftest  # noqa: E402,F401  Two logical CPUs, as the tests have.
import tensorflow as tf  # noqa: E402

from tests import scenario_table  # noqa: E402

VARIANTS = {
    "one step per call": dict(steps_per_call=1),
    "4 steps per call": dict(steps_per_call=4),
    "per-call check": dict(steps_per_call=4, nonfinite_check="call"),
    "clipped": dict(clip_norm=0.05),
}


def digest(scenario) -> str:
  hasher = hashlib.sha256()
  for array in scenario_table.state_arrays(scenario):
    hasher.update(array.tobytes())
  return hasher.hexdigest()[:16]


def main() -> None:
  import sonnet_like  # pylint: disable=import-outside-toplevel
  print(f"# sonnet_like from {os.path.dirname(sonnet_like.__file__)}",
        file=sys.stderr)
  mirrored = tf.distribute.MirroredStrategy(["CPU:0", "CPU:1"])
  for row in scenario_table.ROWS:
    for name, loop in VARIANTS.items():
      try:
        result = digest(scenario_table.train(row, **loop))
      except ValueError as e:  # A setting the row's scenario refuses.
        result = f"refused: {str(e)[:60]}"
      print(f"{row.name:28s} {name:20s} {result}", flush=True)
    if row.multi_replica:
      scenario = scenario_table.train(row, strategy=mirrored)
      print(f"{row.name:28s} {'mirrored':20s} {digest(scenario)}", flush=True)


if __name__ == "__main__":
  main()
