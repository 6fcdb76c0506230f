"""PPO on CartPole-v1, on gymnasium or on the in-graph TensorFlow CartPole.

Evaluates the greedy policy over 100 episodes every `--eval_every`
rollouts and stops as soon as the mean return reaches 475 (CartPole-v1's
"solved"); prints the environment steps and wall time it took (tracing and
evaluation included) and the final score.

    python examples/ppo_cartpole.py --seed 0 --in_graph
    python examples/ppo_cartpole.py --seed 0            # gymnasium

The trained policy is exported to `--export_dir` (runs/ppo_cartpole/export):
`tf.saved_model.load(path).signatures["serving_default"](observation=obs)`
gives the greedy actions, "sample" (observation, seed) sampled ones.
"""

import argparse
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import sonnet_like as snt  # pylint: disable=g-import-not-at-top

SOLVED = 475.0


class StopWhenSolved(snt.scenarios.Hook):
  """Stops training at the first evaluation whose mean return >= `target`."""

  def __init__(self, target: float, start: float):
    self.target, self.start = target, start
    self.solved_at: tuple[int, float] | None = None
    self.last: dict[str, float] = {}

  def eval_end(self, scenario, step, metrics):
    self.last = dict(metrics)
    env_steps = step * scenario.num_envs * scenario.rollout_length
    elapsed = time.perf_counter() - self.start
    print(f"  env steps {env_steps:7d}  {elapsed:6.1f} s  greedy return "
          f"{metrics['return']:6.1f} +- {metrics['return_std']:5.1f}",
          flush=True)
    if metrics["return"] >= self.target and self.solved_at is None:
      self.solved_at = (env_steps, elapsed)
      scenario.request_stop(f"solved: mean return {metrics['return']:.1f}")


def make_envs(in_graph: bool, num_envs: int, seed: int):
  """Training environments and 100 evaluation environments."""
  make = getattr(snt.envs, "make", None)
  if make is not None:
    return (make("CartPole-v1", num_envs=num_envs, seed=seed,
                 in_graph=in_graph),
            make("CartPole-v1", num_envs=100, seed=seed + 10_000,
                 in_graph=in_graph))
  from sonnet_like.envs import cartpole  # pylint: disable=g-import-not-at-top
  if not in_graph:
    raise SystemExit("snt.envs.make is not available yet; use --in_graph.")
  return (cartpole.CartPole(num_envs, seed=seed),
          cartpole.CartPole(100, seed=seed + 10_000))


def main():
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--in_graph", action="store_true",
                      help="the TensorFlow CartPole (one compiled call per "
                      "rollout + update)")
  parser.add_argument("--num_env_steps", type=int, default=200_000)
  parser.add_argument("--eval_every", type=int, default=10,
                      help="rollouts between evaluations")
  parser.add_argument("--jit", action="store_true", help="jit_compile=True")
  parser.add_argument("--export_dir", default="runs/ppo_cartpole/export",
                      help="where to export the policy ('' for nowhere)")
  parser.add_argument("--dry_run", action="store_true",
                      help="check the whole run first, in seconds: a few "
                      "steps, an evaluation, a save, a resume and an export "
                      "in a temporary folder, then stop")
  args = parser.parse_args()

  tf.random.set_seed(args.seed)
  num_envs, rollout_length, epochs, minibatches = 8, 32, 10, 1
  env, eval_env = make_envs(args.in_graph, num_envs, args.seed)
  actor = snt.nets.MLP([64, 64, 2], activation=tf.tanh, name="actor")
  critic = snt.nets.MLP([64, 64, 1], activation=tf.tanh, name="critic")
  rollouts = -(-args.num_env_steps // (num_envs * rollout_length))
  learning_rate = keras.optimizers.schedules.PolynomialDecay(
      1e-3, decay_steps=rollouts * epochs * minibatches, end_learning_rate=0.0)
  optimizer = keras.optimizers.Adam(learning_rate)

  start = time.perf_counter()
  solved = StopWhenSolved(SOLVED, start)
  ppo = snt.scenarios.PPO(
      args.num_env_steps, num_envs=num_envs, rollout_length=rollout_length,
      num_epochs=epochs, num_minibatches=minibatches, gamma=0.98,
      gae_lambda=0.8, clip_ratio=0.2, entropy_coef=0.0, value_coef=0.5,
      eval_every=args.eval_every, eval_episodes=100, log_every=10,
      clip_norm=0.5, seed=args.seed, jit_compile=args.jit,
      progress=False, hooks=[solved], export_dir=args.export_dir or None,
      dry_run=args.dry_run)
  ppo(actor, critic, optimizer, env, eval_env=eval_env)
  if args.dry_run:
    return
  total = time.perf_counter() - start
  kind = "in-graph" if args.in_graph else "gymnasium"
  if args.export_dir:
    print(f"Policy exported to {args.export_dir}")
  if solved.solved_at:
    steps, seconds = solved.solved_at
    print(f"PPO {kind} seed {args.seed}: SOLVED at {steps} env steps in "
          f"{seconds:.1f} s; final greedy return {solved.last['return']:.1f}")
  else:
    print(f"PPO {kind} seed {args.seed}: not solved within "
          f"{args.num_env_steps} env steps ({total:.1f} s); final greedy "
          f"return {solved.last.get('return', float('nan')):.1f}")


if __name__ == "__main__":
  main()
