"""A population on gymnasium environments against one solo run, one process.

Trains `--seeds` seeds of a recipe (default SAC on HalfCheetah-v5) as one
population, each member stepping its own copy of the gymnasium
environment, then the solo run of each of the first `--solo` seeds, and
prints the wall times (tracing included), the population's time over one
solo run's, and how far each checked member's weights are from its solo
run's (float rounding, which MuJoCo's dynamics grow over a budget):

    python benchmarks/population_gym.py --seeds 10 --steps 30000
    python benchmarks/population_gym.py --algo PPO --task CartPole-v1 \
        --seeds 4 --steps 20000 --solo 4

Run it on an otherwise idle machine (`uptime` before and after).
"""

import argparse
import time

import numpy as np

import sonnet_like as snt


def train(args, evaluate: bool = True, **settings):
  """(the trained scenario, its seconds). Timed from the call to its end,
  which (`evaluate`) includes the scenario's greedy evaluation after the
  last step, of every member; without, the scenario trains on an
  environment made here (an instance: no evaluation environment), the
  same training."""
  recipe = getattr(snt.scenarios, args.algo).recipe(args.task)
  extra = {}
  if args.learning_starts is not None:
    extra["learning_starts"] = args.learning_starts
  scenario = recipe.scenario(num_env_steps=args.steps, progress=False,
                             eval_every=None, **extra, **settings)
  networks = (recipe.networks() if args.algo != "DQN"
              else (recipe.q_network(),))
  start = time.perf_counter()
  env = args.task if evaluate else snt.envs.make(args.task)
  scenario(*networks, recipe.optimizer(), env=env)
  return scenario, time.perf_counter() - start


def weights(models):
  if not isinstance(models, dict):
    models = {"model": models}
  return [v.numpy() for model in models.values()
          for v in model.trainable_variables]


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--algo", default="SAC")
  parser.add_argument("--task", default="HalfCheetah-v5")
  parser.add_argument("--seeds", type=int, default=10)
  parser.add_argument("--steps", type=int, default=30_000)
  parser.add_argument("--learning_starts", type=int, default=None)
  parser.add_argument("--solo", type=int, default=1,
                      help="solo runs of the first seeds to time and compare")
  args = parser.parse_args()
  population, population_time = train(args,
                                      population=list(range(args.seeds)))
  print(f"{args.algo} {args.task}, {args.steps} env steps: population of "
        f"{args.seeds}: {population_time:.1f} s", flush=True)
  solo_times = []
  for seed in range(args.solo):
    solo, seconds = train(args, seed=seed)
    solo_times.append(seconds)
    gap = max(float(np.abs(a - b).max()) for a, b in zip(
        weights(population.member(seed)), weights(solo.models())))
    print(f"  solo seed {seed}: {seconds:.1f} s; member {seed}'s weights "
          f"within {gap:.3g} of it", flush=True)
  solo_time = float(np.mean(solo_times))
  print(f"population / one solo run: {population_time / solo_time:.2f}x "
        f"({args.seeds} seeds; {args.seeds * solo_time / population_time:.2f}"
        "x faster than the solo runs one after another)")


if __name__ == "__main__":
  main()
