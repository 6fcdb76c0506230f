"""One Adam step over a SAC network's parameters: `snt.optimizers.Adam`
against the same step written by hand, in one process.

The parameters are one SAC HalfCheetah member's (a 17-256-256-12 actor,
two 23-256-256-1 critics and a scalar temperature: 218k numbers), or ten
members' stacked (`--members 10`: each `[10, ...]`, as a population's
hand-written floor holds them). Contenders, each a `tf.function` that
applies fixed gradients to its own variables:

- `floor`: TensorFlow's fused `ResourceApplyAdam` a variable, called by
  hand (`_floors.Adam`, the off-policy floors' optimizer);
- `snt`: `snt.optimizers.Adam(...).apply`;
- `rule`: the paper's rule in a dozen elementwise ops a variable (what
  `snt.optimizers.Adam` ran before it used the fused kernel, and what a
  population's members run: their values are tensors, not variables);
- `dm-sonnet`: `sonnet.optimizers.Adam` (if installed).

Rounds interleave the contenders (every other round in reverse); each figure is the median over rounds
of the mean time of a step. Run on a quiet machine:

    python benchmarks/bench_adam.py [--members 10] [--rounds 7]
"""

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _floors  # noqa: E402  pylint: disable=wrong-import-position
import sonnet_like as snt  # noqa: E402  pylint: disable=wrong-import-position

try:
  import sonnet as reference  # pylint: disable=g-import-not-at-top
except ImportError:
  reference = None

LEARNING_RATE = 3e-4
_ACTOR = [(17, 256), (256,), (256, 256), (256,), (256, 12), (12,)]
_CRITIC = [(23, 256), (256,), (256, 256), (256,), (256, 1), (1,)]
SHAPES = _ACTOR + _CRITIC + _CRITIC + [()]


def _rule_step(parameters, gradients):
  """The paper's rule, written out, one variable at a time."""
  m = [tf.Variable(tf.zeros_like(p)) for p in parameters]
  v = [tf.Variable(tf.zeros_like(p)) for p in parameters]
  t = tf.Variable(0, dtype=tf.int64)

  @tf.function
  def step():
    count = tf.cast(t.assign_add(1), tf.float32)
    bias1, bias2 = 1. - tf.pow(0.9, count), 1. - tf.pow(0.999, count)
    for p, m_, v_, g in zip(parameters, m, v, gradients):
      m_.assign(0.9 * m_ + 0.1 * g)
      v_.assign(0.999 * v_ + 0.001 * g * g)
      p.assign_sub(LEARNING_RATE * (m_ / bias1) /
                   (tf.sqrt(v_ / bias2) + 1e-8))

  return step


def _contenders(members: int | None):
  rng = np.random.default_rng(0)
  lead = [] if members is None else [members]
  start = [rng.normal(size=lead + list(s)).astype(np.float32)
           for s in SHAPES]
  gradients = [tf.constant(rng.normal(size=x.shape).astype(np.float32))
               for x in start]
  fresh = lambda: [tf.Variable(x) for x in start]

  floor_vars = fresh()
  floor = _floors.Adam(floor_vars, LEARNING_RATE)
  contenders = {"floor": tf.function(lambda: floor.apply(gradients))}
  ours_vars, ours = fresh(), snt.optimizers.Adam(LEARNING_RATE)
  contenders["snt"] = tf.function(lambda: ours.apply(gradients, ours_vars))
  contenders["rule"] = _rule_step(fresh(), gradients)
  if reference is not None:
    theirs_vars, theirs = fresh(), reference.optimizers.Adam(LEARNING_RATE)
    contenders["dm-sonnet"] = tf.function(
        lambda: theirs.apply(gradients, theirs_vars))
  return contenders, (floor_vars, ours_vars)


def main():
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--members", type=int, default=None)
  parser.add_argument("--rounds", type=int, default=7)
  parser.add_argument("--steps", type=int, default=200)
  args = parser.parse_args()
  contenders, (floor_vars, ours_vars) = _contenders(args.members)
  for step in contenders.values():
    for _ in range(10):  # Traced and warm.
      step()
  times = {name: [] for name in contenders}
  order = list(contenders.items())
  for round_ in range(args.rounds):  # Every other round in reverse.
    for name, step in (order if round_ % 2 == 0 else order[::-1]):
      start = time.perf_counter()
      for _ in range(args.steps):
        step()
      float(tf.reduce_sum(floor_vars[0]))  # Wait for the last step.
      times[name].append((time.perf_counter() - start) / args.steps)
  ours_vs_floor = max(float(np.max(np.abs(a.numpy() - b.numpy())))
                      for a, b in zip(floor_vars, ours_vars))
  numbers = sum(int(np.prod(v.shape)) for v in floor_vars)
  print(f"Adam over {numbers:,} numbers ({args.members or 1} member(s)), "
        f"load {os.getloadavg()[0]:.2f}; snt vs floor after the same steps: "
        f"max |difference| {ours_vs_floor:.1e}")
  floor_time = statistics.median(times["floor"])
  for name, measured in times.items():
    median = statistics.median(measured)
    print(f"  {name:10s} {median * 1e3:7.3f} ms a step  "
          f"{median / floor_time:5.2f}x the floor")


if __name__ == "__main__":
  main()
