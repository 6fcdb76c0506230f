"""What the hand-written floors of `floor_td3.py` and
`floor_sac_population.py` share (`floor_ppo_atari.py` its start,
`timing_run`): networks as plain `tf.Variable`s, Adam on
TensorFlow's fused op, Polyak moves, a NumPy replay buffer, the training
loop (`HandOffPolicy`), the load.

Nothing here uses `sonnet_like`: a floor is the work written as a user
would write it with TensorFlow alone. With `members` the variables gain a
leading axis of that many independent copies (a population stacked by
hand: batched products, each member's Adam elementwise its own).
"""

import argparse
import subprocess
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import tensorflow as tf


def uptime() -> str:
  """`uptime`'s line (the load averages), for the printed record."""
  return subprocess.run(["uptime"], capture_output=True,
                        text=True).stdout.strip()


def add_off_policy_arguments(parser: argparse.ArgumentParser) -> None:
  """The settings `floor_td3.py` and `floor_sac_population.py` share."""
  parser.add_argument("--steps", type=int, default=30_000)
  parser.add_argument("--learning_starts", type=int, default=None,
                      help="override the recipe's 10,000 (smoke runs)")
  parser.add_argument("--floor_steps_per_call", type=int, default=100,
                      help="the floor's learning steps a call (1: a call "
                      "from Python each step)")
  parser.add_argument("--jit", action="store_true",
                      help="compile the floor's step with XLA "
                      "(--floor_steps_per_call 1)")
  parser.add_argument("--check", action="store_true",
                      help="only compare two updates of ours and the "
                      "floor's from one batch (`--steps` 300 is plenty)")


def timing_run(parser: argparse.ArgumentParser,
               check: Callable[[argparse.Namespace], Any],
               **timing_defaults: Any) -> argparse.Namespace | None:
  """Parses the command line. With `--check`, runs `check` and returns
  None; otherwise fills the settings left None from `timing_defaults`,
  prints the settings and the load and returns them."""
  args = parser.parse_args()
  if args.check:
    check(args)
    return None
  for name, value in timing_defaults.items():
    if getattr(args, name) is None:
      setattr(args, name, value)
  print(f"# {vars(args)}")
  print(f"# load before: {uptime()}", flush=True)
  return args


Layers = list[tuple[tf.Variable, tf.Variable]]


def linear_layers(sizes: Sequence[int], rng: np.random.Generator,
                  members: int | None = None) -> Layers:
  """`(w, b)` per layer of an MLP with `sizes` (input first): weights
  uniform in +-1/sqrt(fan_in), biases zero (PyTorch's `nn.Linear` without
  its bias draw: the recipes' `pytorch_init`). With `members`, weights
  `[members, in, out]` and biases `[members, 1, out]`, each member drawn
  on its own."""
  layers = []
  lead = [] if members is None else [members]
  for fan_in, fan_out in zip(sizes, sizes[1:]):
    bound = 1.0 / np.sqrt(fan_in)
    w = rng.uniform(-bound, bound, lead + [fan_in, fan_out])
    b = np.zeros(lead + ([1] if members else []) + [fan_out])
    layers.append((tf.Variable(w.astype(np.float32)),
                   tf.Variable(b.astype(np.float32))))
  return layers


def copy_layers(layers: Layers) -> Layers:
  """New variables equal to `layers`' (a target network)."""
  return [(tf.Variable(w), tf.Variable(b)) for w, b in layers]


def variables(layers: Layers) -> list[tf.Variable]:
  return [v for pair in layers for v in pair]


def mlp(layers: Layers, x: tf.Tensor) -> tf.Tensor:
  """ReLU between the layers, none after the last. `x` `[batch, in]` (a
  `MatMul`, a `BiasAdd`) or `[members, batch, in]` (a batched product)."""
  for i, (w, b) in enumerate(layers):
    if x.shape.rank == 2:
      x = tf.nn.bias_add(tf.matmul(x, w), b)
    else:
      x = tf.matmul(x, w) + b
    if i < len(layers) - 1:
      x = tf.nn.relu(x)
  return x


