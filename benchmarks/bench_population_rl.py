"""PPO or DQN on the in-graph CartPole, TD3 or SAC on an in-graph
continuous task (`--task`, Pendulum by default): a population of N seeds
against one seed, in one process (issue 42's target for PPO: 16 seeds at
most 3x one seed's wall time, 64 seeds at most 8x).

Each contender is a real run (`population=N` and the solo `seed=0`, same
settings) of `--iterations` iterations; the script prints each run's wall
time (tracing included) and then, on the compiled call the run made, the
time of one more iteration, measured in rounds that alternate solo and
population calls (median over rounds, so a drift of the machine's load
hits both). Printed: the ratios and the load (`uptime`). For PPO, DQN and
SAC also the time of the iteration's matrix products alone, batched over
the members as `tf.vectorized_map` makes them (`products_floor`,
`dqn_products_floor`, `sac_products_floor`): no population step can be
faster than that on this machine; for DQN and SAC that floor over the
recipe's whole run.

    python benchmarks/bench_population_rl.py --members 16
    python benchmarks/bench_population_rl.py --members 16 64 --rounds 7
    python benchmarks/bench_population_rl.py --scenario dqn --members 4 10
    python benchmarks/bench_population_rl.py --scenario td3 --members 10
    python benchmarks/bench_population_rl.py --scenario sac --members 10 \
        --task MountainCarContinuous-v0 --jit

PPO: the CartPole recipe's shape (`PPO.recipe("CartPole-v1")`: 8
environments, rollouts of 32, 20 epochs of one minibatch of 256, 64-64
MLPs); its schedules and clipping are left out (they cost the same alone
and in a population). DQN: the CartPole recipe's (`DQN.recipe`: one
environment, a replay buffer of 100,000, 256 updates of batch 128 every
256 steps, 256-256 MLPs); an iteration is 256 steps and their updates.
TD3 and SAC: the `--task` recipe's (`TD3.recipe("Pendulum-v1")`, `SAC`'s:
one environment, batch 256, 64-64 relu MLPs, Adam 1e-3, one update a
step; MountainCarContinuous: batch 512, 32 updates every 32 steps),
learning from the first step; an iteration is 64 steps and 64 updates.
"""

import argparse
import os
import statistics
import subprocess
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402

import sonnet_like as snt  # noqa: E402
from sonnet_like.scenarios.rl.parts import returns  # noqa: E402


DQN_ROUND = 256  # Steps between the DQN recipe's rounds of updates.
CONTINUOUS_ROUND = 64  # Steps (and as many updates) a TD3 or SAC iteration.
ROUND = {"ppo": 1, "dqn": DQN_ROUND, "td3": CONTINUOUS_ROUND,
         "sac": CONTINUOUS_ROUND}


def make_run(args: argparse.Namespace, **settings):
  """A run of `args.iterations` iterations; its wall time and the
  scenario (whose compiled call can run more iterations)."""
  if args.scenario == "dqn":
    return make_dqn_run(args, **settings)
  if args.scenario in ("td3", "sac"):
    return make_continuous_run(args, **settings)
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


def _continuous_recipe(args: argparse.Namespace):
  scenario_type = {"td3": snt.scenarios.TD3, "sac": snt.scenarios.SAC}[
      args.scenario]
  return scenario_type.recipe(args.task)


def make_continuous_run(args: argparse.Namespace, **settings):
  # The recipe's settings, learning from the first step.
  recipe = _continuous_recipe(args)
  scenario = recipe.scenario(
      num_env_steps=args.iterations * CONTINUOUS_ROUND, learning_starts=0,
      steps_per_call=CONTINUOUS_ROUND, progress=False, tensorboard=False,
      log_every=CONTINUOUS_ROUND, jit_compile=args.jit, **settings)
  actor, critic = recipe.networks()
  start = time.perf_counter()
  scenario(actor, critic, recipe.optimizer(),
           snt.envs.make(args.task, num_envs=1, seed=0, in_graph=True))
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


def _forward(x, layers):
  """The products of a bias-free MLP `layers` on `x`: every layer's input,
  then the output."""
  outputs = [x]
  for w in layers:
    outputs.append(tf.matmul(outputs[-1], w))
  return outputs


def _backward(outputs, layers, delta):
  """The backward products of `layers` from `delta` at their output (the
  weights' gradients, summed so that each is computed)."""
  total = 0.0
  for j in reversed(range(len(layers))):
    total += tf.reduce_sum(tf.matmul(outputs[j], delta, adjoint_a=True))
    if j:
      delta = tf.matmul(delta, layers[j], adjoint_b=True)
  return total


