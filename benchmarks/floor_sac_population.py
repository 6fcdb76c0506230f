"""SAC HalfCheetah-v5, N seeds as one population on gymnasium environments
against the same N seeds stacked by hand in TensorFlow, in one process
(the floor of issue 60's population speed line).

Three runs, each timed from the scenario's call (or the floor's first
line) to the end of training, tracing included:

- ours: `--members` seeds (0..N-1) of `snt.scenarios.SAC.recipe(
  "HalfCheetah-v5")` as one population, each member stepping its own
  gymnasium HalfCheetah-v5 (`benchmarks/population_gym.py`'s `train`);
- the floor: `HandSAC` with N members stacked on a leading axis;
- solo: our seed 0 alone (population_gym.py's solo run);

in that order, reversed on odd `--rounds` (so a drift of the machine's
load hits all). Printed: each run's seconds, population / floor,
population / solo and floor / solo, and (`--eval_episodes`) each run's
greedy mean return over the members (zoo.py's `evaluate`: the same loop
and starts for ours and the floor), so a reader sees that the floor
learns too. `--floor_solo` also times `HandSAC` with one member, unstacked
(plain `MatMul`s): the hand-written population over the hand-written solo
run.

    python benchmarks/floor_sac_population.py               # 10 x 30k
    python benchmarks/floor_sac_population.py --members 3 --steps 1500 \
        --learning_starts 500 --eval_episodes 1             # a smoke run
    python benchmarks/floor_sac_population.py --check --steps 300

`HandSAC` does per step what our population does with the recipe's
settings: one step of each member's HalfCheetah-v5 (N gymnasium
environments stepped in a Python loop), the N transitions into replay
buffers of the recipe's size (1M a member, NumPy arrays), uniform random
actions in the box for the first `learning_starts` steps, then actions
sampled from each member's policy; from step `learning_starts` on one
update a step for all members at once: batch 256 a member drawn
uniformly; 256-256 ReLU actor (means and log-stds, clipped to [-5, 2];
tanh-squashed Gaussian) and twin critics with weights `[members, in,
out]` (batched products), the critics towards `r + gamma (1 - term)
(min(Q1', Q2')(s', a') - alpha log pi(a'|s'))`, the actor on `alpha log
pi - min(Q1, Q2)`, the temperature learned (from 1, towards -6), gamma
0.99, tau 0.005; one Adam 3e-4 over all (the paper's rule, as
`snt.optimizers.Adam`, on TensorFlow's fused `ResourceApplyAdam`;
elementwise, so each member's is its own), each loss summed over the
members (so each member's gradient is its own), three gradients from one
persistent tape as ours takes them. Weights uniform in +-1/sqrt(fan_in),
biases zero (`pytorch_init`). The warm-up steps are Python alone; the
learning steps run `--floor_steps_per_call` (100) to a `tf.function`
call, the environments stepped, the transitions stored and the next
batches drawn by one `tf.numpy_function` a step (1: one call a step from
Python, the update and then the next actions, fetched with `.numpy()`;
`--jit` then compiles it with XLA). `_floors.HandOffPolicy` is the loop.

`--interleave` runs ours (the population) and the floor by turns in one
run each: after each call of ours the floor runs to the same step
(`_floors.HandOffPolicy.pieces`), so a drift of the machine's speed
between whole runs (a 100-step call of ours took 23-28 ms a step within
one quiet run) cannot favour either. It prints each side's seconds up to
`learning_starts` (with its making and tracing) and after, and the median
learning step of each:

    python benchmarks/floor_sac_population.py --interleave

`--check` trains ours (seeds 0 and 1, alone) `--steps` steps with the
last two updates drawn from the first 256 transitions and the policy's
samples at its means, and makes the same two updates from the same
weights and batches with the floor (stacked, both ways of running it, and
unstacked) sampling with zero noise: it prints how far the weights and
the losses are apart.

What the floor leaves out (ours does it): checkpoints and run folders,
logs and their variables, the NaN guard, episode statistics, argument and
shape checks, every warm-up step's compiled work (ours runs no actor
there: `TwinCritics.random_or`), the members' own random streams (the floor
draws indices and warm-up actions with one NumPy generator, the policy's
noise with one `tf.random.Generator`), and the population's machinery
(the member's step made once for all members, the per-member state and
checks). Its log-probabilities use the drawn noise (`-eps^2/2 - log std -
log(2 pi)/2`), not the Normal's density at the sample: the same value.
Both times include making the environments, the variables and the
tracing; the evaluations are outside them.

Run the full size on an otherwise idle machine; wall times on a shared one
compare only within one invocation.
"""