class Adam:
  """Adam as in the paper (epsilon added to sqrt(v_hat), as
  `snt.optimizers.Adam`), one `ResourceApplyAdam` per variable: the fused
  op computes `lr * sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps')`,
  so `eps' = eps * sqrt(1 - b2^t)` makes it the paper's rule exactly.
  Elementwise, so on stacked variables each member's Adam is its own."""

  def __init__(self, variables_: Sequence[tf.Variable], learning_rate: float,
               beta1: float = 0.9, beta2: float = 0.999,
               epsilon: float = 1e-8):
    self.variables = list(variables_)
    self.m = [tf.Variable(tf.zeros_like(v)) for v in self.variables]
    self.v = [tf.Variable(tf.zeros_like(v)) for v in self.variables]
    self.t = tf.Variable(0, dtype=tf.int64)
    self.lr, self.beta1, self.beta2 = learning_rate, beta1, beta2
    self.epsilon = epsilon

  def apply(self, gradients: Sequence[tf.Tensor]) -> None:
    t = tf.cast(self.t.assign_add(1), tf.float32)
    beta1_power = tf.pow(tf.constant(self.beta1), t)
    beta2_power = tf.pow(tf.constant(self.beta2), t)
    epsilon = self.epsilon * tf.sqrt(1.0 - beta2_power)
    for var, m, v, g in zip(self.variables, self.m, self.v, gradients):
      tf.raw_ops.ResourceApplyAdam(
          var=var.handle, m=m.handle, v=v.handle, beta1_power=beta1_power,
          beta2_power=beta2_power, lr=tf.constant(self.lr),
          beta1=tf.constant(self.beta1), beta2=tf.constant(self.beta2),
          epsilon=epsilon, grad=g)


def polyak(targets: Sequence[tf.Variable], online: Sequence[tf.Variable],
           tau: float) -> None:
  """Each target moved by `tau` towards its online variable."""
  for t, o in zip(targets, online):
    t.assign(tau * o + (1.0 - tau) * t)


class Replay:
  """A ring buffer of transitions in NumPy arrays, sampled uniformly with
  replacement (per member, with `members`: arrays `[capacity, members,
  ...]`, a step's rows written at once; a sample `[members, batch, ...]`).
  Observations and actions float32, rewards and terminations float32."""

  def __init__(self, capacity: int, observation_size: int, action_size: int,
               members: int | None = None):
    lead = [capacity] + ([] if members is None else [members])
    # np.zeros maps pages lazily: only the rows written cost memory.
    self.observation = np.zeros(lead + [observation_size], np.float32)
    self.next_observation = np.zeros(lead + [observation_size], np.float32)
    self.action = np.zeros(lead + [action_size], np.float32)
    self.reward = np.zeros(lead, np.float32)
    self.terminated = np.zeros(lead, np.float32)
    self.capacity, self.members = capacity, members
    self.position = self.size = 0

  def add(self, observation, action, reward, next_observation, terminated):
    i = self.position
    self.observation[i] = observation
    self.action[i] = action
    self.reward[i] = reward
    self.next_observation[i] = next_observation
    self.terminated[i] = terminated
    self.position = (i + 1) % self.capacity
    self.size = min(self.size + 1, self.capacity)

  def sample(self, rng: np.random.Generator, batch_size: int):
    """(observation, action, reward, next_observation, terminated)."""
    if self.members is None:
      index = rng.integers(0, self.size, batch_size)
      return tuple(a[index] for a in self._arrays())
    index = rng.integers(0, self.size, (self.members, batch_size))
    member = np.arange(self.members)[:, None]
    return tuple(a[index, member] for a in self._arrays())

  def _arrays(self):
    return (self.observation, self.action, self.reward,
            self.next_observation, self.terminated)


