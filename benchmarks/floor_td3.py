"""TD3 Hopper-v5: our recipe against the same training written by hand in
TensorFlow, in one process (the floor of issue 60's TD3 speed line).

For each seed, our scenario (`snt.scenarios.TD3.recipe("Hopper-v5")`,
trained as `benchmarks/zoo.py` trains it on gymnasium: `train_ours`,
`steps_per_call` 100) and `HandTD3`, the same run written directly with
TensorFlow and gymnasium, one after the other (the order alternating from
seed to seed, so a drift of the machine's load hits both); then the
greedy mean return of each over `--eval_episodes` episodes (zoo.py's
`evaluate`: our loop, the same starts for both), so a reader sees that
the floor learns too. Printed per seed: our seconds, the floor's, ours /
floor, both returns; then the medians and the load.

    python benchmarks/floor_td3.py                          # 30k, seeds 0-2
    python benchmarks/floor_td3.py --steps 1500 --learning_starts 500 \
        --seeds 0 --eval_episodes 2                         # a smoke run
    python benchmarks/floor_td3.py --check --steps 300      # same updates?

`HandTD3` does per step what our TD3 does with the recipe's settings: one
Hopper-v5 step (gymnasium), the transition into a replay buffer of the
recipe's size (1M, NumPy arrays), uniform random actions in the box for
the first `learning_starts` steps, then the actor's action plus Gaussian
noise 0.1 (clipped to the box), and from step `learning_starts` on one
update a step: batch 256 drawn uniformly, twin 400-300 ReLU critics (a
halved sum of their mean squared errors) towards `r + gamma (1 - term)
min(Q1', Q2')(s', clip(actor'(s') + clip(0.2 N, -0.5, 0.5), -1, 1))`,
gamma 0.99; every second update the actor on `-Q1(s, actor(s))` and the
three targets moved by tau 0.005; Adam 1e-3 for the critics and its own
Adam for the actor (the paper's rule, as `snt.optimizers.Adam`, on
TensorFlow's fused `ResourceApplyAdam`); weights uniform in
+-1/sqrt(fan_in), biases zero (the recipe's `pytorch_init`). The warm-up
steps are Python alone; the learning steps run `--floor_steps_per_call`
(100) to a `tf.function` call, the environment stepped, the transition
stored and the next batch drawn by one `tf.numpy_function` a step, as
ours steps gymnasium inside its call (1: one call a step from Python, the
update and then the next action, fetched with `.numpy()`; `--jit` then
compiles it with XLA). `_floors.HandOffPolicy` is the loop.

`--check` trains ours `--steps` steps with its last two updates drawn
from the first 256 transitions and without target noise, and makes the
same two updates from the same weights and batch with the floor (both
ways of running it): it prints how far the weights and the losses are
apart (float rounding: ~1e-7 of weights that moved ~1e-3).

What the floor leaves out (ours does it): checkpoints and the run folder,
logs and their variables, the NaN guard (finite checks and the selects
that skip a non-finite update), episode statistics, argument and shape
checks, observation normalisation (off in the recipe, so nothing),
every warm-up step's compiled work (ours stores the transitions in
`tf.Variable`s inside its call), and one generator for all the random
numbers (the floor draws the buffer's indices and the warm-up actions
with NumPy, the noise with a `tf.random.Generator`). Both evaluate with
the same loop, outside the timing; both times include making the
environment, the variables and the tracing.

Run the full size on an otherwise idle machine; wall times on a shared one
compare only within one invocation.
"""

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _floors  # noqa: E402
import zoo  # noqa: E402

import sonnet_like as snt  # noqa: E402

TASK = "Hopper-v5"


