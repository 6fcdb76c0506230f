"""What a population costs: Supervised with N members against one member.

The small MLP of `bench_supervised.py` (64-256-256-10 on scikit-learn's
digits, batch 64, `snt.optimizers.Adam(1e-3)`), trained by
`snt.scenarios.Supervised(population=N)` for N in `--sizes`, and by the
same scenario without a population (the solo run: one member), all in one
process; and, as the floor a population can reach, N members written by
hand with stacked weights ([N, ...] variables, batched products, one
`snt.optimizers.Adam` on the stacked variables: every member's own Adam)
over one pipeline of N*64 rows a step. Each contender trains `--steps` steps per round with
`steps_per_call` K; rounds interleave the contenders (2 shared cores drift
between rounds), and each contender's time per round is taken against the
solo run's in the same round. Printed: the median wall time of a round
relative to the solo run's ("x solo"; the issue asks 16 members <= 3x), per
member, and the first call (tracing) apart.

    python benchmarks/bench_population_supervised.py [--sizes 4 16 64]
        [--steps 512] [--rounds 5] [--steps_per_call 1 32]
        [--on_nonfinite skip]
"""

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top
from sklearn import datasets  # pylint: disable=g-import-not-at-top

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, _ROOT)
import sonnet_like as snt  # pylint: disable=g-import-not-at-top

HIDDEN = (256, 256, 10)


def _loss(logits, labels):
  return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)


def _trainer(members, steps_per_call, data, on_nonfinite):
  """A function training `steps` more steps of one scenario per call (the
  scenario resumes its own in-memory state: num_steps grows)."""
  scenario = snt.scenarios.Supervised(
      num_steps=1, batch_size=64, steps_per_call=steps_per_call,
      log_every=10**9, progress=False, tensorboard=False, seed=0,
      population=members, on_nonfinite=on_nonfinite)
  model, optimizer = snt.nets.MLP(HIDDEN), snt.optimizers.Adam(1e-3)
  start = time.perf_counter()
  scenario(model, optimizer, _loss, data)
  first = time.perf_counter() - start
  call = scenario.train_function.get_concrete_function(
      tf.TensorSpec([], tf.int32))
  size = tf.constant(steps_per_call, tf.int32)

  def train(steps):
    for _ in range(steps // steps_per_call):
      logs, _ = call(size)
    float(logs["loss"])
  return train, first


def _stacked(members, steps_per_call, data):
  """The hand-written floor: `members` MLPs as batched products."""
  sizes = (64,) + HIDDEN
  rng = tf.random.Generator.from_seed(0)
  params = []
  for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
    params += [tf.Variable(rng.truncated_normal([members, fan_in, fan_out],
                                                stddev=fan_in ** -0.5)),
               tf.Variable(tf.zeros([members, 1, fan_out]))]
  optimizer = snt.optimizers.Adam(1e-3)
  dataset = tf.data.Dataset.from_tensor_slices(data).shuffle(
      len(data[1]), seed=0).repeat().batch(members * 64, drop_remainder=True)
  iterator = iter(dataset.prefetch(2))

  @tf.function
  def run(n):
    for _ in tf.range(n):
      x, y = next(iterator)
      x, y = tf.reshape(x, [members, 64, -1]), tf.reshape(y, [members, 64])
      with tf.GradientTape() as tape:
        h = x
        for i in range(0, len(params), 2):
          h = tf.linalg.matmul(h, params[i]) + params[i + 1]
          if i + 2 < len(params):
            h = tf.nn.relu(h)
        loss = tf.reduce_sum(tf.reduce_mean(_loss(h, y), axis=1))
      optimizer.apply(tape.gradient(loss, params), params)
    return loss

  size = tf.constant(steps_per_call)
  start = time.perf_counter()
  float(run(size))
  first = time.perf_counter() - start

  def train(steps):
    for _ in range(steps // steps_per_call):
      loss = run(size)
    float(loss)
  return train, first


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--sizes", type=int, nargs="+", default=[4, 16, 64])
  parser.add_argument("--steps", type=int, default=512)
  parser.add_argument("--rounds", type=int, default=5)
  parser.add_argument("--steps_per_call", type=int, nargs="+",
                      default=[1, 32])
  parser.add_argument("--on_nonfinite", default="raise",
                      choices=["raise", "skip"],
                      help="the scenarios' policy (a population's 'skip' "
                      "drops a failed update per member inside its step)")
  args = parser.parse_args()
  x, y = datasets.load_digits(return_X_y=True)
  data = ((x / 16.0).astype(np.float32), y.astype(np.int64))
  print(f"load average at start: {os.getloadavg()}")
  for k in args.steps_per_call:
    contenders = {}
    for n in [None] + args.sizes:
      contenders[n] = _trainer(n, k, data, args.on_nonfinite)
      print(f"K={k} members={n or 1}: first call {contenders[n][1]:.2f} s",
            flush=True)
      if n is not None:
        contenders[f"stacked {n}"] = _stacked(n, k, data)
    times = {n: [] for n in contenders}
    ratios = {n: [] for n in contenders if n is not None}
    for _ in range(args.rounds):
      solo = None
      for n, (train, _) in contenders.items():
        start = time.perf_counter()
        train(args.steps)
        times[n].append(time.perf_counter() - start)
        if n is None:
          solo = times[n][-1]
        else:
          ratios[n].append(times[n][-1] / solo)
    solo_ms = statistics.median(times[None]) / args.steps * 1e3
    print(f"\nsteps_per_call={k}: solo {solo_ms:.3f} ms a step "
          f"(median of {args.rounds} rounds)")
    print(f"{'members':>11s} {'ms/step':>8s} {'x solo':>7s} "
          f"{'per member':>10s} {'x stacked':>9s}")
    for n in args.sizes:
      for key in (n, f"stacked {n}"):
        ratio = statistics.median(ratios[key])
        floor = statistics.median(
            a / b for a, b in zip(times[key], times[f"stacked {n}"]))
        print(f"{str(key):>11s} "
              f"{statistics.median(times[key]) / args.steps * 1e3:8.3f} "
              f"{ratio:7.2f} {ratio / n:10.3f} {floor:9.2f}")
  print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
  main()
