"""Speed of the DQN scenario against a hand-written tf.function DQN loop.

Both play the in-graph CartPole (`snt.envs.CartPole`, N environments) with
epsilon-greedy actions from a `tf.random.Generator`, store the transitions in
a ring buffer held in variables, and make one double-DQN update (Huber loss,
Adam) per step on a uniformly sampled batch, syncing a target network every
100 steps; they run K steps per compiled call. The hand-written loop is what
one would write by hand for the same maths: one `tf.function` with a
`tf.range` loop, `tf.cond` for the update and the sync, and running episode
returns. The scenario adds its engine: NaN guard, step counter, logs,
`EpisodeStats`, hooks and the Python loop.

Every round builds, traces and runs each contender afresh, interleaved (the
order alternates between rounds). Tracing and the first call are reported
apart from the steady-state speed (between the first and last finished
call). Prints median scenario steps/s (one step = N environment steps and
one update) and the ratio scenario / hand-written at the same K.

    python benchmarks/bench_dqn.py [--steps 2000] [--rounds 5] [--num_envs 4]
                                   [--k 1 100]
"""

import argparse
import copy
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import _timing  # pylint: disable=g-import-not-at-top
import sonnet_like as snt  # pylint: disable=g-import-not-at-top
from sonnet_like.scenarios.rl import schedules  # pylint: disable=g-import-not-at-top

SIZES = (64, 64, 2)
BATCH, BUFFER, LEARNING_STARTS, TARGET_EVERY = 64, 10_000, 256, 100
GAMMA, LR, EPS_START, EPS_END, EPS_STEPS = 0.99, 1e-3, 1.0, 0.05, 500


def _q_network():
  tf.random.set_seed(0)
  return snt.nets.MLP(SIZES, name="q")


def handwritten(steps, k, n):
  """Returns (seconds to the first finished call, steady steps/s)."""
  env = snt.envs.CartPole(n, seed=0)
  q = _q_network()
  q(tf.zeros([1, 4]))
  target = copy.deepcopy(q)
  optimizer = keras.optimizers.Adam(LR)
  optimizer.build(q.trainable_variables)
  rng = tf.random.Generator.from_seed(0)
  observations = tf.Variable(tf.zeros([BUFFER, 4]))
  next_observations = tf.Variable(tf.zeros([BUFFER, 4]))
  actions = tf.Variable(tf.zeros([BUFFER], tf.int32))
  rewards = tf.Variable(tf.zeros([BUFFER]))
  terminals = tf.Variable(tf.zeros([BUFFER], tf.bool))
  position = tf.Variable(0, dtype=tf.int64)
  size = tf.Variable(0, dtype=tf.int64)
  step = tf.Variable(0, dtype=tf.int64)
  returns = tf.Variable(tf.zeros([n]))
  last_return = tf.Variable(0.0)
  loss_value = tf.Variable(0.0)

  def update():
    index = rng.uniform([BATCH], 0, size, dtype=tf.int64)
    obs, act = tf.gather(observations, index), tf.gather(actions, index)
    nxt, rew = tf.gather(next_observations, index), tf.gather(rewards, index)
    term = tf.gather(terminals, index)
    best = tf.argmax(q(nxt), -1, output_type=tf.int32)
    bootstrap = tf.gather(target(nxt), best, axis=1, batch_dims=1)
    y = tf.stop_gradient(rew + GAMMA * (1.0 - tf.cast(term, tf.float32)) *
                         bootstrap)
    variables = q.trainable_variables
    with tf.GradientTape() as tape:
      error = tf.gather(q(obs), act, axis=1, batch_dims=1) - y
      loss = tf.reduce_mean(tf.where(tf.abs(error) <= 1.0,
                                     0.5 * tf.square(error),
                                     tf.abs(error) - 0.5))
    optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
    loss_value.assign(loss)
    return tf.constant(True)

  def sync():
    for t, o in zip(target.trainable_variables, q.trainable_variables):
      t.assign(o)
    return tf.constant(True)

  @tf.function
  def train(count):
    for _ in tf.range(count):
      epsilon = EPS_START + (EPS_END - EPS_START) * tf.minimum(
          tf.cast(step, tf.float32) / EPS_STEPS, 1.0)
      obs = env.observation()
      greedy = tf.argmax(q(obs), -1, output_type=tf.int32)
      explore = rng.uniform([n]) < epsilon
      action = tf.where(explore, rng.uniform([n], 0, 2, dtype=tf.int32),
                        greedy)
      timestep = env.step(action)
      index = (position + tf.range(n, dtype=tf.int64)) % BUFFER
      observations.scatter_nd_update(index[:, None], obs)
      actions.scatter_nd_update(index[:, None], action)
      rewards.scatter_nd_update(index[:, None], timestep.reward)
      next_observations.scatter_nd_update(index[:, None],
                                          timestep.final_observation)
      terminals.scatter_nd_update(index[:, None], timestep.terminated)
      position.assign((position + n) % BUFFER)
      size.assign(tf.minimum(size + n, BUFFER))
      ret = returns + timestep.reward
      done = timestep.done
      last_return.assign(tf.where(
          tf.reduce_any(done), tf.reduce_max(tf.where(done, ret, 0.0)),
          last_return))
      returns.assign(tf.where(done, 0.0, ret))
      t = step.assign_add(1)
      tf.cond(t * n >= LEARNING_STARTS, update, lambda: tf.constant(False))
      tf.cond(tf.equal(t % TARGET_EVERY, 0), sync, lambda: tf.constant(False))
    return loss_value.read_value()

  return _timing.time_calls(train, steps, k)


