"""PPO on an Atari game: our recipe against the same training written by
hand in TensorFlow, in one process (the floor of issue 60's PPO Atari line).

For each seed, our scenario (`snt.scenarios.PPO.recipe(task)`, trained as
`benchmarks/zoo.py` trains it: `zoo.train_ours`, gymnasium environments)
and `HandPPO`, the same run written directly with TensorFlow, one after
the other (the order alternating from seed to seed, so a drift of the
machine's load hits both); then the greedy mean return of each over
`--eval_episodes` whole games (zoo.py's `evaluate`: our loop, the same
starts for both), so a reader sees that the floor learns too. Printed per
seed: our seconds, the floor's, ours / floor, both returns, the first and
last logged losses of both; then the median ratio and the load.

    python benchmarks/floor_ppo_atari.py                 # 100k, seeds 0-2
    python benchmarks/floor_ppo_atari.py --steps 3072 --seeds 0 \
        --eval_episodes 1                                # a smoke run
    python benchmarks/floor_ppo_atari.py --check         # same arithmetic?
    python benchmarks/floor_ppo_atari.py --sb3           # SB3 beside both

With `--sb3` each seed also trains Stable-Baselines3's PPO with the zoo's
hyperparameters (`zoo.train_sb3`), evaluated by the same loop: the three
in an order rotating from seed to seed.

`--check` trains both for five rollouts from the same weights and the
same random stream and prints their logs side by side. Measured (seed 0,
load ~3): rollout 1 equal in every printed digit (loss 0.01737, value
loss 0.065411, entropy 1.3857, approx. KL 0.00059028), rollout 2 but for
the policy loss' last two (-0.0008012 against -0.00080122), rollout 5
within float rounding (value loss 0.041314 against 0.041304, approx. KL
5.0631e-05 against 5.0191e-05, clip fraction 0.12476 against 0.12598);
16 minibatch updates a rollout in both. At 6,144 steps (load ~3-5) a
rollout with its update took ours 2.25-2.8 s, the floor 2.06-2.28 s
(first rollouts, with tracing: ours 4.3-6.1 s, the floor 2.5-3.0 s).

The floor steps the environments our run stepped: a copy of our
scenario's (`copy.deepcopy` of the `GymEnvironment` zoo.py made: the same
games, preprocessing, seed and worker processes, whatever zoo.py makes
them with at the time), reset with the seed, and stepped through the same
adapter (`GymEnvironment.python_step`), so stepping costs both the same.

`HandPPO` does per rollout what our PPO does with the recipe's settings
(8 environments, rollouts of 128 steps, 4 epochs of 4 shuffled minibatches
of 256, gamma 0.99, GAE lambda 0.95, the clipped surrogate with the clip
range 0.1 and the Adam rate 2.5e-4 both annealed linearly, `1 - rollouts
done / rollouts`, half the squared error of the values times 0.5, the
entropy bonus 0.01, advantages standardised per minibatch, gradients
clipped to global norm 0.5, Adam as `snt.optimizers.Adam`: epsilon 1e-8
added to sqrt(v_hat)): one Nature CNN torso (uint8 pixels scaled by 1/255,
convolutions 32 8x8/4, 64 4x4/2, 64 3x3/1, VALID, ReLU, a 512 ReLU layer)
under a policy head and a value head, initialised orthogonally (gain
sqrt(2), the policy head 0.01, the value head 1, biases zero), as plain
`tf.Variable`s. A Python loop steps the environments; one `tf.function`
acts (the torso once, both heads: the sampled action, its
log-probability and the value of the observation), one `tf.function`
runs a rollout's update epochs (a `tf.while_loop` of the minibatch
updates, Adam on TensorFlow's fused op); GAE in NumPy between them.

What the floor leaves out (ours does it): checkpoints, the run folder,
logs beyond the six loss means, episode statistics, the NaN guard (finite
checks, and the skip of a non-finite update), argument and shape checks,
the update policy machinery (precision, schedules as objects, a
population's stacking), the environment behind `tf.numpy_function` inside
a compiled rollout loop (the floor calls the environments from Python, the
acting graph once a step), and recomputing values after the rollout: our
PPO asks the critic for the values of the rollout's observations, of its
final observations (what each step reached before a reset, for
bootstrapping through time-limit truncations) and of the last observation
in one batch of 2 x 1024 + 8 after the rollout, where the floor keeps the
value of each observation from its acting call and evaluates a final
observation only where a step was truncated (the same numbers; a torso
pass over 2,056 observations less per rollout: counting a backward pass
as two forward ones, ours does about 15% more of the networks' arithmetic
than the floor; those 2,056 values took 0.12 s of a 2.1 s rollout with
its update here). The floor's random numbers come as ours do (its
generator seeded as the scenario's; Gumbel-max actions from a key drawn
each step; one key a rollout for the epochs' shuffled orders), so from
the same weights both sample the same actions and minibatches:
`--check` prints both runs' logs rollout by rollout. Both evaluate with
the same loop, outside the timing.

Not used: XLA. With `jit_compile=True` (measured on the shared 2-core
machine, load ~10) the acting call took 18 ms a step against 9-13 ms
without, a forward pass over 1,024 observations 0.64 s against 0.19-0.23
s, and the update epochs had not finished compiling after 10 minutes.
Nor a rollout loop inside one `tf.function` (the environments behind
`tf.numpy_function`, as ours): its 128 steps took 1.02-1.11 s against
the Python loop's 1.19-1.27 s, about 5% of a rollout with its update
(3-3.5 s there).

Run the full size on an otherwise idle machine; wall times on a shared one
compare only within one invocation.
"""

