"""PPO or DQN on the in-graph CartPole, TD3 or SAC on the in-graph
Pendulum: a population of N seeds against one seed, in one process (issue
42's target for PPO: 16 seeds at most 3x one seed's wall time, 64 seeds at
most 8x).

Each contender is a real run (`population=N` and the solo `seed=0`, same
settings) of `--iterations` iterations; the script prints each run's wall
time (tracing included) and then, on the compiled call the run made, the
time of one more iteration, measured in rounds that alternate solo and
population calls (median over rounds, so a drift of the machine's load
hits both). Printed: the ratios and the load (`uptime`).

    python benchmarks/bench_population_rl.py --members 16
    python benchmarks/bench_population_rl.py --members 16 64 --rounds 7
    python benchmarks/bench_population_rl.py --scenario dqn --members 4 10
    python benchmarks/bench_population_rl.py --scenario td3 --members 10

PPO: the CartPole recipe's shape (`PPO.recipe("CartPole-v1")`: 8
environments, rollouts of 32, 20 epochs of one minibatch of 256, 64-64
MLPs); its schedules and clipping are left out (they cost the same alone
and in a population). DQN: the CartPole recipe's (`DQN.recipe`: one
environment, a replay buffer of 100,000, 256 updates of batch 128 every
256 steps, 256-256 MLPs); an iteration is 256 steps and their updates.
TD3 and SAC: the Pendulum recipes' (`TD3.recipe("Pendulum-v1")`, `SAC`'s:
one environment, batch 256, 64-64 relu MLPs, Adam 1e-3, one update a
step), learning from the first step; an iteration is 64 steps, each with
its update.
"""

import argparse
import os
import statistics
import subprocess
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402

import sonnet_like as snt  # noqa: E402


DQN_ROUND = 256  # Steps between the DQN recipe's rounds of updates.
PENDULUM_ROUND = 64  # Steps (each with its update) a TD3 or SAC iteration.
ROUND = {"ppo": 1, "dqn": DQN_ROUND, "td3": PENDULUM_ROUND,
         "sac": PENDULUM_ROUND}


def make_run(args: argparse.Namespace, **settings):
  """A run of `args.iterations` iterations; its wall time and the
  scenario (whose compiled call can run more iterations)."""
  if args.scenario == "dqn":
    return make_dqn_run(args, **settings)
  if args.scenario in ("td3", "sac"):
    return make_pendulum_run(args, **settings)
  ppo = snt.scenarios.PPO(
      num_env_steps=args.iterations * args.num_envs * args.rollout_length,
      num_envs=args.num_envs, rollout_length=args.rollout_length,
      num_epochs=args.epochs, num_minibatches=args.minibatches,
      progress=False, tensorboard=False, log_every=1,
      jit_compile=args.jit, **settings)
  actor = snt.nets.MLP([64, 64, 2], name="actor")
  critic = snt.nets.MLP([64, 64, 1], name="critic")
  start = time.perf_counter()
  ppo(actor, critic, snt.optimizers.Adam(3e-4),
      snt.envs.CartPole(num_envs=args.num_envs))
  return time.perf_counter() - start, ppo


def make_dqn_run(args: argparse.Namespace, **settings):
  # The recipe's settings without its schedules (learning starts at once).
  dqn = snt.scenarios.DQN(
      num_env_steps=args.iterations * DQN_ROUND, buffer_size=100_000,
      batch_size=128, learning_starts=0, gamma=0.99, target_update_every=10,
      train_every=DQN_ROUND, gradient_steps=DQN_ROUND, epsilon=0.04,
      steps_per_call=DQN_ROUND, progress=False, tensorboard=False,
      log_every=DQN_ROUND, jit_compile=args.jit, **settings)
  start = time.perf_counter()
  dqn(snt.nets.MLP([256, 256, 2], name="q_network"),
      snt.optimizers.Adam(2.3e-3), snt.envs.CartPole(num_envs=1))
  return time.perf_counter() - start, dqn


def make_pendulum_run(args: argparse.Namespace, **settings):
  # The recipe's settings, learning from the first step.
  scenario_type = {"td3": snt.scenarios.TD3, "sac": snt.scenarios.SAC}[
      args.scenario]
  recipe = scenario_type.recipe("Pendulum-v1")
  scenario = recipe.scenario(
      num_env_steps=args.iterations * PENDULUM_ROUND, learning_starts=0,
      steps_per_call=PENDULUM_ROUND, progress=False, tensorboard=False,
      log_every=PENDULUM_ROUND, jit_compile=args.jit, **settings)
  actor, critic = recipe.networks()
  start = time.perf_counter()
  scenario(actor, critic, recipe.optimizer(), snt.envs.Pendulum(num_envs=1))
  return time.perf_counter() - start, scenario


def one_more(scenario, steps: int):
  call = scenario.train_function.get_concrete_function(
      tf.TensorSpec([], tf.int32))
  one = tf.constant(steps)

  def iteration() -> float:
    start = time.perf_counter()
    logs, _ = call(one)
    tf.nest.map_structure(lambda x: x.numpy(), logs)  # Waits for it.
    return time.perf_counter() - start

  return iteration


def load() -> str:
  return subprocess.run(["uptime"], capture_output=True,
                        text=True).stdout.strip()


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--scenario", choices=sorted(ROUND), default="ppo")
  parser.add_argument("--members", type=int, nargs="+", default=[16])
  parser.add_argument("--iterations", type=int, default=3)
  parser.add_argument("--rounds", type=int, default=5)
  parser.add_argument("--calls", type=int, default=3,
                      help="iterations timed per contender and round")
  parser.add_argument("--num-envs", type=int, default=8)
  parser.add_argument("--rollout-length", type=int, default=32)
  parser.add_argument("--epochs", type=int, default=20)
  parser.add_argument("--minibatches", type=int, default=1)
  parser.add_argument("--jit", action="store_true")
  args = parser.parse_args()
  print(f"# {vars(args)}")
  print(f"# load before: {load()}")
  solo_wall, solo = make_run(args, seed=0)
  steps = ROUND[args.scenario]
  solo_call = one_more(solo, steps)
  print(f"solo run of {args.iterations} iterations: {solo_wall:.2f} s "
        "(tracing included)")
  for members in args.members:
    wall, population = make_run(args, seed=0, population=members)
    call = one_more(population, steps)
    print(f"{members} members, run of {args.iterations} iterations: "
          f"{wall:.2f} s (tracing included), {wall / solo_wall:.2f}x the solo "
          "run")
    solo_times, population_times = [], []
    for _ in range(args.rounds):
      solo_times += [solo_call() for _ in range(args.calls)]
      population_times += [call() for _ in range(args.calls)]
    solo_median = statistics.median(solo_times)
    median = statistics.median(population_times)
    print(f"{members} members: one iteration {median * 1e3:.1f} ms against "
          f"solo {solo_median * 1e3:.1f} ms (medians of "
          f"{len(solo_times)}): {median / solo_median:.2f}x; fastest "
          f"{min(population_times) / min(solo_times):.2f}x; per member "
          f"{median / solo_median / members:.3f} of a solo iteration")
  print(f"# load after: {load()}")


if __name__ == "__main__":
  main()