class HandTD3(_floors.HandOffPolicy):
  """TD3 written by hand (see the module docstring); `run(steps)` trains.

  Args:
    env: A gymnasium environment with a Box observation and action space.
    settings: The recipe's scenario settings (`recipe.settings`, with any
      override), read for buffer_size, batch_size, learning_starts, tau,
      gamma, policy_delay, target_noise, target_noise_clip, noise_std.
    hidden: Hidden sizes of the actor and the critics.
    learning_rate: Of both Adams.
    seed: Seeds the weights, NumPy's draws, the noise and the environment.
    steps_per_call: Learning steps a `tf.function` call
      (`_floors.HandOffPolicy`: 1 calls from Python each step, more run
      the environment inside the call).
    jit: Compile the step's function with XLA (steps_per_call 1).
  """

  def __init__(self, env, settings, hidden, learning_rate: float, seed: int,
               steps_per_call: int = 1, jit: bool = False):
    super().__init__([env], [seed], settings, stacked=False,
                     steps_per_call=steps_per_call, jit=jit)
    if settings.get("exploration_noise", "gaussian") != "gaussian" or (
        settings.get("normalize_observations")):
      raise ValueError("HandTD3: Gaussian noise, no normalisation only.")
    obs, act = self.observation_size, self.action_size
    sizes = list(hidden)
    self.actor = _floors.linear_layers([obs] + sizes + [act], self.rng)
    self.critics = [_floors.linear_layers([obs + act] + sizes + [1], self.rng)
                    for _ in range(2)]
    self.target_actor = _floors.copy_layers(self.actor)
    self.target_critics = [_floors.copy_layers(c) for c in self.critics]
    self.actor_variables = _floors.variables(self.actor)
    self.critic_variables = [v for c in self.critics
                             for v in _floors.variables(c)]
    self.target_pairs = (
        _floors.variables(self.target_actor) + [
            v for c in self.target_critics for v in _floors.variables(c)],
        self.actor_variables + self.critic_variables)
    self.critic_adam = _floors.Adam(self.critic_variables, learning_rate)
    self.actor_adam = _floors.Adam(self.actor_variables, learning_rate)
    self.noise = tf.random.Generator.from_seed(seed)
    self.greedy_unit = tf.function(
        lambda x: tf.tanh(_floors.mlp(self.actor, x)))

  def _q(self, critic, observation, action):
    return _floors.mlp(critic, tf.concat([observation, action], -1))[:, 0]

  def update(self, batch, update_actor: bool):
    """One update from `batch`; the losses (critics', actor's or 0)."""
    observation, action, reward, next_observation, terminated = batch
    s = self.settings
    noise = tf.clip_by_value(
        s["target_noise"] * self.noise.normal(tf.shape(action)),
        -s["target_noise_clip"], s["target_noise_clip"])
    next_action = tf.clip_by_value(
        tf.tanh(_floors.mlp(self.target_actor, next_observation)) + noise,
        -1.0, 1.0)
    next_q = tf.minimum(
        *[self._q(c, next_observation, next_action)
          for c in self.target_critics])
    target = reward + s["gamma"] * (1.0 - terminated) * next_q
    with tf.GradientTape() as tape:
      q1, q2 = [self._q(c, observation, action) for c in self.critics]
      critic_loss = 0.5 * (tf.reduce_mean(tf.square(q1 - target)) +
                           tf.reduce_mean(tf.square(q2 - target)))
    self.critic_adam.apply(tape.gradient(critic_loss, self.critic_variables))
    actor_loss = tf.constant(0.0)
    if update_actor:  # A Python bool.
      with tf.GradientTape() as tape:
        actor_loss = -tf.reduce_mean(self._q(
            self.critics[0], observation,
            tf.tanh(_floors.mlp(self.actor, observation))))
      self.actor_adam.apply(tape.gradient(actor_loss, self.actor_variables))
      _floors.polyak(*self.target_pairs, s["tau"])
    return critic_loss, actor_loss

  def explore(self, now):
    """The actor's actions at `now` (`[1, obs]`) plus Gaussian noise,
    clipped to [-1, 1]."""
    drawn = self.settings["noise_std"] * self.noise.normal(
        [1, self.action_size])
    return tf.clip_by_value(tf.tanh(_floors.mlp(self.actor, now)) + drawn,
                            -1.0, 1.0)

  def act(self, observation: tf.Tensor) -> tf.Tensor:
    """Greedy actions for a batch of observations (evaluation)."""
    return self.center + self.half * self.greedy_unit(
        tf.cast(observation, tf.float32))


