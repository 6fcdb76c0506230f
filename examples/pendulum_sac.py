"""SAC on Pendulum-v1, on gymnasium or on the in-graph TensorFlow Pendulum.

Trains with the documented recipe (`snt.scenarios.SAC.recipe`), evaluating
the greedy policy (the squashed mean) every `--eval_every` steps, then
prints the wall time and the greedy mean return over 20 episodes of
gymnasium's Pendulum-v1 (-200 or better is solved here; random play gets
about -1200). Acting afterwards: `sac.act(observation)`.

    python examples/pendulum_sac.py --steps 30000 --seed 0
    python examples/pendulum_sac.py --steps 30000 --seed 0 --in_graph
"""

import argparse
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import tensorflow as tf  # pylint: disable=g-import-not-at-top

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import sonnet_like as snt  # pylint: disable=g-import-not-at-top
from sonnet_like.scenarios.rl.parts import episodes  # pylint: disable=g-import-not-at-top


class PrintEval(snt.scenarios.Hook):
  def __init__(self, start):
    self.start = start

  def eval_end(self, scenario, step, metrics):
    print(f"step {step}: greedy return {metrics['return']:.0f} "
          f"({time.perf_counter() - self.start:.0f} s)", flush=True)


def greedy_return(scenario, episodes_=20, seed=1000) -> float:
  """Greedy mean return over `episodes_` episodes of gymnasium's env."""
  env = snt.envs.make("Pendulum-v1", num_envs=episodes_, seed=seed)
  runner = episodes.EpisodeRunner(env, scenario.act, episodes_)
  return float(runner(seed=seed)["return"].mean())


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--steps", type=int, default=30_000)
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--in_graph", action="store_true")
  parser.add_argument("--eval_every", type=int, default=5_000)
  parser.add_argument("--steps_per_call", type=int, default=100)
  parser.add_argument("--dry_run", action="store_true",
                      help="check the whole run first, in seconds: a few "
                      "steps, an evaluation, a save, a resume and an export "
                      "in a temporary folder, then stop")
  args = parser.parse_args(argv)
  tf.random.set_seed(args.seed)
  recipe = snt.scenarios.SAC.recipe("Pendulum-v1")
  start = time.perf_counter()
  sac = recipe.scenario(num_env_steps=args.steps, seed=args.seed,
                        eval_every=args.eval_every, eval_episodes=20,
                        steps_per_call=args.steps_per_call, progress=False,
                        hooks=[PrintEval(start)], dry_run=args.dry_run)
  env = snt.envs.make("Pendulum-v1", num_envs=1, seed=args.seed,
                      in_graph=args.in_graph)
  eval_env = snt.envs.make("Pendulum-v1", num_envs=20, seed=args.seed + 1,
                           in_graph=args.in_graph)
  actor, critic = recipe.networks()
  sac(actor, critic, recipe.optimizer(), env, eval_env=eval_env)
  if args.dry_run:
    return None
  seconds = time.perf_counter() - start
  score = greedy_return(sac)
  print(f"SAC Pendulum-v1 ({'in-graph' if args.in_graph else 'gymnasium'}): "
        f"{args.steps} env steps in {seconds:.0f} s; greedy mean return over "
        f"20 gymnasium episodes: {score:.1f}")
  return score


if __name__ == "__main__":
  main()