import argparse
import math
import os
import sys
import time
from typing import Iterator

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _floors  # noqa: E402
import population_gym  # noqa: E402
import zoo  # noqa: E402

import sonnet_like as snt  # noqa: E402

TASK = "HalfCheetah-v5"
LOG_STD_MIN, LOG_STD_MAX = -5.0, 2.0


class HandSAC(_floors.HandOffPolicy):
  """SAC written by hand for `seeds` (see the module docstring): stacked
  members with `stacked=True`, else one seed with unstacked variables;
  `run(steps)` trains.

  Args:
    seeds: One per member; member i's environment starts from seeds[i].
    settings: The recipe's scenario settings (with any override).
    hidden: Hidden sizes of the actor and the critics.
    learning_rate: Of the Adam.
    stacked: Variables with a leading member axis (else one seed only).
    steps_per_call: Learning steps a `tf.function` call
      (`_floors.HandOffPolicy`: 1 calls from Python each step, more step
      the environments inside the call).
    jit: Compile the step's function with XLA (steps_per_call 1).
  """

  def __init__(self, seeds, settings, hidden, learning_rate: float,
               stacked: bool = True, steps_per_call: int = 1,
               jit: bool = False):
    if settings.get("alpha") != "auto" or settings.get(
        "sde_sample_freq") or settings.get("normalize_observations") or (
            settings.get("log_std_init", 0.0) != 0.0):
      raise ValueError("HandSAC: a learned temperature, no gSDE, no "
                       "normalisation, log_std_init 0 only.")
    seeds = list(seeds)
    if not stacked and len(seeds) != 1:
      raise ValueError("HandSAC: unstacked takes one seed.")
    super().__init__([gym.make(TASK) for _ in seeds], seeds, settings,
                     stacked, steps_per_call=steps_per_call, jit=jit)
    self.members = len(seeds) if stacked else None
    obs, act = self.observation_size, self.action_size
    self.log_half = float(np.sum(np.log(self.half)))
    sizes, n = list(hidden), self.members
    self.actor = _floors.linear_layers([obs] + sizes + [2 * act], self.rng, n)
    self.critics = [
        _floors.linear_layers([obs + act] + sizes + [1], self.rng, n)
        for _ in range(2)]
    self.target_critics = [_floors.copy_layers(c) for c in self.critics]
    self.log_alpha = tf.Variable(np.full(
        [] if n is None else [n], math.log(settings["alpha_init"]),
        np.float32))
    self.target_entropy = -float(act)
    self.actor_variables = _floors.variables(self.actor)
    self.critic_variables = [v for c in self.critics
                             for v in _floors.variables(c)]
    self.target_variables = [v for c in self.target_critics
                             for v in _floors.variables(c)]
    self.adam = _floors.Adam(self.actor_variables + self.critic_variables +
                             [self.log_alpha], learning_rate)
    self.noise = tf.random.Generator.from_seed(seeds[0])

  def _sample(self, observation):
    """tanh-squashed actions in [-1, 1] and their log-probabilities."""
    mean, log_std = tf.split(_floors.mlp(self.actor, observation), 2, -1)
    log_std = tf.clip_by_value(log_std, LOG_STD_MIN, LOG_STD_MAX)
    eps = self.noise.normal(tf.shape(mean))
    raw = mean + tf.exp(log_std) * eps
    # log(1 - tanh(u)^2) = 2 (log 2 - u - softplus(-2u)).
    log_prob = tf.reduce_sum(
        -0.5 * tf.square(eps) - log_std - 0.5 * math.log(2 * math.pi) -
        2.0 * (math.log(2.0) - raw - tf.nn.softplus(-2.0 * raw)),
        axis=-1) - self.log_half
    return tf.tanh(raw), log_prob

  def _q(self, critic, observation, action):
    return _floors.mlp(critic, tf.concat([observation, action], -1))[..., 0]

  def update(self, batch, update_actor: bool):
    """One update of every member from its batch; the losses (critics',
    actor's, temperature's; one a member)."""
    del update_actor  # Every update trains the actor.
    observation, action, reward, next_observation, terminated = batch
    s = self.settings
    alpha = tf.exp(self.log_alpha)[..., None]  # Over the batch.
    next_action, next_log_prob = self._sample(next_observation)
    next_q = tf.minimum(*[self._q(c, next_observation, next_action)
                          for c in self.target_critics])
    target = reward + s["gamma"] * (1.0 - terminated) * (
        next_q - alpha * next_log_prob)
    with tf.GradientTape(persistent=True) as tape:
      q1, q2 = [self._q(c, observation, action) for c in self.critics]
      critic_loss = 0.5 * (tf.reduce_mean(tf.square(q1 - target), -1) +
                           tf.reduce_mean(tf.square(q2 - target), -1))
      new_action, log_prob = self._sample(observation)
      new_q = tf.minimum(*[self._q(c, observation, new_action)
                           for c in self.critics])
      actor_loss = tf.reduce_mean(alpha * log_prob - new_q, -1)
      alpha_loss = -tf.reduce_mean(self.log_alpha[..., None] * (
          tf.stop_gradient(log_prob) + self.target_entropy), -1)
      # Summed over the members: each member's gradient is its own.
      summed = [tf.reduce_sum(x) for x in (actor_loss, critic_loss,
                                           alpha_loss)]
    gradients = (tape.gradient(summed[0], self.actor_variables) +
                 tape.gradient(summed[1], self.critic_variables) +
                 tape.gradient(summed[2], [self.log_alpha]))
    del tape
    self.adam.apply(gradients)
    _floors.polyak(self.target_variables, self.critic_variables, s["tau"])
    return critic_loss, actor_loss, alpha_loss

  def explore(self, now):
    """Each member's action sampled at its observation (`now`, `[members,
    obs]`), in [-1, 1]."""
    if self.members is None:
      return self._sample(now)[0]
    return self._sample(now[:, None, :])[0][:, 0]

  def act(self, member: int):
    """Member `member`'s greedy actions for a batch of observations."""
    layers = [(w, b) if self.members is None else (w[member], b[member, 0])
              for w, b in self.actor]

    def act(observation):
      out = _floors.mlp(layers, tf.cast(observation, tf.float32))
      return self.center + self.half * tf.tanh(
          out[:, :self.action_size])

    return act


