"""Time to the first finished step in a new process: each scenario against a
hand-written loop of the same networks.

What a user waits for before a run's first step, after `import`: building
the networks, tracing and compiling the step. Most of it is paid once per
process (AutoGraph rewrites each Python function once, TensorFlow sets up
its runtime), so every measurement is a new Python process (timed after
its imports), and the rounds interleave the contenders. Pairs:

- Supervised: the MLP 64-256-256-10 on scikit-learn's digits, batch 64,
  snt Adam 1e-3, one step: (a) a hand-written tf.function + GradientTape
  step, (b) snt.scenarios.Supervised (num_steps=1, its default checks).
- DQN, PPO, GAN: the hand-written loops of `bench_dqn.py` (in-graph
  CartPole, 4 envs, MLP 64-64-2, Keras Adam), `bench_rl.py` (8 envs x 128
  steps, 4 epochs x 4 minibatches, actor and critic MLPs 64-64) and
  `bench_gan.py` (non-saturating, MLPs 64-64 on a ring of Gaussians,
  batch 256) against their scenarios with the same settings, one step
  per call; the time runs until the first call has finished.
- SAC: in-graph Pendulum, 4 envs, actor MLP 64-64-2 (mean, log std),
  critics MLP 64-64-1 on (observation, action), one Keras Adam for all,
  automatic temperature, batch 64, one update per step: a hand-written
  step (below) against snt.scenarios.SAC.

Prints the median seconds (with the fastest and slowest round) and the
scenario / hand-written ratio of each pair.

    python benchmarks/bench_startup.py [--rounds 7] [--pairs Supervised DQN]
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAIRS = {"Supervised": ("hand-written", "Supervised"),
         "DQN": ("hand-written DQN", "DQN"),
         "PPO": ("hand-written PPO", "PPO"),
         "GAN": ("hand-written GAN", "GAN"),
         "SAC": ("hand-written SAC", "SAC")}
CONTENDERS = tuple(name for pair in PAIRS.values() for name in pair)


class _FirstStep(Exception):
  """Raised at the end of the first call: the measurement is taken."""


def _loss(logits, labels):
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)


def _supervised(name: str) -> float:
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import _digits  # pylint: disable=g-import-not-at-top
  import sonnet_like as snt  # pylint: disable=g-import-not-at-top
  (x, y), _ = _digits.load(flat=True)
  start = time.perf_counter()
  tf.random.set_seed(0)
  model = snt.nets.MLP((256, 256, 10), name="mlp")
  optimizer = snt.optimizers.Adam(1e-3)
  if name == "Supervised":
    snt.scenarios.Supervised(num_steps=1, batch_size=64, progress=False,
                             catch_signals=False)(model, optimizer, _loss,
                                                  (x, y))
  else:
    @tf.function
    def step(inputs, targets):
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean(_loss(model(inputs), targets))
      grads = tape.gradient(loss, model.trainable_variables)
      optimizer.apply(grads, model.trainable_variables)
      return loss

    float(step(tf.constant(x[:64]), tf.constant(y[:64])))
  return time.perf_counter() - start


def _until_first_call(run) -> float:
  """Seconds from now to the end of the first call of `run()`: the
  benchmarks' clocks (`_timing`, `bench_rl._Clock`) stop the run there."""
  import _timing  # pylint: disable=g-import-not-at-top
  import bench_rl  # pylint: disable=g-import-not-at-top
  ends = []

  def first_call(train, steps, k):
    del steps
    import tensorflow as tf  # pylint: disable=g-import-not-at-top
    float(train(tf.constant(k)))
    ends.append(time.perf_counter())
    raise _FirstStep

  def step_end(self, scenario, step, logs):
    ends.append(time.perf_counter())
    raise _FirstStep

  _timing.time_calls = first_call
  _timing.StepClock.step_end = step_end
  bench_rl._Clock.step_end = step_end  # pylint: disable=protected-access
  start = time.perf_counter()
  try:
    result = run()
  except _FirstStep:
    return ends[0] - start
  # bench_rl.handwritten runs 2 iterations and times the second: take it off.
  return time.perf_counter() - start - 1.0 / result[1]


