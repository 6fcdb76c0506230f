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
(`snt.scenarios.PPO.recipe("Pendulum-v1")`, `SAC.recipe(...)`), each run
whole on gymnasium's Pendulum-v1 and on the in-graph one (and with `--xla`
in-graph under XLA), with the same settings, seeds and evaluation cadence
(the greedy policy over 20 episodes every `--eval_every_steps` env steps,
in an evaluation environment of the same kind). Prints each run's wall time
(tracing and evaluation included), when it first reached -200, its curve,
and the gymnasium / in-graph wall-time ratios (whole run, and to the first
-200 when both got there). Run it on an otherwise idle machine (2 cores
here).

    python benchmarks/bench_pendulum.py [--steps 1000] [--rounds 5]
    python benchmarks/bench_pendulum.py --train [--seeds 0 1] [--xla]
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


class Curve(snt.scenarios.Hook):
  """Records every evaluation: (seconds since `start`, env steps, return)."""

  def __init__(self, start, env_steps_per_step):
    self.start, self.per_step = start, env_steps_per_step
    self.points = []

  def eval_end(self, scenario, step, metrics):
    self.points.append((time.perf_counter() - self.start,
                        step * self.per_step, metrics["return"]))

  @property
  def solved(self):
    """The first evaluation >= SOLVED, or None."""
    return next((p for p in self.points if p[2] >= SOLVED), None)


def train_once(name, where, seed, eval_every_steps):
  """One whole run of `name`'s recipe; returns (total seconds, Curve)."""
  scenario_type = getattr(snt.scenarios, name)
  recipe = scenario_type.recipe("Pendulum-v1")
  tf.random.set_seed(seed)
  num_envs = recipe.settings.get("num_envs", 1)
  per_step = (num_envs * recipe.settings["rollout_length"] if name == "PPO"
              else num_envs)
  start = time.perf_counter()
  curve = Curve(start, per_step)
  loop = dict(seed=seed, eval_episodes=20, progress=False, hooks=[curve],
              eval_every=max(1, eval_every_steps // per_step),
              jit_compile=where == "in-graph XLA")
  if name == "SAC":
    loop["steps_per_call"] = 100
  scenario = recipe.scenario(**loop)
  in_graph = where != "gymnasium"
  env = snt.envs.make("Pendulum-v1", num_envs=num_envs, seed=seed,
                      in_graph=in_graph)
  eval_env = snt.envs.make("Pendulum-v1", num_envs=20, seed=seed + 1,
                           in_graph=in_graph)
  actor, critic = recipe.networks()
  scenario(actor, critic, recipe.optimizer(), env, eval_env=eval_env)
  return time.perf_counter() - start, curve


def training(args):
  print(f"Whole recipe runs, greedy mean return over 20 episodes every "
        f"{args.eval_every_steps} env steps (PPO) / {args.sac_eval_every} "
        f"(SAC); seconds include tracing and evaluation.")
  wheres = ["gymnasium", "in-graph"] + (["in-graph XLA"] if args.xla else [])
  for name in args.scenarios:
    every = args.eval_every_steps if name == "PPO" else args.sac_eval_every
    for seed in args.seeds:
      total = {}
      solved = {}
      for where in wheres:
        seconds, curve = train_once(name, where, seed, every)
        total[where], solved[where] = seconds, curve.solved
        first = (f"first >= {SOLVED:.0f} at {curve.solved[1]:>7,} steps, "
                 f"{curve.solved[0]:6.1f} s" if curve.solved
                 else f"never >= {SOLVED:.0f}")
        returns = " ".join(f"{p[2]:.0f}" for p in curve.points)
        print(f"{name} seed {seed} {where:>12}: {seconds:6.1f} s in all, "
              f"{first}; final {curve.points[-1][2]:.1f}; curve [{returns}]",
              flush=True)
      for where in wheres[1:]:
        ratio = total["gymnasium"] / total[where]
        line = (f"{name} seed {seed}: gymnasium / {where} wall time "
                f"{ratio:.2f}x (whole run)")
        if solved["gymnasium"] and solved[where]:
          line += (f", {solved['gymnasium'][0] / solved[where][0]:.2f}x "
                   f"(to the first >= {SOLVED:.0f})")
        print(line, flush=True)


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--steps", type=int, default=1000)
  parser.add_argument("--rounds", type=int, default=5)
  parser.add_argument("--num_envs", type=int, nargs="+", default=[1, 8, 64])
  parser.add_argument("--train", action="store_true")
  parser.add_argument("--seeds", type=int, nargs="+", default=[0])
  parser.add_argument("--scenarios", nargs="+", default=["PPO", "SAC"])
  parser.add_argument("--eval_every_steps", type=int, default=16_384,
                      help="PPO: env steps between evaluations")
  parser.add_argument("--sac_eval_every", type=int, default=2_500,
                      help="SAC: env steps between evaluations")
  parser.add_argument("--xla", action="store_true",
                      help="also train in-graph with jit_compile=True")
  args = parser.parse_args()
  if args.train:
    training(args)
  else:
    env_steps(args)


if __name__ == "__main__":
  main()
