"""Atari stepping on several cores (issue 60): in-process against workers.

8 preprocessed Breakout games (`snt.envs.atari("BreakoutNoFrameskip-v4",
training=True)`, uint8 [84, 84, 4]) with random actions, stepped

- in this process: `snt.envs.make(factory, num_envs=8)`, the baseline;
- by gymnasium's `AsyncVectorEnv` (one process per game, same-step
  autoreset), observations through shared memory and through pipes, behind
  `GymEnvironment`;
- by our workers: `snt.envs.make(factory, num_envs=8, workers=k)` (k
  processes, 8 / k games each, pipes).

Two ways, each in rounds that interleave the stepping kinds:

- `numpy`: `env.python_step(actions)` in a loop, the stepping alone;
- `ppo`: as PPO's rollout uses it, a `tf.function` that runs `--rollout`
  steps of `act` then `env.step` in a `tf.range` loop; `act` is a Nature CNN
  forward pass on the uint8 observations then a categorical sample (what
  PPO's Atari recipe acts with), or with `--act small` a tiny op (a mean of
  the pixels into the logits).

Prints the median environment steps per second of each kind over the
rounds and its ratio to in-process stepping measured in the same process.
The workers need cores that nobody else uses; on a busy machine the figures
measure the share of the CPU each kind gets more than its parallelism. So
each timed round also records how much of the cores other processes used
meanwhile (from /proc: the machine's busy time minus this process's and
its environments' processes'), and the ratios are given again over the
quiet rounds only (others under `--quiet`, 10%).

    python benchmarks/bench_atari_envs.py            # ~1 minute, 2 quiet cores
    python benchmarks/bench_atari_envs.py --rounds 15 --kinds inproc,workers2
"""

import argparse
import functools
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import gymnasium  # pylint: disable=g-import-not-at-top,wrong-import-position
import numpy as np  # pylint: disable=g-import-not-at-top,wrong-import-position
import tensorflow as tf  # pylint: disable=g-import-not-at-top,wrong-import-position

import sonnet_like as snt  # pylint: disable=g-import-not-at-top,wrong-import-position

GAME = "BreakoutNoFrameskip-v4"
KINDS = ("inproc", "async_shm", "async_pipe", "workers2", "workers4")


def _factory():
  return functools.partial(snt.envs.atari, GAME, training=True)


def make_env(kind: str, num_envs: int, seed: int) -> snt.envs.GymEnvironment:
  """The environment of one stepping kind."""
  if kind == "inproc":
    return snt.envs.make(_factory(), num_envs=num_envs, seed=seed)
  if kind.startswith("workers"):
    return snt.envs.make(_factory(), num_envs=num_envs, seed=seed,
                         workers=int(kind[len("workers"):]))
  vector = gymnasium.vector.AsyncVectorEnv(
      [_factory()] * num_envs, shared_memory=kind == "async_shm",
      autoreset_mode=gymnasium.vector.AutoresetMode.SAME_STEP)
  return snt.envs.make(vector, seed=seed)


def _pids(env) -> list[int]:
  """This process and the processes that step `env`."""
  batch = getattr(env, "_batch", None)   # pylint: disable=protected-access
  vector = getattr(env, "_vector", None)  # pylint: disable=protected-access
  children = (getattr(batch, "processes", None) or
              getattr(vector, "processes", None) or [])
  return [os.getpid()] + [p.pid for p in children]


def _ticks(pids: list[int]) -> tuple[int, int]:
  """(busy ticks of the whole machine, busy ticks of `pids`) so far."""
  with open("/proc/stat", encoding="ascii") as f:
    fields = [int(x) for x in f.readline().split()[1:]]
  machine = sum(fields) - fields[3] - fields[4]   # Minus idle and iowait.
  mine = 0
  for pid in pids:
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
      stat = f.read().rsplit(")", 1)[1].split()
    mine += int(stat[11]) + int(stat[12])   # utime, stime
  return machine, mine


def timed(env, run) -> tuple[float, float]:
  """Seconds `run()` takes, and the share of the machine's cores that
  other processes used meanwhile (0: they left every core to us)."""
  pids = _pids(env)
  machine, mine = _ticks(pids)
  start = time.perf_counter()
  run()
  seconds = time.perf_counter() - start
  machine_after, mine_after = _ticks(pids)
  others = (machine_after - machine) - (mine_after - mine)
  hz = os.sysconf("SC_CLK_TCK")
  return seconds, max(0.0, others / hz / seconds / os.cpu_count())


