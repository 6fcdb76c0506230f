"""Pendulum-v1: in-graph env steps per second, and PPO/SAC time to -200.

Part 1 (fast), as bench_envs.py does for CartPole, in one process and in
interleaved rounds, for N environments:

  (a) gymnasium: `gym.make_vec("Pendulum-v1", num_envs=N,
      vectorization_mode="sync")`, random torques drawn by NumPy;
  (b) snt.envs.Pendulum(num_envs=N) stepped inside one compiled
      `tf.while_loop` with XLA (`jit_compile=True`), `--steps` per call;
  (c) the same loop without XLA.

Prints median environment steps per second and the ratios to (a).

Part 2 (`--train`, minutes): PPO and SAC with their recipes
(`snt.scenarios.PPO.recipe("Pendulum-v1")`, `SAC.recipe(...)`) on
gymnasium's Pendulum-v1 and on the in-graph one, evaluating the greedy
policy over 20 episodes every `--eval_every_steps` env steps and stopping at
the first evaluation >= -200. Prints the wall time (tracing and evaluation
included) and env steps to get there, and the gymnasium / in-graph ratio.
Run it on an otherwise idle machine (2 cores here).

    python benchmarks/bench_pendulum.py [--steps 1000] [--rounds 5]
    python benchmarks/bench_pendulum.py --train [--seed 0]
"""

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import gymnasium as gym  # pylint: disable=g-import-not-at-top
import numpy as np  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import sonnet_like as snt  # pylint: disable=g-import-not-at-top

SOLVED = -200.0


def gymnasium_runner(num_envs, steps):
  envs = gym.make_vec("Pendulum-v1", num_envs=num_envs,
                      vectorization_mode="sync")
  envs.reset(seed=0)
  rng = np.random.default_rng(0)

  def run():
    for _ in range(steps):
      envs.step(rng.uniform(-2.0, 2.0, (num_envs, 1)).astype(np.float32))
  return run


def in_graph_runner(num_envs, steps, jit_compile):
  env = snt.envs.Pendulum(num_envs, seed=0)
  actions = tf.random.Generator.from_seed(1)

  @tf.function(jit_compile=jit_compile)
  def loop():
    def body(t, total):
      action = actions.uniform([num_envs, 1], -2.0, 2.0)
      return t + 1, total + tf.reduce_sum(env.step(action).reward)
    return tf.while_loop(lambda t, _: t < steps, body,
                         (tf.constant(0), tf.constant(0.0)))[1]

  loop().numpy()  # Compiles.
  return lambda: loop().numpy()


def env_steps(args):
  print(f"{args.steps} steps per call, {args.rounds} interleaved rounds, "
        f"median environment steps/s")
  print(f"{'N':>5} {'gymnasium':>12} {'in-graph XLA':>13} {'ratio':>7} "
        f"{'in-graph tf.function':>21} {'ratio':>7}")
  for n in args.num_envs:
    contenders = {"gym": gymnasium_runner(n, args.steps),
                  "xla": in_graph_runner(n, args.steps, True),
                  "fn": in_graph_runner(n, args.steps, False)}
    seconds = {name: [] for name in contenders}
    for _ in range(args.rounds):
      for name, run in contenders.items():
        start = time.perf_counter()
        run()
        seconds[name].append(time.perf_counter() - start)
    rate = {name: n * args.steps / statistics.median(values)
            for name, values in seconds.items()}
    print(f"{n:>5} {rate['gym']:>12,.0f} {rate['xla']:>13,.0f} "
          f"{rate['xla'] / rate['gym']:>6.1f}x {rate['fn']:>21,.0f} "
          f"{rate['fn'] / rate['gym']:>6.1f}x", flush=True)


class StopWhenSolved(snt.scenarios.Hook):
  """Stops at the first evaluation >= SOLVED; records when."""

  def __init__(self, start, env_steps_per_step):
    self.start, self.per_step = start, env_steps_per_step
    self.solved = None

  def eval_end(self, scenario, step, metrics):
    if self.solved is None and metrics["return"] >= SOLVED:
      self.solved = (time.perf_counter() - self.start, step * self.per_step,
                     metrics["return"])
      scenario.request_stop("solved")


def time_to_solve(name, in_graph, seed, eval_every_steps):
  """(seconds, env steps, return) at the first solved evaluation, or None."""
  scenario_type = getattr(snt.scenarios, name)
  recipe = scenario_type.recipe("Pendulum-v1")
  tf.random.set_seed(seed)
  num_envs = recipe.settings.get("num_envs", 1)
  per_step = (num_envs * recipe.settings["rollout_length"] if name == "PPO"
              else num_envs)
  start = time.perf_counter()
  hook = StopWhenSolved(start, per_step)
  loop = dict(seed=seed, eval_episodes=20, progress=False, hooks=[hook],
              eval_every=max(1, eval_every_steps // per_step))
  if name == "SAC":
    loop["steps_per_call"] = 100
  scenario = recipe.scenario(**loop)
  env = snt.envs.make("Pendulum-v1", num_envs=num_envs, seed=seed,
                      in_graph=in_graph)
  eval_env = snt.envs.make("Pendulum-v1", num_envs=20, seed=seed + 1,
                           in_graph=in_graph)
  actor, critic = recipe.networks()
  history = scenario(actor, critic, recipe.optimizer(), env,
                     eval_env=eval_env)
  last = history.eval["return"][-1]
  return hook.solved, time.perf_counter() - start, last


def training(args):
  print(f"Time to a greedy mean return >= {SOLVED:.0f} (20 episodes), "
        f"seed {args.seed}")
  for name in ("SAC", "PPO"):
    results = {}
    for in_graph in (False, True):
      solved, seconds, last = time_to_solve(name, in_graph, args.seed,
                                            args.eval_every_steps[name])
      where = "in-graph" if in_graph else "gymnasium"
      results[where] = solved
      if solved:
        print(f"{name:>4} {where:>9}: {solved[0]:7.1f} s, {solved[1]:>7,} "
              f"env steps (return {solved[2]:.1f})", flush=True)
      else:
        print(f"{name:>4} {where:>9}: not solved within the recipe's steps "
              f"({seconds:.0f} s; last return {last:.1f})", flush=True)
    if all(results.values()):
      print(f"{name:>4} gymnasium / in-graph wall time: "
            f"{results['gymnasium'][0] / results['in-graph'][0]:.1f}x")


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--steps", type=int, default=1000)
  parser.add_argument("--rounds", type=int, default=5)
  parser.add_argument("--num_envs", type=int, nargs="+", default=[1, 8, 64])
  parser.add_argument("--train", action="store_true")
  parser.add_argument("--seed", type=int, default=0)
  args = parser.parse_args()
  if args.train:
    args.eval_every_steps = {"PPO": 10_240, "SAC": 2_500}
    training(args)
  else:
    env_steps(args)


if __name__ == "__main__":
  main()