def _timed(products):
  """`products` (a `tf.function` returning `(count, total)`) traced and run
  once; a function timing one more run of it."""
  def timed() -> float:
    start = time.perf_counter()
    products()[1].numpy()
    return time.perf_counter() - start

  timed()
  return timed


def products_floor(args: argparse.Namespace, members: int):
  """PPO only: the matrix products of one population iteration alone, as
  `tf.vectorized_map` makes them (batched over the members): the rollout's
  actor calls, the critic's values and every update's forward and backward
  products of both 64-64 MLPs. A floor under a population iteration's
  time on this machine: the rest of the step only adds to it."""
  sizes = {"actor": [4, 64, 64, 2], "critic": [4, 64, 64, 1]}
  weights = {name: [tf.random.normal([members, a, b])
                    for a, b in zip(size, size[1:])]
             for name, size in sizes.items()}
  envs, length = args.num_envs, args.rollout_length
  batch = envs * length // args.minibatches
  updates = args.epochs * args.minibatches

  @tf.function
  def products():
    def step(i, total):
      outputs = _forward(tf.ones([members, envs, 4]), weights["actor"])
      return i + 1, total + tf.reduce_sum(outputs[-1])

    _, total = tf.while_loop(lambda i, _: i < length, step, (0, 0.0))
    values = _forward(tf.ones([members, 2 * envs * length + envs, 4]),
                      weights["critic"])
    total += tf.reduce_sum(values[-1])

    def update(i, total):
      for layers in weights.values():
        outputs = _forward(tf.ones([members, batch, 4]), layers)
        total += _backward(outputs, layers, tf.ones_like(outputs[-1]))
      return i + 1, total

    return tf.while_loop(lambda i, _: i < updates, update, (0, total))

  return _timed(products)


def dqn_products_floor(members: int):
  """DQN only: the matrix products of one iteration's `DQN_ROUND` updates
  alone (batch 128, 256-256 MLPs, 2 actions), batched over the members:
  the online network on the observations and on the next ones (double
  DQN), the target network on the next ones, and the online network's
  backward products. The rollout's one-observation products are left out.
  A floor under a population iteration's time on this machine."""
  sizes = [4, 256, 256, 2]
  online, target = ([tf.random.normal([members, a, b])
                     for a, b in zip(sizes, sizes[1:])] for _ in range(2))

  @tf.function
  def products():
    def update(i, total):
      # Inputs that change each update, so no product is computed once.
      x = tf.fill([members, 128, 4], tf.cast(i, tf.float32))
      total += tf.reduce_sum(_forward(x + 1.0, online)[-1])
      total += tf.reduce_sum(_forward(x + 1.0, target)[-1])
      outputs = _forward(x, online)
      total += _backward(outputs, online, outputs[-1])
      return i + 1, total

    return tf.while_loop(lambda i, _: i < DQN_ROUND, update, (0, 0.0))

  return _timed(products)


def _kernels(module, members: int) -> list[tf.Tensor]:
  """`members` stacked random kernels of the shapes of `module`'s."""
  return [tf.random.normal([members, *v.shape])
          for v in module.trainable_variables if v.shape.rank == 2]


def _input_delta(layers, delta):
  """The backward products of `layers` from `delta` at their output down
  to their input (no weight gradient: the actor's loss through a critic)."""
  for w in reversed(layers):
    delta = tf.matmul(delta, w, adjoint_b=True)
  return tf.reduce_sum(delta)


def sac_products_floor(solo, members: int):
  """SAC only: the matrix products of one iteration's `CONTINUOUS_ROUND`
  updates alone, with the shapes of `solo`'s networks and batch, batched
  over the members: the actor and both target critics on the next
  observations; both critics forward and backward (their loss); the actor,
  both critics on its actions and back through them to the actor (its
  loss). Left out: the rollout's one-observation products and gSDE's
  (a `[batch, 64] x [64, actions]` few). A floor under a population
  iteration's time on this machine."""
  models = solo.models()
  actor = _kernels(models["actor"], members)
  critics = [_kernels(models[name], members)
             for name in ("critic", "twin_critic")]
  targets = [_kernels(models[name], members)
             for name in ("critic", "twin_critic")]
  batch = solo.batch_size
  observations = actor[0].shape[1]
  pairs = critics[0][0].shape[1]  # Observations and actions.

  @tf.function
  def products():
    def update(i, total):
      # Inputs that change each update, so no product is computed once.
      step = tf.cast(i, tf.float32)
      x = tf.fill([members, batch, observations], step)
      xa = tf.fill([members, batch, pairs], step)
      total += tf.reduce_sum(_forward(x + 1.0, actor)[-1])
      for target in targets:
        total += tf.reduce_sum(_forward(xa + 1.0, target)[-1])
      for critic in critics:
        outputs = _forward(xa, critic)
        total += _backward(outputs, critic, outputs[-1])
      outputs = _forward(x, actor)
      for critic in critics:
        q = _forward(xa + 2.0, critic)
        total += _input_delta(critic, q[-1])
      total += _backward(outputs, actor, outputs[-1])
      return i + 1, total

    return tf.while_loop(lambda i, _: i < CONTINUOUS_ROUND, update,
                         (0, 0.0))

  return _timed(products)