def recipe_settings(args):
  recipe = snt.scenarios.SAC.recipe(TASK)
  settings = dict(recipe.settings)
  if args.learning_starts is not None:
    settings["learning_starts"] = args.learning_starts
  return recipe, settings


def train_floor(args, stacked: bool = True):
  """(seconds, the trained `HandSAC`, its critics' losses)."""
  recipe, settings = recipe_settings(args)
  start = time.perf_counter()
  hand = HandSAC(range(args.members) if stacked else [0], settings,
                 recipe.hidden, recipe.learning_rate, stacked=stacked,
                 steps_per_call=args.floor_steps_per_call, jit=args.jit)
  losses = hand.run(args.steps)
  seconds = time.perf_counter() - start
  return seconds, hand, _floors.as_floats(losses)


def train_ours(args, **who):
  """(seconds, the trained scenario): population_gym.py's `train`, without
  the scenario's greedy evaluation after the last step (10 episodes a
  member), as the floor's time has none."""
  settings = dict(who)
  if args.steps_per_call is not None:
    settings["steps_per_call"] = args.steps_per_call
  scenario, seconds = population_gym.train(argparse.Namespace(
      algo="SAC", task=TASK, steps=args.steps,
      learning_starts=args.learning_starts), evaluate=False, **settings)
  return seconds, scenario


class Interleave(snt.scenarios.Hook):
  """Ours and the floor by turns, in one process: after each call of ours
  the floor runs its pieces (`HandOffPolicy.pieces`) until it has done as
  many steps, so a drift of the machine's speed hits both alike. Keeps
  each side's seconds by phase ("random": up to `learning_starts`, with
  the first update; "learning": the rest) and each learning piece's
  seconds a step."""

  def __init__(self, pieces: Iterator[int], learning_starts: int,
               floor_setup: float):
    self.pieces, self.starts = pieces, learning_starts
    self.seconds = {"ours": {"random": 0.0, "learning": 0.0},
                    "floor": {"random": floor_setup, "learning": 0.0}}
    self.per_step = {"ours": [], "floor": []}
    self.done = {"ours": 0, "floor": 0}
    self.mark = time.perf_counter()

  def _add(self, who: str, step: int, seconds: float) -> None:
    phase = "random" if step <= self.starts else "learning"
    self.seconds[who][phase] += seconds
    if phase == "learning" and self.done[who] >= self.starts:
      self.per_step[who].append(seconds / (step - self.done[who]))
    self.done[who] = step

  def step_end(self, scenario, step, logs):
    del scenario, logs
    self._add("ours", step, time.perf_counter() - self.mark)
    while self.done["floor"] < step:
      start = time.perf_counter()
      done = next(self.pieces)
      self._add("floor", done, time.perf_counter() - start)
    self.mark = time.perf_counter()