import argparse
import copy
import math
import os
import statistics
import sys
import time
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _floors  # noqa: E402
import zoo  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
import sonnet_like as snt  # noqa: E402

LOG_NAMES = ("loss", "policy_loss", "value_loss", "entropy", "approx_kl",
             "clip_fraction")
# The Nature CNN's convolutions: (filters, kernel, stride).
CONVS = ((32, 8, 4), (64, 4, 2), (64, 3, 1))


def orthogonal(rng: np.random.Generator, shape: list[int],
               gain: float) -> np.ndarray:
  """A (semi-)orthogonal `[prod(shape[:-1]), shape[-1]]` matrix times
  `gain`, reshaped to `shape` (QR of Gaussian noise, signs fixed)."""
  rows, cols = math.prod(shape[:-1]), shape[-1]
  q, r = np.linalg.qr(rng.standard_normal((max(rows, cols),
                                           min(rows, cols))))
  q *= np.sign(np.diag(r))
  if rows < cols:
    q = q.T
  return (gain * q).reshape(shape).astype(np.float32)


class Adam:
  """`_floors.Adam` with the learning rate given at each update (the
  recipe anneals it): Adam as `snt.optimizers.Adam` (epsilon added to
  sqrt(v_hat)), one `ResourceApplyAdam` per variable. The fused op
  computes `lr * sqrt(1 - b2^t) / (1 - b1^t) * m / (sqrt(v) + eps')`, and
  `eps' = eps * sqrt(1 - b2^t)` makes that the paper's rule."""

  def __init__(self, variables: list[tf.Variable], beta1: float = 0.9,
               beta2: float = 0.999, epsilon: float = 1e-8):
    self.variables = variables
    self.m = [tf.Variable(tf.zeros_like(v)) for v in variables]
    self.v = [tf.Variable(tf.zeros_like(v)) for v in variables]
    self.t = tf.Variable(0, dtype=tf.int64)
    self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon

  def apply(self, gradients: list[tf.Tensor], learning_rate: tf.Tensor):
    t = tf.cast(self.t.assign_add(1), tf.float32)
    beta1_power = tf.pow(self.beta1, t)
    beta2_power = tf.pow(self.beta2, t)
    epsilon = self.epsilon * tf.sqrt(1.0 - beta2_power)
    for var, m, v, g in zip(self.variables, self.m, self.v, gradients):
      tf.raw_ops.ResourceApplyAdam(
          var=var.handle, m=m.handle, v=v.handle, beta1_power=beta1_power,
          beta2_power=beta2_power, lr=learning_rate,
          beta1=tf.constant(self.beta1), beta2=tf.constant(self.beta2),
          epsilon=epsilon, grad=g)


