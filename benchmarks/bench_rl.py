"""PPO update throughput: the PPO scenario against a hand-written loop.

Both run PPO on the in-graph CartPole (8 environments, rollouts of 128
steps, 4 epochs of 4 minibatches, 64-64 tanh MLPs by default, Adam) in one
process:

  (a) a hand-written `tf.function` doing one rollout (a `tf.while_loop`
      writing TensorArrays, episode bookkeeping with `EpisodeStats`), GAE
      and the minibatch epochs per call, the same maths as the scenario;
  (b) `snt.scenarios.PPO` with steps_per_call=K, K = 1 and 8.

Each contender runs a fixed number of iterations (rollout + update) per
round; rounds interleave the contenders, in reversed order every other
round. Tracing (time to the first finished call) is reported apart from the
steady-state speed, measured between the first and the last finished call.
Prints median iterations/s, env steps/s and the ratio of (b) to (a) (goal
>= 0.95). `--hidden 1024` widens both MLPs until the updates dominate.

    python benchmarks/bench_rl.py [--iterations 60] [--rounds 5] [--hidden 64]
"""

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top
import tensorflow_probability as tfp  # pylint: disable=g-import-not-at-top

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, _ROOT)
import sonnet_like as snt  # pylint: disable=g-import-not-at-top
from sonnet_like.scenarios.rl.parts import episodes  # pylint: disable=g-import-not-at-top

NUM_ENVS, LENGTH, EPOCHS, MINIBATCHES = 8, 128, 4, 4
GAMMA, LAM, CLIP, VALUE_COEF, LR = 0.99, 0.95, 0.2, 0.5, 3e-4


def _nets(width):
  tf.random.set_seed(0)
  return (snt.nets.MLP([width, width, 2], activation=tf.tanh, name="actor"),
          snt.nets.MLP([width, width, 1], activation=tf.tanh, name="critic"))


def handwritten(iterations, width):
  """Returns (seconds to the first call, steady iterations/s)."""
  env = snt.envs.CartPole(NUM_ENVS, seed=0)
  actor, critic = _nets(width)
  optimizer = keras.optimizers.Adam(LR)
  rng = tf.random.Generator.from_seed(0)
  stats = episodes.EpisodeStats(NUM_ENVS)
  env.reset(seed=0)
  obs = env.observation()
  actor(obs), critic(obs)
  variables = actor.trainable_variables + critic.trainable_variables
  size = NUM_ENVS * LENGTH
  per_batch = size // MINIBATCHES

  def value(x):
    return critic(x)[:, 0]

  @tf.function
  def iteration():
    def body(t, observation, arrays):
      logits = actor(observation)
      seed = rng.make_seeds(1)[:, 0]
      gumbel = -tf.math.log(-tf.math.log(tf.random.stateless_uniform(
          tf.shape(logits), seed, minval=1e-20, maxval=1.0)))
      action = tf.argmax(logits + gumbel, -1, output_type=tf.int32)
      log_prob = tfp.distributions.Categorical(logits=logits).log_prob(action)
      step = env.step(action)
      stats.update(step)
      values = (observation, action, log_prob, step.reward, step.terminated,
                step.truncated, step.final_observation)
      arrays = tuple(a.write(t, v) for a, v in zip(arrays, values))
      return t + 1, step.observation, arrays

    dtypes = (tf.float32, tf.int32, tf.float32, tf.float32, tf.bool, tf.bool,
              tf.float32)
    shapes = ([NUM_ENVS, 4], [NUM_ENVS], [NUM_ENVS], [NUM_ENVS], [NUM_ENVS],
              [NUM_ENVS], [NUM_ENVS, 4])
    arrays = tuple(tf.TensorArray(d, size=LENGTH, element_shape=s)
                   for d, s in zip(dtypes, shapes))
    _, last, arrays = tf.while_loop(
        lambda t, *_: t < LENGTH, body,
        (tf.constant(0), env.observation(), arrays),
        maximum_iterations=LENGTH)
    obs, act, old, rew, term, trunc, final = [a.stack() for a in arrays]
    flat = lambda x: tf.reshape(x, [size] + x.shape.as_list()[2:])
    every = value(tf.concat([flat(obs), flat(final), last], 0))
    values = tf.reshape(every[:size], [LENGTH, NUM_ENVS])
    final_values = tf.reshape(every[size:2 * size], [LENGTH, NUM_ENVS])
    following = tf.concat([values[1:], every[None, 2 * size:]], 0)
    following = tf.where(trunc, final_values, following)
    following = tf.where(term, 0.0, following)
    deltas = rew + GAMMA * following - values
    keep = GAMMA * LAM * (1.0 - tf.cast(term | trunc, tf.float32))
    advantages = tf.scan(lambda later, x: x[0] + x[1] * later,
                         (deltas, keep), initializer=tf.zeros([NUM_ENVS]),
                         reverse=True)
    data = (flat(obs), flat(act), flat(old), flat(advantages),
            flat(advantages + values))
    order = tf.argsort(tf.random.stateless_uniform(
        [EPOCHS, size], rng.make_seeds(1)[:, 0]), axis=1)
    order = tf.reshape(order, [EPOCHS * MINIBATCHES, per_batch])

    def update(i, total):
      o, a, old_lp, adv, target = (tf.gather(x, order[i]) for x in data)
      mean, var = tf.nn.moments(adv, [0])
      adv = (adv - mean) / (tf.sqrt(var) + 1e-8)
      with tf.GradientTape() as tape:
        dist = tfp.distributions.Categorical(logits=actor(o))
        ratio = tf.exp(dist.log_prob(a) - old_lp)
        policy_loss = -tf.reduce_mean(tf.minimum(
            ratio * adv, tf.clip_by_value(ratio, 1 - CLIP, 1 + CLIP) * adv))
        value_loss = 0.5 * tf.reduce_mean(tf.square(value(o) - target))
        loss = policy_loss + VALUE_COEF * value_loss
      grads = tape.gradient(loss, variables)
      optimizer.apply_gradients(zip(grads, variables))
      return i + 1, total + loss

    _, total = tf.while_loop(lambda i, _: i < EPOCHS * MINIBATCHES, update,
                             (tf.constant(0), tf.constant(0.0)),
                             maximum_iterations=EPOCHS * MINIBATCHES)
    return total

  start = time.perf_counter()
  float(iteration())
  first = time.perf_counter()
  for _ in range(iterations - 1):
    loss = iteration()
  float(loss)
  return first - start, (iterations - 1) / (time.perf_counter() - first)


