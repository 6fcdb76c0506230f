"""DQN on CartPole-v1 until it is solved (mean greedy return >= 475 over 100
evaluation episodes), in gymnasium or in the in-graph TensorFlow CartPole.

Hyperparameters follow rl-baselines3-zoo's CartPole DQN (Adam 2.3e-3, batch
64, a 256-256 MLP, 1,000 transitions before learning, epsilon 1 -> 0.04 over
16% of the run, half an update per transition, gradients clipped to norm
10 as stable-baselines3's DQN does by default). The zoo runs its updates in
bursts (128 every 256 env steps) and syncs the target every 10 env steps,
i.e. between bursts, so the target stays fixed for 128 updates; here one
update runs every 2 env steps, so the target is synced every 256 env steps
to keep it fixed for as many updates (syncing every 10 steps diverges).

    python examples/dqn_cartpole.py --seed 0 --in_graph
    python examples/dqn_cartpole.py --seed 0            # gymnasium
"""

import argparse
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import sonnet_like as snt  # pylint: disable=g-import-not-at-top

SOLVED = 475.0
EVAL_EPISODES = 100


class StopWhenSolved(snt.scenarios.Hook):
  """Stops at the first evaluation whose mean return reaches `threshold`."""

  def __init__(self, threshold: float, num_envs: int):
    self.threshold, self.num_envs = threshold, num_envs
    self.solved_at: int | None = None
    self.start = time.perf_counter()
    self.seconds: float | None = None

  def eval_end(self, scenario, step, metrics):
    score = metrics["return"]
    print(f"env steps {step * self.num_envs:>7}: greedy mean return "
          f"{score:6.1f} over {EVAL_EPISODES} episodes "
          f"({time.perf_counter() - self.start:5.1f} s)", flush=True)
    if score >= self.threshold and self.solved_at is None:
      self.solved_at = step * self.num_envs
      self.seconds = time.perf_counter() - self.start
      scenario.request_stop(f"solved: {score:.1f} >= {self.threshold}")


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--in_graph", action="store_true",
                      help="Use the TensorFlow CartPole (one compiled call "
                      "plays and learns for steps_per_call steps).")
  parser.add_argument("--num_env_steps", type=int, default=100_000)
  parser.add_argument("--num_envs", type=int, default=1)
  parser.add_argument("--eval_every", type=int, default=2_000,
                      help="Evaluate every this many env steps.")
  parser.add_argument("--save_dir", default=None)
  parser.add_argument("--dry_run", action="store_true",
                      help="check the whole run first, in seconds: a few "
                      "steps, an evaluation, a save, a resume and an export "
                      "in a temporary folder, then stop")
  args = parser.parse_args()

  tf.random.set_seed(args.seed)
  n = args.num_envs
  env = snt.envs.make("CartPole-v1", num_envs=n, seed=args.seed,
                      in_graph=args.in_graph)
  eval_env = snt.envs.make("CartPole-v1",
                           num_envs=EVAL_EPISODES if args.in_graph else 10,
                           seed=args.seed + 10_000, in_graph=args.in_graph)
  hook = StopWhenSolved(SOLVED, n)
  dqn = snt.scenarios.DQN(
      args.num_env_steps, num_envs=n, buffer_size=100_000, batch_size=64,
      learning_starts=1_000, train_every=max(1, 2 // n),
      target_update_every=max(1, 256 // n), gamma=0.99,
      epsilon=(1.0, 0.04, 0.16), double_dqn=True, loss="huber",
      eval_every=max(1, args.eval_every // n), eval_episodes=EVAL_EPISODES,
      steps_per_call=200 if args.in_graph else 50, log_every=1_000,
      clip_norm=10.0, save_dir=args.save_dir, seed=args.seed, hooks=[hook],
      progress=False, dry_run=args.dry_run)
  q_network = snt.nets.MLP([256, 256, 2], name="q_network")
  history = dqn(q_network, keras.optimizers.Adam(2.3e-3), env,
                eval_env=eval_env)
  if args.dry_run:
    return
  total = time.perf_counter() - hook.start
  final = history.eval["return"][-1]
  kind = "in-graph" if args.in_graph else "gymnasium"
  if hook.solved_at is not None:
    print(f"SOLVED seed={args.seed} {kind}: {hook.solved_at} env steps, "
          f"{hook.seconds:.1f} s wall time; final score {final:.1f}")
  else:
    print(f"NOT SOLVED seed={args.seed} {kind} within {dqn.step * n} env "
          f"steps ({total:.1f} s); final score {final:.1f}")


if __name__ == "__main__":
  main()