def train_floor(args, seed: int):
  """(seconds, the trained `HandTD3`, its critics' losses)."""
  recipe = snt_recipe()
  settings = dict(recipe.settings, **overrides(args))
  start = time.perf_counter()
  env = gym.make(TASK)
  hand = HandTD3(env, settings, recipe.hidden, recipe.learning_rate, seed,
                 steps_per_call=args.floor_steps_per_call, jit=args.jit)
  losses = hand.run(args.steps)
  seconds = time.perf_counter() - start
  return seconds, hand, _floors.as_floats(losses)


def train_ours(args, seed: int):
  """(seconds, the trained scenario): zoo.py's `train_ours` on gymnasium."""
  seconds, scenario = zoo.train_ours(
      zoo.BY_NAME[f"td3-{TASK}"], "gym", seed, args.steps,
      args.steps_per_call, overrides(args))
  return seconds, scenario


def snt_recipe():
  return snt.scenarios.TD3.recipe(TASK)


def overrides(args) -> dict:
  return ({} if args.learning_starts is None
          else {"learning_starts": args.learning_starts})


def check(args) -> float:
  """Ours and `HandTD3` make the same two updates (the second with the
  actor and the targets) from one batch: the largest difference between
  their weights after them. Both start from the same weights (ours'
  networks built first and copied into the floor's), the target policy
  noise is 0 and ours' buffer gives its first `batch_size` transitions
  instead of a random draw (a patch of `ReplayBuffer.sample` while ours
  trains: `--steps` steps, the updates at the last two)."""
  # pylint: disable=protected-access,g-import-not-at-top
  from sonnet_like.scenarios.rl.parts import replay
  recipe = snt_recipe()
  steps = args.steps
  tf.random.set_seed(0)  # Ours' first weights.
  settings = dict(recipe.settings, num_env_steps=steps,
                  learning_starts=steps - 1, target_noise=0.0)
  space = gym.make(TASK)
  obs = space.observation_space.shape[0]
  act = space.action_space.shape[0]
  actor, critic = recipe.networks()
  twin = recipe.networks()[1]
  actor(tf.zeros([1, obs]))
  for network in (critic, twin):
    network(tf.zeros([1, obs + act]))
  start = [[(layer.w.numpy(), layer.b.numpy()) for layer in net._layers]
           for net in (actor, critic, twin)]

  def first_rows(self, batch_size, rng):
    del rng
    return replay.Transition(*[v[:batch_size] for v in self.storage])

  sample = replay.ReplayBuffer.sample
  replay.ReplayBuffer.sample = first_rows
  try:
    scenario = recipe.scenario(**dict(
        settings, seed=0, progress=False, eval_every=None,
        steps_per_call=args.steps_per_call))
    scenario(actor, critic, recipe.optimizer(), TASK, twin_critic=twin)
  finally:
    replay.ReplayBuffer.sample = sample
  batch = [v[:settings["batch_size"]].numpy().astype(np.float32)
           for v in scenario.buffer.storage]
  state = scenario._state
  ours = [v for net in (actor, critic, twin, scenario.target_actor,
                        scenario.target_critic, scenario.target_twin_critic)
          for layer in net._layers for v in (layer.w, layer.b)]
  gaps = []
  for steps_per_call in (1, 2):  # Both ways of running the floor.
    hand = HandTD3(gym.make(TASK), settings, recipe.hidden,
                   recipe.learning_rate, 0, steps_per_call=steps_per_call)
    for layers, weights in zip([hand.actor] + hand.critics, start):
      for (w, b), (w0, b0) in zip(layers, weights):
        w.assign(w0)
        b.assign(b0)
    for target, online in zip(*hand.target_pairs):
      target.assign(online)
    now = np.zeros([1, obs], np.float32)
    _, losses = hand.learn_and_act(*batch, now, update_actor=False)
    if steps_per_call == 1:
      _, losses = hand.learn_and_act(*batch, now, update_actor=True)
      loss_gap = max(abs(float(ours) - float(floor)) / abs(float(ours))
                     for ours, floor in zip(
                         (state.critic_loss, state.actor_loss), losses))
    else:  # The second update inside a call, from the same batch.
      hand.observation = np.stack([hand.envs[0].reset(seed=0)[0]])
      hand._batch = lambda: tuple(batch)  # pylint: disable=cell-var-from-loop
      _, total = hand.chunk(tf.constant(1), tf.constant(now),
                            tf.constant(1, tf.int64))
      loss_gap = abs(float(state.critic_loss) - float(total)) / abs(
          float(state.critic_loss))
    floor = (hand.actor_variables + hand.critic_variables +
             hand.target_pairs[0])
    gaps += [max(float(np.abs(a.numpy() - b.numpy()).max())
                 for a, b in zip(ours, floor)), loss_gap]
    moved = max(float(np.abs(a.numpy() - b).max())
                for a, b in zip(hand.actor_variables,
                                [x for pair in start[0] for x in pair]))
    print(f"check, the floor's steps_per_call {steps_per_call}: after 2 "
          f"updates from one batch, ours and the floor's {len(floor)} "
          f"variables differ by at most {gaps[-2]:.3g} (the actor moved by "
          f"up to {moved:.3g}); the second update's losses by "
          f"{loss_gap:.2g} of their size (ours: critics' "
          f"{float(state.critic_loss):.5g}, actor's "
          f"{float(state.actor_loss):.5g})")
  return max(gaps)


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
  _floors.add_off_policy_arguments(parser)
  parser.add_argument("--steps_per_call", type=int, default=100,
                      help="ours, as zoo.py's default")
  parser.add_argument("--eval_episodes", type=int, default=10)
  args = _floors.timing_run(parser, check)
  if args is None:
    return
  rows = []
  for k, seed in enumerate(args.seeds):
    order = ("ours", "floor") if k % 2 == 0 else ("floor", "ours")
    result = {}
    for who in order:
      if who == "ours":
        seconds, scenario = train_ours(args, seed)
        act = zoo._greedy(scenario)  # pylint: disable=protected-access
        losses = None
      else:
        seconds, hand, losses = train_floor(args, seed)
        act = hand.act
      returns = zoo.evaluate(act, TASK, seed, args.eval_episodes)
      result[who] = (seconds, float(np.mean(returns)), losses)
      print(f"  seed {seed} {who}: {seconds:.1f} s, greedy return "
            f"{np.mean(returns):.1f}", flush=True)
    losses = result["floor"][2]
    if losses:
      tenth = max(1, len(losses) // 10)
      print(f"  seed {seed} floor: critics' loss, first tenth "
            f"{np.mean(losses[:tenth]):.4g}, last tenth "
            f"{np.mean(losses[-tenth:]):.4g} (of {len(losses)} values: "
            "one an update, or a call's mean)")
    rows.append((seed, result["ours"][0], result["floor"][0],
                 result["ours"][1], result["floor"][1]))
  print(f"\nTD3 {TASK}, {args.steps} env steps (steps_per_call: ours "
        f"{args.steps_per_call}, the floor's {args.floor_steps_per_call}"
        f"{', XLA' if args.jit else ''})")
  print("| seed | ours (s) | floor (s) | ours / floor | ours' return | "
        "floor's return |")
  print("|---|---|---|---|---|---|")
  for seed, ours, floor, ours_return, floor_return in rows:
    print(f"| {seed} | {ours:.1f} | {floor:.1f} | {ours / floor:.2f}x | "
          f"{ours_return:.1f} | {floor_return:.1f} |")
  ratios = [ours / floor for _, ours, floor, _, _ in rows]
  print(f"median ours / floor: {statistics.median(ratios):.2f}x "
        f"(mean seconds: ours {np.mean([r[1] for r in rows]):.1f}, floor "
        f"{np.mean([r[2] for r in rows]):.1f})")
  print(f"# load after: {_floors.uptime()}")


if __name__ == "__main__":
  main()
