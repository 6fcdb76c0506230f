"""SAC HalfCheetah-v5 alone, timed at 1 and 100 steps a call under each
NaN check (`nonfinite_check`), one process: what "auto" chooses and what
each choice costs where a call's check would copy a 1M-row replay buffer.

    python benchmarks/bench_nonfinite_check.py             # 30k steps
    python benchmarks/bench_nonfinite_check.py --steps 3000  # a smoke run

Each run: seed 0, the recipe with `learning_starts` 1,000, timed from the
scenario's call to its end (making and tracing included), no evaluation.
Run it on an otherwise idle machine.
"""

import argparse
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import sonnet_like as snt  # noqa: E402

RUNS = ((1, "auto"), (100, "call"), (100, "step"), (100, "auto"))


def timed(steps: int, steps_per_call: int, check: str) -> tuple[float, bool]:
  """(seconds, whether it checked per call)."""
  recipe = snt.scenarios.SAC.recipe("HalfCheetah-v5")
  scenario = recipe.scenario(num_env_steps=steps, learning_starts=1000,
                             steps_per_call=steps_per_call,
                             nonfinite_check=check, seed=0, progress=False,
                             eval_every=None)
  start = time.perf_counter()
  scenario(*recipe.networks(), recipe.optimizer(),
           env=snt.envs.make("HalfCheetah-v5"))
  return time.perf_counter() - start, scenario.checks_per_call


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--steps", type=int, default=30_000)
  args = parser.parse_args()
  print(f"# load before: {os.getloadavg()}")
  print(f"SAC HalfCheetah-v5, seed 0, {args.steps} steps")
  print("| steps_per_call | nonfinite_check | checked | seconds |")
  print("|---|---|---|---|")
  for steps_per_call, check in RUNS:
    seconds, per_call = timed(args.steps, steps_per_call, check)
    print(f"| {steps_per_call} | {check} | "
          f"{'per call' if per_call else 'per step'} | {seconds:.1f} |",
          flush=True)
  print(f"# load after: {os.getloadavg()}")


if __name__ == "__main__":
  main()