def interleaved(args) -> None:
  """`--interleave`: ours (the population) and the floor by turns
  (`Interleave`); prints the seconds by phase and the ratio."""
  recipe, settings = recipe_settings(args)
  start = time.perf_counter()
  hand = HandSAC(range(args.members), settings, recipe.hidden,
                 recipe.learning_rate, steps_per_call=args.floor_steps_per_call,
                 jit=args.jit)
  hook = Interleave(hand.pieces(args.steps, []), settings["learning_starts"],
                    time.perf_counter() - start)
  train_ours(args, population=list(range(args.members)), hooks=[hook])
  # The time after ours' last call (its end) is ours.
  hook.seconds["ours"]["learning"] += time.perf_counter() - hook.mark
  if hook.done["floor"] != args.steps:
    raise RuntimeError(f"The floor did {hook.done['floor']} steps, ours "
                       f"{args.steps}.")
  print(f"\nSAC {TASK}, {args.steps} env steps a member, {args.members} "
        f"members, ours and the floor by turns (each call of ours, then the "
        f"floor to the same step); steps_per_call: ours "
        f"{args.steps_per_call or 'the scenario default'}, the floor's "
        f"{args.floor_steps_per_call}")
  print("| phase | ours s | floor s | ours / floor |")
  print("|---|---|---|---|")
  for phase in ("random", "learning"):
    ours, floor = hook.seconds["ours"][phase], hook.seconds["floor"][phase]
    print(f"| {phase} | {ours:.1f} | {floor:.1f} | {ours / floor:.2f}x |")
  ours, floor = (sum(hook.seconds[who].values()) for who in ("ours", "floor"))
  print(f"| all | {ours:.1f} | {floor:.1f} | {ours / floor:.2f}x |")
  medians = {who: 1e3 * float(np.median(hook.per_step[who]))
             for who in ("ours", "floor")}
  print(f"a learning step, median over the pieces: ours "
        f"{medians['ours']:.2f} ms, the floor's {medians['floor']:.2f} ms "
        f"({medians['ours'] / medians['floor']:.2f}x)")
  print(f"# load after: {_floors.uptime()}")


def mean_return(args, acts, seeds) -> float:
  """The mean over `seeds` of each one's greedy mean return (zoo.py's
  `evaluate`), NaN without `--eval_episodes`."""
  if not args.eval_episodes:
    return float("nan")
  return float(np.mean([np.mean(zoo.evaluate(act, TASK, seed,
                                             args.eval_episodes))
                        for act, seed in zip(acts, seeds)]))


class _NoNoise:
  """`normal` of zeros: the policy's means as its samples (`check`)."""

  def normal(self, shape):
    return tf.zeros(shape)