class HandStacked(tf.Module):
  """PPO only: the benchmark's iteration written by hand for `members`
  seeds at once, the way a researcher would stack them without a library:
  weights `[members, in, out]` (batched products), one in-graph CartPole
  of `members * num_envs` environments, Gumbel-max sampling, GAE, then
  `epochs` full-batch clipped-surrogate updates of both MLPs with
  `snt.optimizers.Adam` on the stacked variables (elementwise, so each
  member's Adam is its own). No guard, no logs, no per-member checks.
  Compiled with XLA under `--jit`, as the scenarios are."""

  def __init__(self, args: argparse.Namespace, members: int):
    super().__init__()
    self.members, self.envs = members, args.num_envs
    self.length, self.epochs = args.rollout_length, args.epochs
    self.nets = {name: [self._layer(members, a, b)
                        for a, b in zip(size, size[1:])]
                 for name, size in (("actor", [4, 64, 64, 2]),
                                    ("critic", [4, 64, 64, 1]))}
    self.env = snt.envs.CartPole(num_envs=members * args.num_envs)
    self.optimizer = snt.optimizers.Adam(3e-4)
    self.seed = tf.Variable([0, 0], dtype=tf.int64)
    self.iteration = tf.function(self._iteration, jit_compile=args.jit)

  @staticmethod
  def _layer(members, fan_in, fan_out):
    scale = (2.0 / fan_in) ** 0.5
    return (tf.Variable(tf.random.normal([members, fan_in, fan_out]) * scale),
            tf.Variable(tf.zeros([members, 1, fan_out])))

  def _mlp(self, name, x):  # x: [members, batch, 4]
    layers = self.nets[name]
    for i, (w, b) in enumerate(layers):
      x = tf.matmul(x, w) + b
      if i < len(layers) - 1:
        x = tf.nn.relu(x)
    return x

  def _per_member(self, x):  # [members * envs, ...] -> [members, envs, ...]
    return tf.reshape(x, [self.members, -1] + x.shape[1:].as_list())

  def _iteration(self):
    n = self.members * self.envs

    def collect(t, observation, arrays):
      self.seed.assign_add([0, 1])
      logits = tf.reshape(self._mlp("actor", self._per_member(observation)),
                          [n, 2])
      noise = tf.random.stateless_uniform([n, 2], self.seed, 1e-20, 1.0)
      action = tf.argmax(logits - tf.math.log(-tf.math.log(noise)), axis=1,
                         output_type=tf.int32)
      log_prob = -tf.nn.sparse_softmax_cross_entropy_with_logits(action,
                                                                 logits)
      step = self.env.step(action)
      values = (observation, action, log_prob, step.reward,
                step.terminated, step.truncated)
      arrays = tuple(a.write(t, v) for a, v in zip(arrays, values))
      return t + 1, step.observation, arrays

    arrays = tuple(tf.TensorArray(d, size=self.length) for d in (
        tf.float32, tf.int32, tf.float32, tf.float32, tf.bool, tf.bool))
    _, last, arrays = tf.while_loop(
        lambda t, *_: t < self.length, collect,
        (0, self.env.observation(), arrays))
    observations, actions, old_log_probs, rewards, terminated, truncated = [
        a.stack() for a in arrays]  # [T, n, ...]
    every = tf.concat([tf.reshape(observations, [-1, 4]), last], 0)
    values = tf.reshape(self._mlp("critic", self._per_member(every)), [-1])
    size = self.length * n
    advantages = returns.gae(rewards, tf.reshape(values[:size],
                                                 [self.length, n]),
                             terminated, truncated, 0.99, 0.95,
                             last_value=values[size:])
    targets = advantages + tf.reshape(values[:size], [self.length, n])

    def member_major(x):  # [T, members * envs] -> [members, T * envs]
      x = tf.reshape(x, [self.length, self.members, self.envs])
      return tf.reshape(tf.transpose(x, [1, 0, 2]), [self.members, -1])

    inputs = tf.reshape(tf.transpose(tf.reshape(
        observations, [self.length, self.members, self.envs, 4]),
        [1, 0, 2, 3]), [self.members, -1, 4])
    actions, old_log_probs = member_major(actions), member_major(old_log_probs)
    advantages, targets = member_major(advantages), member_major(targets)
    variables = [v for layers in self.nets.values() for pair in layers
                 for v in pair]

    def update(epoch):
      with tf.GradientTape() as tape:
        logits = self._mlp("actor", inputs)
        log_probs = -tf.nn.sparse_softmax_cross_entropy_with_logits(
            actions, logits)
        ratio = tf.exp(log_probs - old_log_probs)
        surrogate = tf.minimum(ratio * advantages, tf.clip_by_value(
            ratio, 0.8, 1.2) * advantages)
        value_error = self._mlp("critic", inputs)[..., 0] - targets
        # Summed over the members: each member's gradient is its own.
        loss = tf.reduce_sum(tf.reduce_mean(
            -surrogate + 0.5 * value_error ** 2, axis=1))
      self.optimizer.apply(tape.gradient(loss, variables), variables)
      return epoch + 1

    tf.while_loop(lambda e: e < self.epochs, update, [0])
    return tf.reduce_sum(rewards)