def scenario(steps, k, n):
  """Returns (seconds to the first finished call, steady steps/s)."""
  clock = _timing.StepClock()
  dqn = snt.scenarios.DQN(
      steps * n, num_envs=n, buffer_size=BUFFER, batch_size=BATCH,
      learning_starts=LEARNING_STARTS, train_every=1,
      target_update_every=TARGET_EVERY, gamma=GAMMA,
      epsilon=schedules.LinearSchedule(EPS_START, EPS_END, EPS_STEPS),
      steps_per_call=k, log_every=steps, progress=False, tensorboard=False,
      catch_signals=False, hooks=[clock])
  start = time.perf_counter()
  dqn(_q_network(), keras.optimizers.Adam(LR), snt.envs.CartPole(n, seed=0))
  return clock.result(start)


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--steps", type=int, default=2_000)
  parser.add_argument("--rounds", type=int, default=5)
  parser.add_argument("--num_envs", type=int, default=4)
  parser.add_argument("--k", type=int, nargs="+", default=[1, 100],
                      help="Steps per call to compare at.")
  args = parser.parse_args()
  steps, n = args.steps, args.num_envs
  contenders = []
  for k in args.k:
    contenders += [
        (f"hand-written K={k}", lambda k=k: handwritten(steps, k, n)),
        (f"DQN scenario K={k}", lambda k=k: scenario(steps, k, n))]
  results = {name: [] for name, _ in contenders}
  for r in range(args.rounds):
    order = contenders if r % 2 == 0 else contenders[::-1]
    for name, run in order:
      results[name].append(run())
    print(f"round {r + 1}/{args.rounds} done", file=sys.stderr, flush=True)
  speed = {m: statistics.median(s for _, s in v) for m, v in results.items()}
  setup = {m: statistics.median(t for t, _ in v) for m, v in results.items()}
  print(f"CartPole x {n} envs, MLP {SIZES}, batch {BATCH}, one update per "
        f"step; {steps} steps per run, {args.rounds} rounds (medians)")
  print(f"{'':20s} {'steps/s':>9s} {'env steps/s':>12s} "
        f"{'trace+1st call':>15s} {'vs hand-written':>16s}")
  for name in results:
    k = name.rsplit("=", 1)[1]
    base = speed[f"hand-written K={k}"]
    print(f"{name:20s} {speed[name]:9.0f} {speed[name] * n:12.0f} "
          f"{setup[name]:14.2f}s {speed[name] / base:15.2f}x")


if __name__ == "__main__":
  main()