class _Clock(snt.scenarios.Hook):
  """Times the first call and the rest."""

  def begin(self, scenario):
    self.start, self.first, self.first_steps = time.perf_counter(), None, 0

  def step_end(self, scenario, step, logs):
    if self.first is None:
      self.first, self.first_steps = time.perf_counter(), step

  def end(self, scenario):
    self.last = time.perf_counter()


def scenario(iterations, k, width):
  """Returns (seconds to the first call, steady iterations/s)."""
  env = snt.envs.CartPole(NUM_ENVS, seed=0)
  actor, critic = _nets(width)
  clock = _Clock()
  ppo = snt.scenarios.PPO(
      iterations * NUM_ENVS * LENGTH, num_envs=NUM_ENVS, rollout_length=LENGTH,
      num_epochs=EPOCHS, num_minibatches=MINIBATCHES, gamma=GAMMA,
      gae_lambda=LAM, clip_ratio=CLIP, entropy_coef=0.0,
      value_coef=VALUE_COEF, steps_per_call=k, log_every=10 * iterations,
      progress=False, tensorboard=False, hooks=[clock])
  ppo(actor, critic, keras.optimizers.Adam(LR), env)
  # The last call's logs are read by the History at the end: synchronised.
  steady = iterations - clock.first_steps
  return clock.first - clock.start, steady / (clock.last - clock.first)


def main():
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--iterations", type=int, default=60)
  parser.add_argument("--rounds", type=int, default=5)
  parser.add_argument("--hidden", type=int, default=64)
  args = parser.parse_args()
  contenders = {"hand-written tf.function": lambda: handwritten(
      args.iterations, args.hidden)}
  for k in (1, 8):
    contenders[f"snt.scenarios.PPO K={k}"] = (
        lambda k=k: scenario(args.iterations, k, args.hidden))
  results = {name: [] for name in contenders}
  for round_ in range(args.rounds):
    order = list(contenders.items())
    for name, run in order if round_ % 2 == 0 else order[::-1]:
      results[name].append(run())
    print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr)
  base = statistics.median(r[1] for r in results["hand-written tf.function"])
  print(f"PPO on the in-graph CartPole, {NUM_ENVS} envs x {LENGTH} steps, "
        f"{EPOCHS} epochs x {MINIBATCHES} minibatches, {args.hidden}-"
        f"{args.hidden} tanh MLPs; {args.iterations} "
        f"iterations per round, {args.rounds} rounds, medians")
  print(f"{'contender':28s} {'trace+1st s':>11s} {'iter/s':>8s} "
        f"{'env steps/s':>12s} {'ratio':>6s}")
  for name, runs in results.items():
    first = statistics.median(r[0] for r in runs)
    speed = statistics.median(r[1] for r in runs)
    print(f"{name:28s} {first:11.2f} {speed:8.2f} "
          f"{speed * NUM_ENVS * LENGTH:12.0f} {speed / base:6.3f}")


if __name__ == "__main__":
  main()
