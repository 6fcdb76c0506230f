"""Speed of the Supervised scenario against a hand-written loop and Keras fit.

The same MLP (64-128-128-10) on scikit-learn's digits, batch 64, SGD, trained
in one process by

  (a) a hand-written tf.function + GradientTape loop running K steps per call
      (a tf.range loop over the same tf.data iterator), and at K = 32 also
      the same loop with the scenario's NaN/Inf guard written by hand,
  (b) snt.scenarios.Supervised with steps_per_call=K,
  (c) keras Model.fit with steps_per_execution=1 and 32,

with K = 1 and 32, in rounds that interleave the contenders. Tracing and
compiling (the time to the first finished call) is reported apart from the
steady-state speed, measured between the first and last finished call.
Prints median steps/s (with the slowest and fastest round: on 2 shared
cores single rounds vary by +-10%) and ratios against (a) at the same K.

The scenario does more per step than (a): its NaN/Inf guard (one reduction
per gradient, and a tf.cond so the update waits for the verdict), 5-10% of
this small model's step; the "+ NaN guard" row shows what the same guard
costs a hand-written loop (see BUILD_NOTES.md). The scenario calls its
traced function directly, without tf.function's per-call dispatch, which is
why it can beat (a) at K = 1.

    python benchmarks/bench_supervised.py [--steps 3008] [--rounds 7]
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

BATCH, LR, SIZES = 64, 0.05, (128, 128, 10)


def _loss(logits, labels):
  return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)


def _snt_mlp():
  tf.random.set_seed(0)
  return snt.nets.MLP(SIZES, name="mlp")


def _dataset(x, y):
  # The pipeline Supervised builds from arrays, for the hand-written loop.
  from sonnet_like.scenarios import data  # pylint: disable=g-import-not-at-top
  return data.training_dataset("bench", "train_data", (x, y), BATCH, seed=0)


def handwritten(x, y, steps, k, guard=False):
  """Returns (seconds to first call, steady steps/s).

  With `guard`, the update runs only if the loss and every gradient are
  finite: the check the scenario makes, written by hand.
  """
  model, optimizer = _snt_mlp(), keras.optimizers.SGD(LR)
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


def scenario(x, y, steps, k):
  clock = _timing.StepClock()
  train = snt.scenarios.Supervised(
      num_steps=steps, batch_size=BATCH, steps_per_call=k, log_every=steps,
      progress=False, catch_signals=False, hooks=[clock])
  start = time.perf_counter()
  train(_snt_mlp(), keras.optimizers.SGD(LR), _loss, (x, y))
  return clock.result(start)


class _KerasClock(keras.callbacks.Callback):

  def __init__(self):
    super().__init__()
    self.times, self.batches = [], []

  def on_train_batch_end(self, batch, logs=None):
    self.times.append(time.perf_counter())
    self.batches.append(batch)


def keras_fit(x, y, steps, k):
  keras.utils.set_random_seed(0)
  model = keras.Sequential([keras.Input((64,))] + [
      keras.layers.Dense(s, activation="relu" if i < len(SIZES) - 1 else None)
      for i, s in enumerate(SIZES)])
  model.compile(keras.optimizers.SGD(LR), keras.losses.
                SparseCategoricalCrossentropy(from_logits=True),
                steps_per_execution=k)
  clock = _KerasClock()
  start = time.perf_counter()
  model.fit(_dataset(x, y), steps_per_epoch=steps, epochs=1, verbose=0,
            callbacks=[clock])
  # on_train_batch_end reports the last batch index of each execution.
  return (clock.times[0] - start, (clock.batches[-1] - clock.batches[0]) /
          (clock.times[-1] - clock.times[0]))


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--steps", type=int, default=3008)
  parser.add_argument("--rounds", type=int, default=7)
  args = parser.parse_args()
  (x, y), _ = _digits.load(flat=True)
  contenders = [
      ("hand-written K=1", lambda: handwritten(x, y, args.steps, 1)),
      ("Supervised   K=1", lambda: scenario(x, y, args.steps, 1)),
      ("keras fit  spe=1", lambda: keras_fit(x, y, args.steps, 1)),
      ("hand-written K=32", lambda: handwritten(x, y, args.steps, 32)),
      ("  + NaN guard K=32", lambda: handwritten(x, y, args.steps, 32, True)),
      ("Supervised   K=32", lambda: scenario(x, y, args.steps, 32)),
      ("keras fit spe=32", lambda: keras_fit(x, y, args.steps, 32)),
  ]
  results = {name: [] for name, _ in contenders}
  for r in range(args.rounds):
    order = contenders if r % 2 == 0 else contenders[::-1]
    for name, run in order:
      results[name].append(run())
    print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
  speed = {n: statistics.median(s for _, s in v) for n, v in results.items()}
  setup = {n: statistics.median(t for t, _ in v) for n, v in results.items()}
  print(f"{'':20s} {'steps/s':>9s} {'rounds min-max':>15s} "
        f"{'trace+1st call':>15s} {'vs hand-written':>16s}")
  for name, runs in results.items():
    base = speed["hand-written K=32" if "32" in name else "hand-written K=1"]
    spread = f"{min(s for _, s in runs):.0f}-{max(s for _, s in runs):.0f}"
    print(f"{name:20s} {speed[name]:9.0f} {spread:>15s} {setup[name]:14.2f}s "
          f"{speed[name] / base:15.2f}x")
  best_keras = max(speed["keras fit  spe=1"], speed["keras fit spe=32"])
  for k in ("1", "32"):
    print(f"Supervised K={k} vs hand-written K={k}: "
          f"{speed[f'Supervised   K={k}'] / speed[f'hand-written K={k}']:.2f}x;"
          f" vs Keras fit at its best: "
          f"{speed[f'Supervised   K={k}'] / best_keras:.2f}x")


if __name__ == "__main__":
  main()