def numpy_steps(env, steps: int, rng: np.random.Generator):
  """`python_step` with random actions, `steps` times."""
  actions = rng.integers(0, env.action_space.num_actions,
                         (steps, env.num_envs))

  def run():
    for action in actions:
      env.python_step(action)

  return run


def make_rollout(env, act_kind: str, rollout: int):
  """A compiled rollout of `rollout` steps of `act` then `env.step`."""
  num_actions = env.action_space.num_actions
  if act_kind == "cnn":
    network = snt.nets.NatureCNN(num_actions)

    def logits_of(observation):
      return network(observation)
  else:
    weights = tf.random.stateless_normal([1, num_actions], [0, 1])

    def logits_of(observation):
      pixels = tf.reduce_mean(tf.cast(observation, tf.float32) / 255.0,
                              axis=[1, 2, 3])
      return pixels[:, None] * weights

  @tf.function
  def run(seed):
    observation = env.observation()
    total = tf.constant(0.0)
    for t in tf.range(rollout):
      logits = logits_of(observation)
      action = tf.random.stateless_categorical(
          logits, 1, tf.stack([seed, t]), dtype=tf.int32)[:, 0]
      timestep = env.step(action)
      observation = timestep.observation
      total += tf.reduce_sum(timestep.reward)
    return total

  return run


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--num_envs", type=int, default=8)
  parser.add_argument("--rounds", type=int, default=7)
  parser.add_argument("--steps", type=int, default=100,
                      help="vector steps per numpy round")
  parser.add_argument("--rollout", type=int, default=64,
                      help="steps per ppo round (PPO's Atari recipe: 128)")
  parser.add_argument("--act", choices=("cnn", "small"), default="cnn")
  parser.add_argument("--kinds", default=",".join(KINDS))
  parser.add_argument("--quiet", type=float, default=0.1,
                      help="a round is quiet when other processes used "
                      "less than this share of the cores")
  args = parser.parse_args()
  kinds = args.kinds.split(",")
  assert kinds[0] == "inproc", "the baseline comes first"
  print(f"{args.num_envs} x {GAME}, {os.cpu_count()} cores, load "
        f"{os.getloadavg()[0]:.2f}; {args.rounds} rounds")

  envs, started = {}, {}
  for kind in kinds:
    start = time.perf_counter()
    envs[kind] = make_env(kind, args.num_envs, seed=0)
    envs[kind].reset(seed=0)
    started[kind] = time.perf_counter() - start
  rollouts = {kind: make_rollout(env, args.act, args.rollout)
              for kind, env in envs.items()}
  for kind in kinds:   # Traces, and warms every process up.
    numpy_steps(envs[kind], 10, np.random.default_rng(0))()
    rollouts[kind](tf.constant(0))

  ways = {"numpy": args.steps * args.num_envs,
          "ppo": args.rollout * args.num_envs}
  rates = {(kind, way): [] for kind in kinds for way in ways}
  rng = np.random.default_rng(1)
  for round_ in range(args.rounds):
    for kind in kinds:
      for way, count in ways.items():
        run = (numpy_steps(envs[kind], args.steps, rng) if way == "numpy"
               else lambda k=kind, r=round_: rollouts[k](
                   tf.constant(r + 1)).numpy())
        seconds, others = timed(envs[kind], run)
        rates[kind, way].append((count / seconds, others))

  print(f"{'kind':<11} {'start s':>7}" + "".join(
      f" {way + ' steps/s':>18} {'ratio':>5} {'quiet':>5} {'ratio':>5}"
      for way in ("numpy", f"ppo({args.act})")))
  summary = {}
  for key, measured in rates.items():
    quiet = [rate for rate, others in measured if others < args.quiet]
    summary[key] = (statistics.median(rate for rate, _ in measured),
                    statistics.median(quiet) if quiet else float("nan"),
                    len(quiet))
  for kind in kinds:
    row = f"{kind:<11} {started[kind]:7.2f}"
    for way in ways:
      median, quiet, count = summary[kind, way]
      base, base_quiet, _ = summary["inproc", way]
      row += (f" {median:18.0f} {median / base:5.2f} {count:5d} "
              f"{quiet / base_quiet:5.2f}")
    print(row)
  others = [o for measured in rates.values() for _, o in measured]
  print(f"ratio: of the medians over all {args.rounds} rounds; quiet: how "
        f"many rounds other processes used under {args.quiet:.0%} of the "
        f"cores (median over all rounds: {statistics.median(others):.0%}), "
        f"and the ratio of the medians over those")
  for env in envs.values():
    env.close()
  print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
  main()
