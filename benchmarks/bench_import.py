"""Import time: `import sonnet_like` against `import tensorflow` alone.

Each measurement is a new process that times its own import; the two
alternate, and the medians are compared. sonnet_like imports TensorFlow,
so the ratio is what the package adds (issue 46 keeps it at ~1.0x).

    python benchmarks/bench_import.py --rounds 9
"""

import argparse
import os
import statistics
import subprocess
import sys

_TIMED = ("import time; t = time.perf_counter(); import {module}; "
          "print(time.perf_counter() - t)")


def _seconds(module: str) -> float:
  out = subprocess.run([sys.executable, "-c", _TIMED.format(module=module)],
                       check=True, capture_output=True, text=True,
                       env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
  return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
  parser = argparse.ArgumentParser()
  parser.add_argument("--rounds", type=int, default=7)
  rounds = parser.parse_args().rounds
  times = {"tensorflow": [], "sonnet_like": []}
  for _ in range(rounds):
    for module, seconds in times.items():
      seconds.append(_seconds(module))
  tf_s, snt_s = (statistics.median(times[m]) for m in times)
  print(f"import tensorflow   {tf_s:.2f} s (median of {rounds})")
  print(f"import sonnet_like  {snt_s:.2f} s")
  print(f"ratio               {snt_s / tf_s:.2f}x")


if __name__ == "__main__":
  main()