class HandPPO:
  """PPO on Atari written by hand (see the module docstring).

  Args:
    settings: The recipe's scenario settings (`recipe.settings`), read for
      num_envs, rollout_length, num_epochs, num_minibatches, gamma,
      gae_lambda, clip_ratio, entropy_coef, value_coef, clip_norm.
    learning_rate: Adam's rate at the first rollout (annealed linearly).
    num_actions: The game's actions.
    observation_shape: `[84, 84, 4]`.
    hidden: The torso's hidden layer (512).
    seed: Seeds the weights and the generator (sampling, shuffling).
  """

  def __init__(self, settings: dict[str, Any], learning_rate: float,
               num_actions: int, observation_shape: list[int],
               hidden: int = 512, seed: int = 0):
    self.s = settings
    self.learning_rate = learning_rate
    rng = np.random.default_rng(seed)
    # Philox with the seed in the counter's high word: our scenario's
    # stream (`utils.seeded_generator`), so `--check` samples as ours.
    self.generator = tf.random.Generator.from_key_counter(0, [0, seed],
                                                          "philox")
    self.convs = []
    channels, side = observation_shape[-1], observation_shape[0]
    for filters, kernel, stride in CONVS:
      w = orthogonal(rng, [kernel, kernel, channels, filters], math.sqrt(2))
      self.convs.append((tf.Variable(w), tf.Variable(tf.zeros([filters])),
                         stride))
      channels, side = filters, (side - kernel) // stride + 1
    self.flat = side * side * channels
    self.hidden = (tf.Variable(orthogonal(rng, [self.flat, hidden],
                                          math.sqrt(2))),
                   tf.Variable(tf.zeros([hidden])))
    self.policy_head = (tf.Variable(orthogonal(rng, [hidden, num_actions],
                                               0.01)),
                        tf.Variable(tf.zeros([num_actions])))
    self.value_head = (tf.Variable(orthogonal(rng, [hidden, 1], 1.0)),
                       tf.Variable(tf.zeros([1])))
    self.variables = ([v for w, b, _ in self.convs for v in (w, b)] +
                      list(self.hidden) + list(self.policy_head) +
                      list(self.value_head))
    self.adam = Adam(self.variables)
    pixels = tf.TensorSpec([None] + list(observation_shape), tf.uint8)
    self.act = tf.function(self._act, input_signature=[pixels])
    self.value = tf.function(self._value, input_signature=[pixels])
    self.greedy = tf.function(self._greedy)
    size = settings["num_envs"] * settings["rollout_length"]
    self.update = tf.function(self._update, input_signature=[
        tf.TensorSpec([size] + list(observation_shape), tf.uint8),
        tf.TensorSpec([size], tf.int32), tf.TensorSpec([size], tf.float32),
        tf.TensorSpec([size], tf.float32), tf.TensorSpec([size], tf.float32),
        tf.TensorSpec([], tf.float32), tf.TensorSpec([], tf.float32),
        tf.TensorSpec([], tf.float32), tf.TensorSpec([], tf.float32)])

  def copy_from(self, actor: Any, critic: Any) -> None:
    """Takes the weights of our recipe's (built) actor and critic (for the
    `--check` comparison from the same start)."""
    ours = {v.name: v for v in actor.trainable_variables +
            critic.trainable_variables}
    names = [f"torso/conv_{i}/{p}:0" for i in range(3) for p in "wb"]
    names += ["torso/hidden/w:0", "torso/hidden/b:0", "actor_head/w:0",
              "actor_head/b:0", "critic_head/w:0", "critic_head/b:0"]
    for mine, name in zip(self.variables, names):
      mine.assign(ours[name])

  # ---- The networks. ----

  def _heads(self, observation: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
    """Logits `[batch, actions]` and values `[batch]`: the torso once."""
    x = tf.cast(observation, tf.float32) * (1.0 / 255.0)
    for w, b, stride in self.convs:
      x = tf.nn.relu(tf.nn.bias_add(
          tf.nn.conv2d(x, w, stride, "VALID"), b))
    x = tf.reshape(x, [-1, self.flat])
    x = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, self.hidden[0]),
                                  self.hidden[1]))
    logits = tf.nn.bias_add(tf.matmul(x, self.policy_head[0]),
                            self.policy_head[1])
    values = tf.nn.bias_add(tf.matmul(x, self.value_head[0]),
                            self.value_head[1])[:, 0]
    return logits, values

  def _act(self, observation):
    logits, values = self._heads(observation)
    seed = self.generator.make_seeds(1)[:, 0]
    uniform = tf.random.stateless_uniform(tf.shape(logits), seed,
                                          minval=1e-20, maxval=1.0)
    action = tf.argmax(logits - tf.math.log(-tf.math.log(uniform)), axis=-1,
                       output_type=tf.int32)
    log_prob = tf.gather(tf.nn.log_softmax(logits), action, batch_dims=1)
    return action, log_prob, values

  def _value(self, observation):
    return self._heads(observation)[1]

  def _greedy(self, observation):
    observation = tf.convert_to_tensor(observation, tf.uint8)
    return tf.argmax(self._heads(observation)[0], axis=-1,
                     output_type=tf.int32)

  # ---- The update. ----

  def _update(self, observations, actions, old_log_probs, advantages,
              targets, learning_rate, low, high, clip):
    """The rollout's epochs of minibatch updates; the means of the six
    losses over them."""
    s = self.s
    size = s["num_envs"] * s["rollout_length"]
    per_batch = size // s["num_minibatches"]
    sums = tf.zeros([6])
    # One shuffled order per epoch, drawn at once (as ours).
    orders = tf.argsort(tf.random.stateless_uniform(
        [s["num_epochs"], size], self.generator.make_seeds(1)[:, 0]), axis=1)
    for epoch in tf.range(s["num_epochs"]):
      for i in tf.range(s["num_minibatches"]):
        index = orders[epoch, i * per_batch:(i + 1) * per_batch]
        advantage = tf.gather(advantages, index)
        mean, variance = tf.nn.moments(advantage, axes=[0])
        advantage = (advantage - mean) / (tf.sqrt(variance) + 1e-8)
        old_log_prob = tf.gather(old_log_probs, index)
        target = tf.gather(targets, index)
        with tf.GradientTape() as tape:
          logits, values = self._heads(tf.gather(observations, index))
          log_probs = tf.nn.log_softmax(logits)
          log_prob = tf.gather(log_probs, tf.gather(actions, index),
                               batch_dims=1)
          entropy = -tf.reduce_mean(tf.reduce_sum(
              tf.exp(log_probs) * log_probs, axis=-1))
          log_ratio = log_prob - old_log_prob
          ratio = tf.exp(log_ratio)
          policy_loss = -tf.reduce_mean(tf.minimum(
              ratio * advantage,
              tf.clip_by_value(ratio, low, high) * advantage))
          value_loss = 0.5 * tf.reduce_mean(tf.square(values - target))
          loss = (policy_loss + s["value_coef"] * value_loss -
                  s["entropy_coef"] * entropy)
        gradients = tape.gradient(loss, self.variables)
        gradients, _ = tf.clip_by_global_norm(gradients, s["clip_norm"])
        self.adam.apply(gradients, learning_rate)
        approx_kl = tf.reduce_mean((ratio - 1.0) - log_ratio)
        clip_fraction = tf.reduce_mean(tf.cast(tf.abs(ratio - 1.0) > clip,
                                               tf.float32))
        sums += tf.stack([loss, policy_loss, value_loss, entropy, approx_kl,
                          clip_fraction])
    return sums / (s["num_epochs"] * s["num_minibatches"])

  # ---- Training. ----

  def train(self, env: Any, num_env_steps: int, seed: int
            ) -> list[dict[str, float]]:
    """Trains on `env` (an `snt.envs.GymEnvironment` of `num_envs` games,
    reset here with `seed`) for `num_env_steps` (rounded up to whole
    rollouts); each rollout's logs: the six loss means over its updates,
    "updates", "reward" (its training rewards, clipped, summed per
    environment) and "seconds" (since the start, at its update's end)."""
    s = self.s
    n, length = s["num_envs"], s["rollout_length"]
    gamma, lam = s["gamma"], s["gae_lambda"]
    rollouts = -(-num_env_steps // (n * length))
    observation = env.reset(seed=seed).numpy()
    observations = np.zeros((length,) + observation.shape, np.uint8)
    actions = np.zeros((length, n), np.int32)
    log_probs, values, rewards, final_values = (
        np.zeros((length, n), np.float32) for _ in range(4))
    terminated, truncated = (np.zeros((length, n), bool) for _ in range(2))
    logs = []
    start = time.perf_counter()
    for k in range(rollouts):
      final_values[:] = 0.0
      for t in range(length):
        observations[t] = observation
        action, log_prob, value = self.act(observation)
        actions[t], log_probs[t], values[t] = action, log_prob, value
        (observation, rewards[t], terminated[t], truncated[t],
         final) = env.python_step(actions[t])
        if truncated[t].any():  # Bootstrap from what the step reached.
          final_values[t, truncated[t]] = self.value(
              final[truncated[t]]).numpy()
      last_value = self.value(observation).numpy()
      # GAE: V(s_{t+1}) of the step's own episode, 0 after a terminal.
      following = np.concatenate([values[1:], last_value[None]])
      following = np.where(truncated, final_values, following)
      following = np.where(terminated, 0.0, following).astype(np.float32)
      deltas = rewards + np.float32(gamma) * following - values
      keep = np.float32(gamma * lam) * (~(terminated | truncated))
      advantages = np.zeros_like(values)
      running = np.zeros(n, np.float32)
      for t in reversed(range(length)):
        running = deltas[t] + keep[t] * running
        advantages[t] = running
      factor = 1.0 - k / rollouts  # Both schedules', rollouts done.
      clip = s["clip_ratio"] * factor
      means = self.update(
          observations.reshape((n * length,) + observation.shape[1:]),
          actions.reshape(-1), log_probs.reshape(-1),
          advantages.reshape(-1), (advantages + values).reshape(-1),
          np.float32(self.learning_rate * factor), np.float32(1.0 - clip),
          np.float32(1.0 + clip), np.float32(clip)).numpy()
      logs.append(dict(zip(LOG_NAMES, means.tolist()),
                       updates=s["num_epochs"] * s["num_minibatches"],
                       reward=float(rewards.sum()) / n,
                       seconds=time.perf_counter() - start))
    return logs


# ---- The two contenders. ----

def train_ours(args, seed: int) -> tuple[float, Any]:
  """Our recipe as zoo.py trains it (`train_ours`, gymnasium)."""
  return zoo.train_ours(zoo.BY_NAME[f"ppo-{args.task}"], "gym", seed,
                        args.steps, 1)


def train_floor(args, seed: int, template: Any
                ) -> tuple[float, HandPPO, list[dict[str, float]]]:
  """`HandPPO` with the recipe's settings on a copy of `template` (our
  run's environments); (wall seconds, the trained floor, its logs)."""
  recipe = snt.scenarios.PPO.recipe(args.task)
  start = time.perf_counter()
  env = copy.deepcopy(template)
  hand = HandPPO(recipe.settings, recipe.learning_rate,
                 env.action_space.num_actions,
                 env.observation_spec.shape.as_list(), recipe.hidden[0],
                 seed=seed)
  logs = hand.train(env, args.steps, seed)
  seconds = time.perf_counter() - start
  env.close()
  return seconds, hand, logs


def _first_last(logs: dict[str, list[float]]) -> str:
  return ", ".join(f"{name} {logs[name][0]:.4g} -> {logs[name][-1]:.4g}"
                   for name in ("value_loss", "entropy", "approx_kl",
                                "clip_fraction", "reward")
                   if name in logs)


def check(args) -> None:
  """Both from the same weights, environments and random stream for
  `--steps`, their logs per rollout side by side (ours logging every
  rollout): they sample the same actions and minibatches, so the rows
  agree to float rounding (which grows slowly, rollout by rollout)."""
  args.steps = args.steps or 5_120  # Five rollouts.
  seed = args.seeds[0]
  recipe = snt.scenarios.PPO.recipe(args.task)
  tf.random.set_seed(seed)
  scenario = recipe.scenario(seed=seed, num_env_steps=args.steps,
                             progress=False, eval_every=None, log_every=1)
  env = snt.envs.make(zoo.env_of(args.task, training=True),
                      num_envs=recipe.settings["num_envs"], seed=seed)
  actor, critic = recipe.networks()
  observation = tf.zeros([1] + env.observation_spec.shape.as_list(),
                         tf.uint8)
  actor(observation), critic(observation)  # Built, to copy their weights.
  hand = HandPPO(recipe.settings, recipe.learning_rate,
                 env.action_space.num_actions,
                 env.observation_spec.shape.as_list(), recipe.hidden[0],
                 seed=seed)
  hand.copy_from(actor, critic)
  ours_count = len({v.ref() for v in actor.trainable_variables +
                    critic.trainable_variables})
  print(f"# variables: ours {ours_count}, floor {len(hand.variables)}; "
        f"parameters: floor "
        f"{sum(int(tf.size(v)) for v in hand.variables):,}")
  floor_env = copy.deepcopy(env)
  start = time.perf_counter()
  history = scenario(actor, critic, recipe.optimizer(), env)
  ours_seconds = time.perf_counter() - start
  start = time.perf_counter()
  floor_logs = hand.train(floor_env, args.steps, seed)
  floor_seconds = time.perf_counter() - start
  print(f"# {args.task}, {args.steps} steps, seed {seed}: ours "
        f"{ours_seconds:.1f} s, floor {floor_seconds:.1f} s (tracing "
        f"included); load {_floors.uptime()}")
  print("| rollout | who | updates | " + " | ".join(LOG_NAMES) + " |")
  print("|---|---|---|" + "---|" * len(LOG_NAMES))
  for k, logs in enumerate(floor_logs):
    ours = {name: history.train[name][k] for name in LOG_NAMES + ("updates",)}
    for who, row in (("ours", ours), ("floor", logs)):
      print(f"| {k + 1} | {who} | {row['updates']:.0f} | " + " | ".join(
          f"{row[name]:.5g}" for name in LOG_NAMES) + " |")
  env.close()
  floor_env.close()


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--task", default="BreakoutNoFrameskip-v4")
  parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
  parser.add_argument("--steps", type=int,
                      help="agent steps (4 frames each); default 100,000, "
                      "with --check 5,120 (five rollouts)")
  parser.add_argument("--eval_episodes", type=int, default=5,
                      help="whole games of the greedy policy per run")
  parser.add_argument("--sb3", action="store_true",
                      help="also train SB3's PPO on each seed")
  parser.add_argument("--check", action="store_true",
                      help="only compare ours and the floor from the same "
                      "weights, rollout by rollout")
  args = _floors.timing_run(parser, check, steps=100_000)
  if args is None:
    return
  rows, template = [], None
  contenders = ("ours", "floor") + (("sb3",) if args.sb3 else ())
  for k, seed in enumerate(args.seeds):
    # Ours first at the first seed: the floor copies its environments.
    order = contenders[k % len(contenders):] + contenders[
        :k % len(contenders)]
    result = {}
    for who in order:
      if who == "ours":
        seconds, scenario = train_ours(args, seed)
        if template is not None:
          template.close()
        template = scenario.env
        act = zoo._greedy(scenario)  # pylint: disable=protected-access
        logs = scenario.history.train
      elif who == "floor":
        seconds, hand, floor_logs = train_floor(args, seed, template)
        act = hand.greedy
        logs = {name: [row[name] for row in floor_logs]
                for name in LOG_NAMES + ("reward",)}
        at = [row["seconds"] for row in floor_logs]
        steady = (f", then {(at[-1] - at[0]) / (len(at) - 1):.2f} s a "
                  f"rollout" if len(at) > 1 else "")
        print(f"  seed {seed} floor: first rollout done {at[0]:.1f} s "
              f"into its training{steady}", flush=True)
      else:
        seconds, act = zoo.train_sb3(zoo.BY_NAME[f"ppo-{args.task}"], seed,
                                     args.steps)
        logs = {}
      returns = zoo.evaluate(act, args.task, seed, args.eval_episodes)
      result[who] = (seconds, float(np.mean(returns)))
      print(f"  seed {seed} {who}: {seconds:.1f} s, greedy return "
            f"{np.mean(returns):.1f} ({args.eval_episodes} games); "
            f"{_first_last(logs)}", flush=True)
    rows.append((seed, result))
  if template is not None:
    template.close()
  print(f"\nPPO {args.task}, {args.steps:,} agent steps")
  header = ["seed"] + [f"{who} (s)" for who in contenders] + [
      "ours / floor"] + (["ours / SB3"] if args.sb3 else []) + [
          f"{who}'s return" for who in contenders]
  print("| " + " | ".join(header) + " |")
  print("|---" * len(header) + "|")
  for seed, result in rows:
    cells = [str(seed)] + [f"{result[who][0]:.1f}" for who in contenders]
    cells.append(f"{result['ours'][0] / result['floor'][0]:.2f}x")
    if args.sb3:
      cells.append(f"{result['ours'][0] / result['sb3'][0]:.2f}x")
    cells += [f"{result[who][1]:.1f}" for who in contenders]
    print("| " + " | ".join(cells) + " |")
  for other in contenders[1:]:
    ratios = [result["ours"][0] / result[other][0] for _, result in rows]
    print(f"median ours / {other}: {statistics.median(ratios):.2f}x")
  print("mean seconds: " + ", ".join(
      f"{who} {np.mean([result[who][0] for _, result in rows]):.1f}"
      for who in contenders) + "; mean returns: " + ", ".join(
          f"{who} {np.mean([result[who][1] for _, result in rows]):.1f}"
          for who in contenders))
  print(f"# load after: {_floors.uptime()}")


if __name__ == "__main__":
  main()
