"""Environment steps per second: in-graph CartPole against gymnasium's.

For N environments (8, 64, 512), in one process and in interleaved rounds:

  (a) gymnasium: `gym.make_vec("CartPole-v1", num_envs=N,
      vectorization_mode="sync")` (a SyncVectorEnv), stepped from Python with
      random actions drawn by NumPy;
  (b) snt.envs.CartPole(num_envs=N) stepped inside one compiled
      `tf.while_loop` (`tf.function(jit_compile=True)`), random actions from
      a `tf.random.Generator`, `--steps` steps per call;
  (c) the same loop without XLA (plain `tf.function`).

Compiling happens before the rounds (a warm-up call) and is reported apart.
Prints median environment steps per second (N * steps / s) and the ratio of
(b) and (c) to (a); the goal for (b) is >= 20x.

    python benchmarks/bench_envs.py [--steps 1000] [--rounds 5]
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


def gymnasium_runner(num_envs, steps):
  envs = gym.make_vec("CartPole-v1", num_envs=num_envs,
                      vectorization_mode="sync")
  envs.reset(seed=0)
  rng = np.random.default_rng(0)

  def run():
    for _ in range(steps):
      envs.step(rng.integers(0, 2, num_envs))
  return run


def in_graph_runner(num_envs, steps, jit_compile):
  env = snt.envs.CartPole(num_envs, seed=0)
  actions = tf.random.Generator.from_seed(1)

  @tf.function(jit_compile=jit_compile)
  def loop():
    def body(t, total):
      action = actions.uniform([num_envs], 0, 2, dtype=tf.int32)
      return t + 1, total + tf.reduce_sum(env.step(action).reward)
    return tf.while_loop(lambda t, _: t < steps, body,
                         (tf.constant(0), tf.constant(0.0)))[1]

  start = time.perf_counter()
  loop().numpy()
  compile_seconds = time.perf_counter() - start
  return (lambda: loop().numpy()), compile_seconds


def timed(run):
  start = time.perf_counter()
  run()
  return time.perf_counter() - start


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--steps", type=int, default=1000)
  parser.add_argument("--rounds", type=int, default=5)
  parser.add_argument("--num_envs", type=int, nargs="+", default=[8, 64, 512])
  args = parser.parse_args()
  print(f"{args.steps} steps per call, {args.rounds} interleaved rounds, "
        f"median environment steps/s")
  print(f"{'N':>5} {'gymnasium':>12} {'in-graph XLA':>13} {'ratio':>7} "
        f"{'in-graph tf.function':>21} {'ratio':>7} {'compile s':>10}")
  for n in args.num_envs:
    contenders = {"gym": gymnasium_runner(n, args.steps)}
    contenders["xla"], compile_xla = in_graph_runner(n, args.steps, True)
    contenders["fn"], _ = in_graph_runner(n, args.steps, False)
    seconds = {name: [] for name in contenders}
    for _ in range(args.rounds):
      for name, run in contenders.items():
        seconds[name].append(timed(run))
    rate = {name: n * args.steps / statistics.median(values)
            for name, values in seconds.items()}
    print(f"{n:>5} {rate['gym']:>12,.0f} {rate['xla']:>13,.0f} "
          f"{rate['xla'] / rate['gym']:>6.1f}x {rate['fn']:>21,.0f} "
          f"{rate['fn'] / rate['gym']:>6.1f}x {compile_xla:>10.2f}")


if __name__ == "__main__":
  main()
