"""Resident memory of a population on gymnasium environments, by size.

Trains each `--members` count of a recipe (default SAC on HalfCheetah-v5,
its 1M-row replay buffer) for `--steps` steps as one population (1: the
solo run of seed 0), each in a fresh process (a process's resident size
does not shrink when TensorFlow frees memory), and prints its peak and
final resident size (`/proc/self/status`: VmHWM, VmRSS) beside what the
members' replay buffers take once (rows x floats a transition x 4 bytes):

    python benchmarks/population_memory.py                 # 1 and 10
    python benchmarks/population_memory.py --members 1 4 16

Linux only (`/proc`).
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")


def _status() -> dict[str, float]:
  """VmHWM and VmRSS of this process, in GB."""
  found = {}
  with open("/proc/self/status") as status:
    for line in status:
      key, _, value = line.partition(":")
      if key in ("VmHWM", "VmRSS"):
        found[key] = int(value.split()[0]) / 1e6
  return found


def run_one(args) -> dict[str, float]:
  """Trains one configuration here; its memory and its buffers' size."""
  sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
  import population_gym  # pylint: disable=import-outside-toplevel

  import sonnet_like as snt  # pylint: disable=import-outside-toplevel

  who = (dict(population=list(range(args.one))) if args.one > 1
         else dict(seed=0))
  scenario, _ = population_gym.train(argparse.Namespace(
      algo=args.algo, task=args.task, steps=args.steps,
      learning_starts=args.learning_starts), evaluate=False, **who)
  env = snt.envs.make(args.task)
  observation = env.observation_spec
  # Observation and next observation, action, float reward, bool end.
  row = (2 * observation.shape.num_elements() * observation.dtype.size +
         int(np.prod(env.action_space.shape)) * 4 + 4 + 1)
  return dict(_status(), buffers=scenario.buffer_size * row * args.one / 1e9)


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--algo", default="SAC")
  parser.add_argument("--task", default="HalfCheetah-v5")
  parser.add_argument("--members", type=int, nargs="+", default=[1, 10])
  parser.add_argument("--steps", type=int, default=1_100)
  parser.add_argument("--learning_starts", type=int, default=1_000)
  parser.add_argument("--one", type=int, default=0, help=argparse.SUPPRESS)
  args = parser.parse_args()
  if args.one:
    print(json.dumps(run_one(args)))
    return
  print(f"{args.algo} {args.task}, {args.steps} steps "
        f"(learning from {args.learning_starts})")
  print("| members | peak resident | final resident | replay buffers "
        "(held once) |\n|---|---|---|---|")
  for count in args.members:
    out = subprocess.run(
        [sys.executable, __file__, "--one", str(count), "--algo", args.algo,
         "--task", args.task, "--steps", str(args.steps),
         "--learning_starts", str(args.learning_starts)],
        check=True, capture_output=True, text=True).stdout
    found = json.loads(out.strip().splitlines()[-1])
    print(f"| {count} | {found['VmHWM']:.2f} GB | {found['VmRSS']:.2f} GB | "
          f"{found['buffers']:.2f} GB |", flush=True)


if __name__ == "__main__":
  main()