def check(args) -> float:
  """Ours and `HandSAC` make the same two updates from one batch: seeds 0
  and 1 trained by ours alone, and the floor stacked (both members) and
  unstacked (seed 0); the largest difference between their weights after
  the updates. Both start from the same weights (ours' networks built
  first and copied into the floor's), the policy's samples are its means
  (ours: a patch of `Policy.sample`; the floor: zero noise), and ours'
  buffer gives its first `batch_size` transitions instead of a random
  draw (a patch of `ReplayBuffer.sample`; ours trains `--steps` steps,
  the updates at the last two)."""
  # pylint: disable=protected-access,g-import-not-at-top
  from sonnet_like.scenarios.rl.parts import policies
  from sonnet_like.scenarios.rl.parts import replay
  recipe, settings = recipe_settings(args)
  steps = args.steps
  tf.random.set_seed(0)  # Ours' first weights.
  settings.update(num_env_steps=steps, learning_starts=steps - 1)
  env = gym.make(TASK)
  obs = env.observation_space.shape[0]
  act = env.action_space.shape[0]

  def first_rows(self, batch_size, rng):
    del rng
    return replay.Transition(*[v[:batch_size] for v in self.storage])

  def mean(self, outputs, rng, features=None):
    del rng
    return self.mean_and_log_std(outputs, features)[0]

  patched = ((replay.ReplayBuffer, "sample", first_rows),
             (policies.Policy, "sample", mean))
  saved = [getattr(owner, name) for owner, name, _ in patched]
  runs = []
  try:
    for owner, name, value in patched:
      setattr(owner, name, value)
    for seed in (0, 1):
      actor, critic = recipe.networks()
      twin = recipe.networks()[1]
      actor(tf.zeros([1, obs]))
      for network in (critic, twin):
        network(tf.zeros([1, obs + act]))
      start = [[(layer.w.numpy(), layer.b.numpy()) for layer in net._layers]
               for net in (actor, critic, twin)]
      scenario = recipe.scenario(**dict(
          settings, seed=seed, progress=False, eval_every=None,
          steps_per_call=args.steps_per_call or 1))
      scenario(actor, critic, recipe.optimizer(), TASK, twin_critic=twin)
      batch = [v[:settings["batch_size"]].numpy().astype(np.float32)
               for v in scenario.buffer.storage]
      trained = [v for net in (actor, critic, twin, scenario.target_critic,
                               scenario.target_twin_critic)
                 for layer in net._layers for v in (layer.w, layer.b)]
      state = scenario._state
      runs.append((start, batch, trained + [state.log_alpha],
                   [float(getattr(state, name)) for name in (
                       "critic_loss", "actor_loss", "alpha_loss")]))
  finally:
    for (owner, name, _), value in zip(patched, saved):
      setattr(owner, name, value)
  gaps = []
  # The floor stacked (both ways of running it) and unstacked.
  for stacked, steps_per_call in ((True, 1), (True, 2), (False, 1)):
    members = 2 if stacked else 1
    hand = HandSAC(range(members), settings, recipe.hidden,
                   recipe.learning_rate, stacked=stacked,
                   steps_per_call=steps_per_call)
    hand.noise = _NoNoise()
    for i, (start, *_) in enumerate(runs[:members]):
      for layers, weights in zip([hand.actor] + hand.critics, start):
        for (w, b), (w0, b0) in zip(layers, weights):
          if stacked:
            w[i].assign(w0)
            b[i, 0].assign(b0)
          else:
            w.assign(w0)
            b.assign(b0)
    for target, online in zip(hand.target_variables, hand.critic_variables):
      target.assign(online)
    batch = [np.stack([run[1][k] for run in runs[:members]]) if stacked
             else runs[0][1][k] for k in range(5)]
    now = np.zeros([members, obs], np.float32)
    _, losses = hand.learn_and_act(*batch, now, update_actor=True)
    if steps_per_call == 1:
      _, losses = hand.learn_and_act(*batch, now, update_actor=True)
    else:  # The second update inside a call, from the same batch.
      hand.observation = np.stack([env.reset(seed=i)[0] for i, env in
                                   enumerate(hand.envs)])
      hand._batch = lambda: tuple(batch)  # pylint: disable=cell-var-from-loop
      _, total = hand.chunk(tf.constant(1), tf.constant(now),
                            tf.constant(1, tf.int64))
      ours = sum(run[3][0] for run in runs[:members])
      loss_gap = abs(ours - float(total)) / abs(ours)  # Relative.
    floor = (hand.actor_variables + hand.critic_variables +
             hand.target_variables + [hand.log_alpha])
    for i, (start, _, trained, logged) in enumerate(runs[:members]):
      moved = max(float(np.abs((w[i] if stacked else w).numpy() - w0).max())
                  for (w, _), (w0, _) in zip(hand.actor, start[0]))
      gaps.append(max(
          float(np.abs(a.numpy() - (b[i] if stacked else b).numpy()).max())
          for a, b in zip(trained, floor)))
      if steps_per_call == 1:
        loss_gap = max(abs(a - float(b[i] if stacked else b)) / abs(a)
                       for a, b in zip(logged, losses))  # Relative.
        losses_are = "losses"
      else:
        losses_are = "critics' losses summed over the members"
      gaps.append(loss_gap)
      kind = "stacked" if stacked else "unstacked"
      print(f"check: member {i} of the floor {kind}, steps_per_call "
            f"{steps_per_call}: after 2 updates from one batch, its "
            f"{len(floor)} variables differ from ours by at most "
            f"{gaps[-2]:.3g} (its actor's weights moved by up to "
            f"{moved:.3g}), the second update's {losses_are} by "
            f"{loss_gap:.2g} of their size (ours: critics' "
            f"{logged[0]:.5g}, actor's {logged[1]:.5g}, temperature's "
            f"{logged[2]:.5g})")
  return max(gaps)


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--members", type=int, default=10,
                      help="seeds 0..members-1")
  _floors.add_off_policy_arguments(parser)
  parser.add_argument("--rounds", type=int, default=1)
  parser.add_argument("--steps_per_call", type=int, default=None,
                      help="ours (population and solo); default the "
                      "scenario's, as population_gym.py")
  parser.add_argument("--eval_episodes", type=int, default=2,
                      help="a member; 0 skips the evaluation")
  parser.add_argument("--floor_solo", action="store_true",
                      help="also time the floor with one member, unstacked")
  parser.add_argument("--interleave", action="store_true",
                      help="ours (the population) and the floor by turns, "
                      "in one run each: seconds by phase")
  args = _floors.timing_run(parser, check)
  if args is None:
    return
  if args.interleave:
    interleaved(args)
    return
  seeds = list(range(args.members))
  times = {}
  returns = {}
  runs = ["population", "floor", "solo"] + (
      ["floor_solo"] if args.floor_solo else [])
  for r in range(args.rounds):
    for who in runs if r % 2 == 0 else runs[::-1]:
      if who == "population":
        seconds, scenario = train_ours(args, population=seeds)
        value = float("nan")
        if args.eval_episodes:
          member_returns = []
          for i, seed in enumerate(seeds):
            with scenario.as_member(i):  # Acts as member i inside it.
              member_returns.append(np.mean(zoo.evaluate(
                  scenario.act, TASK, seed, args.eval_episodes)))
          value = float(np.mean(member_returns))
      elif who == "solo":
        seconds, scenario = train_ours(args, seed=0)
        value = mean_return(args, [scenario.act], [0])
      else:
        stacked = who == "floor"
        seconds, hand, losses = train_floor(args, stacked)
        members = args.members if stacked else 1
        value = mean_return(args, [hand.act(i) for i in range(members)],
                            seeds[:members])
        if losses:
          tenth = max(1, len(losses) // 10)
          print(f"  {who}: critics' loss (summed over the members), first "
                f"tenth {np.mean(losses[:tenth]):.4g}, last tenth "
                f"{np.mean(losses[-tenth:]):.4g} (of {len(losses)} values: "
                "one an update, or a call's mean)")
      times.setdefault(who, []).append(seconds)
      returns.setdefault(who, []).append(value)
      print(f"  round {r} {who}: {seconds:.1f} s, greedy return (mean over "
            f"members) {value:.1f}", flush=True)
  mean = {who: float(np.mean(t)) for who, t in times.items()}
  print(f"\nSAC {TASK}, {args.steps} env steps a member, {args.members} "
        f"members; steps_per_call: ours "
        f"{args.steps_per_call or 'the scenario default'}, the floor's "
        f"{args.floor_steps_per_call}{', XLA' if args.jit else ''}; means "
        f"over {args.rounds} round(s)")
  print("| run | seconds | greedy return (mean over members) |")
  print("|---|---|---|")
  names = {"population": f"ours, population of {args.members}",
           "floor": f"floor, {args.members} stacked by hand",
           "solo": "ours, seed 0 alone",
           "floor_solo": "floor, seed 0 alone (unstacked)"}
  for who in runs:
    print(f"| {names[who]} | {mean[who]:.1f} | "
          f"{np.mean(returns[who]):.1f} |")
  print(f"population / floor: {mean['population'] / mean['floor']:.2f}x; "
        f"population / solo: {mean['population'] / mean['solo']:.2f}x; "
        f"floor / solo: {mean['floor'] / mean['solo']:.2f}x")
  if args.floor_solo:
    print(f"floor / floor's solo: "
          f"{mean['floor'] / mean['floor_solo']:.2f}x; solo / floor's "
          f"solo: {mean['solo'] / mean['floor_solo']:.2f}x")
  print(f"# load after: {_floors.uptime()}")


if __name__ == "__main__":
  main()
