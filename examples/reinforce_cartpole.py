"""REINFORCE with a learned baseline on CartPole-v1 (gymnasium or in-graph).

Evaluates the greedy policy over 100 episodes every `--eval_every`
rollouts and stops as soon as the mean return reaches 475; prints the
environment steps and wall time it took and the final score.

    python examples/reinforce_cartpole.py --seed 0 --in_graph
    python examples/reinforce_cartpole.py --seed 0            # gymnasium
"""

import argparse
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sonnet_like as snt  # pylint: disable=g-import-not-at-top
from ppo_cartpole import SOLVED, StopWhenSolved, make_envs  # pylint: disable=g-import-not-at-top


def main():
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--in_graph", action="store_true",
                      help="the TensorFlow CartPole (one compiled call per "
                      "rollout + update)")
  parser.add_argument("--num_env_steps", type=int, default=500_000)
  parser.add_argument("--eval_every", type=int, default=20,
                      help="rollouts between evaluations")
  parser.add_argument("--dry_run", action="store_true",
                      help="check the whole run first, in seconds: a few "
                      "steps, an evaluation, a save, a resume and an export "
                      "in a temporary folder, then stop")
  args = parser.parse_args()

  tf.random.set_seed(args.seed)
  num_envs, rollout_length = 8, 64
  env, eval_env = make_envs(args.in_graph, num_envs, args.seed)
  policy = snt.nets.MLP([64, 64, 2], activation=tf.tanh, name="policy")
  baseline = snt.nets.MLP([64, 64, 1], activation=tf.tanh, name="baseline")
  optimizer = keras.optimizers.Adam(1e-3)

  start = time.perf_counter()
  solved = StopWhenSolved(SOLVED, start)
  reinforce = snt.scenarios.REINFORCE(
      args.num_env_steps, num_envs=num_envs, rollout_length=rollout_length,
      gamma=0.99, baseline_coef=0.5, entropy_coef=0.0,
      eval_every=args.eval_every, eval_episodes=100, log_every=20,
      clip_norm=1.0, seed=args.seed, progress=False, hooks=[solved],
      dry_run=args.dry_run)
  reinforce(policy, baseline, optimizer, env, eval_env=eval_env)
  if args.dry_run:
    return
  total = time.perf_counter() - start
  kind = "in-graph" if args.in_graph else "gymnasium"
  if solved.solved_at:
    steps, seconds = solved.solved_at
    print(f"REINFORCE {kind} seed {args.seed}: SOLVED at {steps} env steps "
          f"in {seconds:.1f} s; final greedy return "
          f"{solved.last['return']:.1f}")
  else:
    print(f"REINFORCE {kind} seed {args.seed}: not solved within "
          f"{args.num_env_steps} env steps ({total:.1f} s); final greedy "
          f"return {solved.last.get('return', float('nan')):.1f}")


if __name__ == "__main__":
  main()