class HandOffPolicy:
  """The training loop of a hand-written off-policy agent on gymnasium
  environments, one per member (one for an unstacked agent).

  The first `learning_starts` steps play uniform random actions in the box
  from Python alone (no TensorFlow call); from the last of them on, one
  update a step. A subclass makes its networks and gives `update(batch,
  update_actor)` (traced: one update from a batch, `update_actor` a Python
  bool; returns its losses, the critics' first) and `explore(now)` (traced:
  the actions in [-1, 1] at observations `now`, `[envs, obs]`). Two ways
  to run the learning steps (`steps_per_call`):

  - 1: one `tf.function` call a step from Python, `learn_and_act`: the
    update from a batch the Python side drew, then the next actions,
    fetched with `.numpy()` for the environments;
  - K > 1: one call runs K steps in a `tf.while_loop`: the actions, the
    environments' step with the transitions stored and the next batch
    drawn (one `tf.numpy_function`), the update (`tf.cond` on the update
    count when `policy_delay` > 1).

  Args:
    envs: Gymnasium environments with Box spaces, one per member.
    seeds: One per environment (its first reset), the first seeding the
      NumPy generator (all seeds: `np.random.default_rng(seeds)`).
    settings: The recipe's settings (buffer_size, batch_size,
      learning_starts, policy_delay (default 1)).
    stacked: Batches `[members, batch, ...]` (else the one member's,
      `[batch, ...]`).
    steps_per_call: As above.
    jit: Compile the calls with XLA (K > 1 cannot: `tf.numpy_function`).
  """

  def __init__(self, envs: Sequence[Any], seeds: Sequence[int],
               settings: dict[str, Any], stacked: bool,
               steps_per_call: int = 1, jit: bool = False):
    for key in ("train_every", "gradient_steps"):
      if settings.get(key, 1) != 1:
        raise ValueError(f"The floors do one update a step; {key} must be "
                         "1.")
    if jit and steps_per_call > 1:
      raise ValueError("XLA cannot compile tf.numpy_function: jit with "
                       "steps_per_call 1 only.")
    self.envs, self.seeds, self.settings = list(envs), list(seeds), settings
    self.stacked, self.steps_per_call = stacked, steps_per_call
    space = self.envs[0].action_space
    self.observation_size = self.envs[0].observation_space.shape[0]
    self.action_size = space.shape[0]
    self.center = ((space.high + space.low) / 2).astype(np.float32)
    self.half = ((space.high - space.low) / 2).astype(np.float32)
    self.rng = np.random.default_rng(self.seeds)
    self.buffer = Replay(settings["buffer_size"], self.observation_size,
                         self.action_size, len(self.envs))
    self.delay = settings.get("policy_delay", 1)
    self.learn_and_act = tf.function(self._learn_and_act, jit_compile=jit)
    self.chunk = tf.function(self._chunk)
    self.observation = None

  # ---- What a subclass gives. ----

  def update(self, batch, update_actor: bool):
    raise NotImplementedError

  def explore(self, now):
    raise NotImplementedError

  # ---- Python side. ----

  def _play(self, unit: np.ndarray) -> None:
    """Steps each environment with its actions (`[envs, act]` in [-1,
    1]), stores the transitions, restarts ended episodes."""
    played = self.center + self.half * unit
    count = len(self.envs)
    next_observation = np.empty([count, self.observation_size], np.float32)
    reward = np.empty([count], np.float32)
    terminated = np.empty([count], np.float32)
    restart = []
    for i, env in enumerate(self.envs):
      next_observation[i], reward[i], terminated[i], truncated, _ = (
          env.step(played[i]))
      if terminated[i] or truncated:
        restart.append(i)
    self.buffer.add(self.observation, unit, reward, next_observation,
                    terminated)
    self.observation = next_observation
    for i in restart:
      self.observation[i] = self.envs[i].reset()[0]

  def _batch(self) -> tuple[np.ndarray, ...]:
    batch = self.buffer.sample(self.rng, self.settings["batch_size"])
    return batch if self.stacked else tuple(b[0] for b in batch)

  def _step_and_batch(self, unit: np.ndarray) -> tuple[np.ndarray, ...]:
    """`tf.numpy_function`'s: one step, then the next observations and
    batch."""
    self._play(unit)
    return (self.observation.copy(),) + self._batch()

  # ---- TensorFlow side. ----

  def _learn_and_act(self, observation, action, reward, next_observation,
                     terminated, now, update_actor: bool):
    """One update, then the actions at `now`; and the losses."""
    losses = self.update((observation, action, reward, next_observation,
                          terminated), update_actor)
    return self.explore(now), losses

  def _updated(self, batch, updates):
    """The update of count `updates` (1-based): with the actor's every
    `policy_delay`-th; the critics' loss."""
    if self.delay == 1:
      return self.update(batch, True)[0]
    return tf.cond(tf.equal(updates % self.delay, 0),
                   lambda: self.update(batch, True)[0],
                   lambda: self.update(batch, False)[0])

  def _chunk(self, steps, now, updates):
    """`steps` learning steps from observations `now` after `updates`
    updates; (the next observations, the updates' summed critics' loss)."""
    shapes = ([len(self.envs), self.observation_size],) + tuple(
        ([len(self.envs)] if self.stacked else []) + [batch, *rest]
        for batch in [self.settings["batch_size"]]
        for rest in ([self.observation_size], [self.action_size], [], [
            self.observation_size], []))

    def body(i, now, total):
      unit = self.explore(now)
      out = tf.numpy_function(self._step_and_batch, [unit],
                              [tf.float32] * 6, name="step_and_batch")
      for tensor, shape in zip(out, shapes):
        tensor.set_shape(shape)
      loss = self._updated(out[1:], updates + tf.cast(i, tf.int64) + 1)
      return i + 1, out[0], total + tf.reduce_sum(loss)

    _, now, total = tf.while_loop(lambda i, *_: i < steps, body,
                                  (tf.constant(0), now, tf.constant(0.0)))
    return now, total

  # ---- The run. ----

  def run(self, steps: int) -> list[tf.Tensor]:
    """Trains `steps` steps of every environment; the critics' loss of
    each update (one a member), or with `steps_per_call` > 1 of each call
    (summed over the members, mean over its updates): `as_floats` them
    once the time is taken."""
    losses = []
    for _ in self.pieces(steps, losses):
      pass
    return losses

  def pieces(self, steps: int, losses: list[tf.Tensor]) -> Iterator[int]:
    """`run(steps)` a piece at a time, its losses appended to `losses`:
    yields the steps done after every `steps_per_call` random steps and
    after each learning call (each learning step with `steps_per_call`
    1), so a caller can run something else between the pieces."""
    starts = self.settings["learning_starts"]
    if not 0 < starts <= steps:
      raise ValueError("The floors need 0 < learning_starts <= steps.")
    self.observation = np.stack([env.reset(seed=seed)[0] for env, seed in
                                 zip(self.envs, self.seeds)]
                                ).astype(np.float32)
    shape = [len(self.envs), self.action_size]
    for done in range(1, starts + 1):  # Uniform random actions.
      self._play(self.rng.uniform(-1.0, 1.0, shape).astype(np.float32))
      if done % self.steps_per_call == 0 and done < starts:
        yield done
    updates = 1  # The first, after the last random step.
    unit, (loss, *_) = self.learn_and_act(
        *self._batch(), self.observation, update_actor=self.delay == 1)
    losses.append(loss)
    yield starts
    left = steps - starts
    if self.steps_per_call == 1:
      for _ in range(left):
        self._play(unit.numpy())
        updates += 1
        unit, (loss, *_) = self.learn_and_act(
            *self._batch(), self.observation,
            update_actor=updates % self.delay == 0)
        losses.append(loss)
        yield starts + updates - 1
      return
    # The first call's actions are at self.observation: a chunk acts
    # again there (the same policy, a fresh draw of its noise).
    now = tf.constant(self.observation)
    while left:
      k = min(left, self.steps_per_call)
      now, total = self.chunk(tf.constant(k), now,
                              tf.constant(updates, tf.int64))
      losses.append(total / k)
      updates += k
      left -= k
      yield steps - left


def as_floats(losses: Sequence[tf.Tensor]) -> list[float]:
  """`HandOffPolicy.run`'s losses, each summed over the members."""
  return [float(tf.reduce_sum(x)) for x in losses]