def hand_stacked(args: argparse.Namespace, members: int):
  """PPO only: `HandStacked`'s iteration, timed as `one_more` times ours."""
  hand = HandStacked(args, members)
  hand.iteration()  # Traced, slots made.

  def timed() -> float:
    start = time.perf_counter()
    hand.iteration().numpy()
    return time.perf_counter() - start

  return timed


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
  parser.add_argument("--task", default="Pendulum-v1",
                      help="TD3 and SAC: the recipe's task")
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
    ppo = args.scenario == "ppo"
    floor = (products_floor(args, members) if ppo else
             dqn_products_floor(members) if args.scenario == "dqn" else
             sac_products_floor(solo, members) if args.scenario == "sac"
             else None)
    hand = hand_stacked(args, members) if ppo else None
    solo_times, population_times, floor_times, hand_times = [], [], [], []
    for _ in range(args.rounds):
      solo_times += [solo_call() for _ in range(args.calls)]
      population_times += [call() for _ in range(args.calls)]
      if floor:
        floor_times += [floor() for _ in range(args.calls)]
      if hand:
        hand_times += [hand() for _ in range(args.calls)]
    solo_median = statistics.median(solo_times)
    median = statistics.median(population_times)
    print(f"{members} members: one iteration {median * 1e3:.1f} ms against "
          f"solo {solo_median * 1e3:.1f} ms (medians of "
          f"{len(solo_times)}): {median / solo_median:.2f}x; fastest "
          f"{min(population_times) / min(solo_times):.2f}x; per member "
          f"{median / solo_median / members:.3f} of a solo iteration")
    if hand_times:
      hand_median = statistics.median(hand_times)
      print(f"{members} members: the same iteration written by hand, "
            f"stacked ({HandStacked.__name__}) {hand_median * 1e3:.1f} ms, "
            f"{hand_median / solo_median:.2f}x the solo iteration; the "
            f"population {median / hand_median:.2f}x the hand-written one")
    if floor_times:
      floor_median = statistics.median(floor_times)
      print(f"{members} members: the iteration's matrix products alone "
            f"(batched, nothing else) {floor_median * 1e3:.1f} ms, "
            f"{floor_median / solo_median:.2f}x the solo iteration (a floor "
            "under the ratio above)")
      if args.scenario == "dqn":  # The recipe: 50,000 steps, from 1,000.
        rounds = (50_000 - 1_000) // DQN_ROUND
        print(f"{members} members: the DQN CartPole recipe's {rounds} "
              f"rounds of updates: its products alone "
              f"{rounds * floor_median:.0f} s, this population "
              f"{rounds * median:.0f} s (a whole run takes longer: its first "
              "1,000 steps and its tracing are left out)")
      if args.scenario == "sac":  # An iteration has CONTINUOUS_ROUND.
        settings = _continuous_recipe(args).settings
        updates = (settings["num_env_steps"] * settings.get(
            "gradient_steps", 1) // settings.get("train_every", 1))
        iterations = updates / CONTINUOUS_ROUND
        print(f"{members} members: the SAC {args.task} recipe's "
              f"{updates:,} updates: their products "
              f"alone {iterations * floor_median:.0f} s, this population "
              f"{iterations * median:.0f} s (a whole run takes longer: its "
              "tracing is left out)")
  print(f"# load after: {load()}")


if __name__ == "__main__":
  main()
