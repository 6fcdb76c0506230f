"""Speed of the Supervised scenario against a hand-written loop and Keras fit.

Two MLPs on scikit-learn's digits, batch 64, Adam 1e-3: 64-256-256-10, where
per-step overhead matters, and 64-1024-1024-10, where compute dominates (as
on every real model). Each is trained in one process by

  (a) a hand-written tf.function + GradientTape loop running K steps per call
      (a tf.range loop over the same tf.data iterator), and at K = 32 also
      the same loop with the per-step NaN/Inf guard written by hand,
  (b) snt.scenarios.Supervised with steps_per_call=K: at K = 32 with its
      default NaN check (once per call, `nonfinite_check="auto"`) and with
      `nonfinite_check="step"` (every update checked before it is applied),
  (c) keras Model.fit with steps_per_execution=1 and 32 (no NaN check),

with K = 1 and 32, in rounds that interleave the contenders. Tracing and
compiling (the time to the first finished call) is reported apart from the
steady-state speed, measured between the first and last finished call.
Prints median steps/s (with the slowest and fastest round: on 2 shared
cores single rounds vary by +-10%), ratios against (a) at the same K, and
Supervised against Keras fit at equal steps per execution.

The scenario calls its traced function directly, without tf.function's
per-call dispatch, which is why it can beat (a) at K = 1.

    python benchmarks/bench_supervised.py [--steps 3008] [--rounds 7]
        [--workload small|large|both]
"""

import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(_ROOT, "examples"), _ROOT]
import _digits  # pylint: disable=g-import-not-at-top
import _timing  # pylint: disable=g-import-not-at-top
import sonnet_like as snt  # pylint: disable=g-import-not-at-top

BATCH, LR = 64, 1e-3
WORKLOADS = {"small": (256, 256, 10), "large": (1024, 1024, 10)}


def _loss(logits, labels):
  return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)


def _snt_mlp(sizes):
  tf.random.set_seed(0)
  return snt.nets.MLP(sizes, name="mlp")


def _dataset(x, y):
  # The pipeline Supervised builds from arrays, for the hand-written loop.
  from sonnet_like.scenarios import data  # pylint: disable=g-import-not-at-top
  return data.training_dataset("bench", "train_data", (x, y), BATCH, seed=0)


def handwritten(x, y, sizes, steps, k, guard=False):
  """Returns (seconds to first call, steady steps/s).

  With `guard`, the update runs only if the loss and every gradient are
  finite: the per-step check, written by hand.
  """
  model, optimizer = _snt_mlp(sizes), keras.optimizers.Adam(LR)
  iterator = iter(_dataset(x, y))

  def update(loss, grads, variables):
    if not guard:
      optimizer.apply_gradients(zip(grads, variables))
      return
    sums = [loss] + [tf.reduce_sum(g) for g in grads]
    def apply():
      optimizer.apply_gradients(zip(grads, variables))
      return tf.constant(True)
    tf.cond(tf.math.is_finite(tf.add_n(sums)), apply,
            lambda: tf.constant(False))

  @tf.function
  def train(n):
    loss = tf.constant(0.0)
    for _ in tf.range(n):
      inputs, targets = next(iterator)
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean(_loss(model(inputs), targets))
      variables = model.trainable_variables
      update(loss, tape.gradient(loss, variables), variables)
    return loss

  return _timing.time_calls(train, steps, k)


def scenario(x, y, sizes, steps, k, check="auto"):
  clock = _timing.StepClock()
  train = snt.scenarios.Supervised(
      num_steps=steps, batch_size=BATCH, steps_per_call=k, log_every=steps,
      progress=False, catch_signals=False, hooks=[clock],
      nonfinite_check=check)
  start = time.perf_counter()
  train(_snt_mlp(sizes), keras.optimizers.Adam(LR), _loss, (x, y))
  return clock.result(start)


class _KerasClock(keras.callbacks.Callback):

  def __init__(self):
    super().__init__()
    self.times, self.batches = [], []

  def on_train_batch_end(self, batch, logs=None):
    self.times.append(time.perf_counter())
    self.batches.append(batch)