SAC_ENVS, SAC_BATCH, SAC_LR, SAC_TAU, SAC_GAMMA = 4, 64, 3e-4, 0.005, 0.99
SAC_BUFFER, SAC_STARTS = 10_000, 256


def _sac_nets():
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import sonnet_like as snt  # pylint: disable=g-import-not-at-top
  tf.random.set_seed(0)
  return (snt.nets.MLP([64, 64, 2], name="actor"),
          snt.nets.MLP([64, 64, 1], name="critic"))


def _sac_handwritten() -> None:
  """One SAC step written by hand: play, store, one update of the critics,
  the actor and the temperature, Polyak targets."""
  import copy  # pylint: disable=g-import-not-at-top
  import keras  # pylint: disable=g-import-not-at-top
  import numpy as np  # pylint: disable=g-import-not-at-top
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  import sonnet_like as snt  # pylint: disable=g-import-not-at-top
  n = SAC_ENVS
  env = snt.envs.Pendulum(n, seed=0)
  actor, critic = _sac_nets()
  twin = copy.deepcopy(critic)
  actor(tf.zeros([1, 3])), critic(tf.zeros([1, 4])), twin(tf.zeros([1, 4]))
  target, target_twin = copy.deepcopy(critic), copy.deepcopy(twin)
  log_alpha = tf.Variable(0.0)
  variables = (actor.trainable_variables + critic.trainable_variables +
               twin.trainable_variables + (log_alpha,))
  optimizer = keras.optimizers.Adam(SAC_LR)
  optimizer.build(variables)
  rng = tf.random.Generator.from_seed(0)
  buffers = [tf.Variable(tf.zeros([SAC_BUFFER] + s))
             for s in ([3], [1], [], [3], [])]
  position = tf.Variable(0, dtype=tf.int64)
  size = tf.Variable(0, dtype=tf.int64)
  env.reset(seed=0)

  def sample(observations):
    mean, log_std = tf.split(actor(observations), 2, axis=1)
    log_std = tf.clip_by_value(log_std, -20.0, 2.0)
    raw = mean + tf.exp(log_std) * rng.normal(tf.shape(mean))
    log_prob = tf.reduce_sum(
        -0.5 * tf.square((raw - mean) / tf.exp(log_std)) - log_std -
        0.5 * np.log(2 * np.pi) - 2.0 * (np.log(2.0) - raw -
                                         tf.nn.softplus(-2.0 * raw)), axis=1)
    return tf.tanh(raw), log_prob

  def q(network, observations, actions):
    return network(tf.concat([observations, actions], -1))[:, 0]

  def update():
    index = rng.uniform([SAC_BATCH], 0, size, dtype=tf.int64)
    obs, act, rew, nxt, term = (tf.gather(b, index) for b in buffers)
    alpha = tf.exp(log_alpha)
    next_act, next_log_prob = sample(nxt)
    next_q = tf.minimum(q(target, nxt, next_act), q(target_twin, nxt,
                                                    next_act))
    y = tf.stop_gradient(rew + SAC_GAMMA * (1.0 - term) * (
        next_q - alpha * next_log_prob))
    with tf.GradientTape() as tape:
      critic_loss = 0.5 * (tf.reduce_mean(tf.square(q(critic, obs, act) - y))
                           + tf.reduce_mean(tf.square(q(twin, obs, act) - y)))
      new_act, log_prob = sample(obs)
      new_q = tf.minimum(q(critic, obs, new_act), q(twin, obs, new_act))
      actor_loss = tf.reduce_mean(tf.stop_gradient(alpha) * log_prob - new_q)
      alpha_loss = -tf.reduce_mean(log_alpha * tf.stop_gradient(
          log_prob - 1.0))
      loss = critic_loss + actor_loss + alpha_loss
    optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
    for t, o in zip(target.variables + target_twin.variables,
                    critic.variables + twin.variables):
      t.assign(SAC_TAU * o + (1.0 - SAC_TAU) * t)
    return tf.constant(True)

  @tf.function
  def step():
    observation = env.observation()
    action, _ = sample(observation)
    timestep = env.step(2.0 * action)
    index = ((position + tf.range(n, dtype=tf.int64)) % SAC_BUFFER)[:, None]
    for buffer, value in zip(buffers, (
        observation, action, timestep.reward, timestep.final_observation,
        tf.cast(timestep.terminated, tf.float32))):
      buffer.scatter_nd_update(index, value)
    position.assign((position + n) % SAC_BUFFER)
    size.assign(tf.minimum(size + n, SAC_BUFFER))
    tf.cond(size >= SAC_STARTS, update, lambda: tf.constant(False))
    return size

  int(step())


