"""PPO recipes against rl-baselines3-zoo's published returns, per seed.

Trains `snt.scenarios.PPO.recipe(task)` at its step budget (the zoo's) for
each seed, on gymnasium or on the in-graph environment (optionally under
XLA), then scores the greedy policy over 20 episodes of gymnasium's
environment (reset with seed 1000 + seed) and prints the return and the
wall time of training, then the mean and the worst over the seeds beside
the zoo's number.

    python benchmarks/ppo_recipes.py --task CartPole-v1 --seeds 0 1 2
    python benchmarks/ppo_recipes.py --task Pendulum-v1 --in_graph --xla
    python benchmarks/ppo_recipes.py --task Acrobot-v1 --in_graph --xla \\
        --set num_epochs=4 --seeds 0

`--set name=value` overrides a setting of the recipe (a Python literal),
`--learning_rate` its optimizer's rate: for tuning runs.
"""

import argparse
import ast
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import sonnet_like as snt  # pylint: disable=g-import-not-at-top
from sonnet_like.scenarios.rl import episodes  # pylint: disable=g-import-not-at-top

# rl-baselines3-zoo's benchmark.md (PPO rows): mean return of its one
# trained agent, deterministic, and the step budget it was trained for.
ZOO = {"CartPole-v1": (500.0, 100_000), "Acrobot-v1": (-73.5, 1_000_000),
       "MountainCar-v0": (-110.4, 1_000_000),
       "MountainCarContinuous-v0": (88.3, 20_000),
       "Pendulum-v1": (-172.2, 100_000)}


def greedy_return(task: str, scenario, seed: int, num_episodes: int = 20
                  ) -> float:
  """Greedy mean return over `num_episodes` gymnasium episodes."""
  env = snt.envs.make(task, num_envs=num_episodes, seed=seed)
  runner = episodes.EpisodeRunner(env, scenario.act, num_episodes)
  return float(runner(seed=seed)["return"].mean())


def train(task: str, seed: int, in_graph: bool, xla: bool,
          overrides: dict, learning_rate: float | None):
  """One run; returns (seconds of training, greedy return)."""
  recipe = snt.scenarios.PPO.recipe(task)
  tf.random.set_seed(seed)
  settings = dict(recipe.settings, **overrides)
  ppo = recipe.scenario(seed=seed, progress=False, jit_compile=xla,
                        **overrides)
  env = snt.envs.make(task, num_envs=settings["num_envs"], seed=seed,
                      in_graph=in_graph)
  actor, critic = recipe.networks()
  optimizer = (recipe.optimizer() if learning_rate is None
               else snt.optimizers.Adam(learning_rate))
  start = time.perf_counter()
  ppo(actor, critic, optimizer, env)
  seconds = time.perf_counter() - start
  return seconds, greedy_return(task, ppo, 1000 + seed)


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--task", required=True, choices=sorted(ZOO))
  parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
  parser.add_argument("--in_graph", action="store_true")
  parser.add_argument("--xla", action="store_true",
                      help="jit_compile the rollout and update (in-graph)")
  parser.add_argument("--set", action="append", default=[],
                      metavar="NAME=VALUE")
  parser.add_argument("--learning_rate", type=float, default=None)
  args = parser.parse_args(argv)
  overrides = {}
  for item in args.set:
    name, value = item.split("=", 1)
    overrides[name] = ast.literal_eval(value)
  where = ("in-graph" + (" XLA" if args.xla else "") if args.in_graph
           else "gymnasium")
  zoo_return, zoo_steps = ZOO[args.task]
  results = []
  for seed in args.seeds:
    seconds, score = train(args.task, seed, args.in_graph, args.xla,
                           overrides, args.learning_rate)
    results.append(score)
    print(f"PPO {args.task} {where} seed {seed}: greedy {score:.1f} "
          f"in {seconds:.1f} s", flush=True)
  print(f"PPO {args.task} {where} {overrides or ''}: mean "
        f"{np.mean(results):.1f}, worst {np.min(results):.1f} over seeds "
        f"{args.seeds} (zoo: {zoo_return} at {zoo_steps:,} steps)")
  return results


if __name__ == "__main__":
  main()