def keras_fit(x, y, sizes, steps, k):
  keras.utils.set_random_seed(0)
  model = keras.Sequential([keras.Input((64,))] + [
      keras.layers.Dense(s, activation="relu" if i < len(sizes) - 1 else None)
      for i, s in enumerate(sizes)])
  model.compile(keras.optimizers.Adam(LR), keras.losses.
                SparseCategoricalCrossentropy(from_logits=True),
                steps_per_execution=k)
  clock = _KerasClock()
  start = time.perf_counter()
  model.fit(_dataset(x, y), steps_per_epoch=steps, epochs=1, verbose=0,
            callbacks=[clock])
  # on_train_batch_end reports the last batch index of each execution.
  return (clock.times[0] - start, (clock.batches[-1] - clock.batches[0]) /
          (clock.times[-1] - clock.times[0]))


def _contenders(x, y, sizes, steps):
  return [
      ("hand-written K=1", lambda: handwritten(x, y, sizes, steps, 1)),
      ("Supervised   K=1", lambda: scenario(x, y, sizes, steps, 1)),
      ("keras fit  spe=1", lambda: keras_fit(x, y, sizes, steps, 1)),
      ("hand-written K=32", lambda: handwritten(x, y, sizes, steps, 32)),
      ("  + NaN guard K=32", lambda: handwritten(x, y, sizes, steps, 32,
                                                 True)),
      ("Supervised   K=32", lambda: scenario(x, y, sizes, steps, 32)),
      ("  check=step K=32", lambda: scenario(x, y, sizes, steps, 32,
                                             "step")),
      ("keras fit spe=32", lambda: keras_fit(x, y, sizes, steps, 32)),
  ]


def _report(title, results):
  speed = {n: statistics.median(s for _, s in v) for n, v in results.items()}
  setup = {n: statistics.median(t for t, _ in v) for n, v in results.items()}
  print(f"\n{title}")
  print(f"{'':20s} {'steps/s':>9s} {'rounds min-max':>15s} "
        f"{'trace+1st call':>15s} {'vs hand-written':>16s}")
  for name, runs in results.items():
    base = speed["hand-written K=32" if "32" in name else "hand-written K=1"]
    spread = f"{min(s for _, s in runs):.0f}-{max(s for _, s in runs):.0f}"
    print(f"{name:20s} {speed[name]:9.0f} {spread:>15s} {setup[name]:14.2f}s "
          f"{speed[name] / base:15.2f}x")
  for k, keras_name in (("1", "keras fit  spe=1"), ("32", "keras fit spe=32")):
    ours = speed[f"Supervised   K={k}"]
    print(f"Supervised K={k}: {ours / speed[f'hand-written K={k}']:.2f}x the "
          f"hand-written loop, {ours / speed[keras_name]:.2f}x Keras fit "
          f"spe={k}")


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--steps", type=int, default=3008,
                      help="steps per run of the small MLP (the large one "
                      "runs a quarter of them)")
  parser.add_argument("--rounds", type=int, default=7)
  parser.add_argument("--workload", choices=["small", "large", "both"],
                      default="both")
  args = parser.parse_args()
  (x, y), _ = _digits.load(flat=True)
  names = list(WORKLOADS) if args.workload == "both" else [args.workload]
  for workload in names:
    sizes = WORKLOADS[workload]
    steps = args.steps if workload == "small" else args.steps // 128 * 32
    contenders = _contenders(x, y, sizes, steps)
    results = {name: [] for name, _ in contenders}
    for r in range(args.rounds):
      order = contenders if r % 2 == 0 else contenders[::-1]
      for name, run in order:
        results[name].append(run())
      print(f"{workload}: round {r + 1}/{args.rounds} done", file=sys.stderr)
    _report(f"MLP 64-{'-'.join(map(str, sizes))}, Adam {LR}, batch {BATCH}, "
            f"{steps} steps", results)


if __name__ == "__main__":
  main()