def _sac_scenario() -> None:
  import keras  # pylint: disable=g-import-not-at-top
  import sonnet_like as snt  # pylint: disable=g-import-not-at-top
  actor, critic = _sac_nets()
  snt.scenarios.SAC(
      SAC_ENVS, num_envs=SAC_ENVS, buffer_size=SAC_BUFFER,
      batch_size=SAC_BATCH, learning_starts=SAC_STARTS, tau=SAC_TAU,
      gamma=SAC_GAMMA, progress=False, tensorboard=False,
      catch_signals=False, eval_episodes=1)(
          actor, critic, keras.optimizers.Adam(SAC_LR),
          snt.envs.Pendulum(SAC_ENVS, seed=0))


def _first_step(name: str) -> float:
  """Seconds from after the imports to the end of the first step."""
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
  sys.path[:0] = [os.path.join(_ROOT, "examples"),
                  os.path.join(_ROOT, "benchmarks"), _ROOT]
  if name in PAIRS["Supervised"]:
    return _supervised(name)
  import bench_dqn  # pylint: disable=g-import-not-at-top
  import bench_gan  # pylint: disable=g-import-not-at-top
  import bench_rl  # pylint: disable=g-import-not-at-top
  from sonnet_like.scenarios.gan import evaluation  # pylint: disable=g-import-not-at-top
  ring = evaluation.mixture("ring", 4096).samples
  config = bench_gan.CONFIGS["non-saturating"]
  runs = {
      "hand-written DQN": lambda: bench_dqn.handwritten(2, 1, 4),
      "DQN": lambda: bench_dqn.scenario(2, 1, 4),
      "hand-written PPO": lambda: bench_rl.handwritten(2, 64),
      "PPO": lambda: bench_rl.scenario(2, 1, 64),
      "hand-written GAN": lambda: bench_gan.handwritten(ring, config, 2, 1,
                                                       64),
      "GAN": lambda: bench_gan.scenario(ring, config, 2, 1, 64),
      "hand-written SAC": _sac_handwritten,
      "SAC": _sac_scenario,
  }
  if name in ("hand-written SAC", "SAC"):  # One step, then the run ends.
    start = time.perf_counter()
    runs[name]()
    return time.perf_counter() - start
  return _until_first_call(runs[name])


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--rounds", type=int, default=7)
  parser.add_argument("--pairs", nargs="+", choices=list(PAIRS),
                      default=list(PAIRS))
  parser.add_argument("--one", choices=CONTENDERS, help=argparse.SUPPRESS)
  args = parser.parse_args()
  if args.one:
    print(f"SECONDS {_first_step(args.one)}")
    return
  names = [name for pair in args.pairs for name in PAIRS[pair]]
  results = {name: [] for name in names}
  for r in range(args.rounds):
    for name in (names if r % 2 == 0 else names[::-1]):
      out = subprocess.run([sys.executable, __file__, "--one", name],
                           capture_output=True, text=True, check=True).stdout
      results[name].append(float(out.split("SECONDS ")[-1]))
    print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
  median = {name: statistics.median(s) for name, s in results.items()}
  print(f"{'':18s} {'first step':>11s} {'rounds min-max':>15s}")
  for name, seconds in results.items():
    print(f"{name:18s} {median[name]:10.2f}s "
          f"{min(seconds):7.2f}-{max(seconds):.2f}s")
  for pair in args.pairs:
    base, ours = PAIRS[pair]
    print(f"{ours}: {median[ours] / median[base]:.2f}x the hand-written "
          "step's time to the first step")


if __name__ == "__main__":
  main()
