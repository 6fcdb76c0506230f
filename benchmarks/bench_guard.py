"""Where the scenario's time goes on a compute-bound MLP: the NaN guard.

MLP 64-1024-1024-10 on scikit-learn's digits, batch 64, Adam 1e-3, K = 32
steps per compiled call, in one process with interleaved rounds:

  hand                a hand-written tf.function loop (tf.range over steps)
  hand+sum-guard      the same, the update under tf.cond(finite(loss and the
                      sum of every gradient)): the scenario's guard by hand
  hand+where-guard    the same check, gradients zeroed with tf.where instead
                      of skipping the update (not a skip for Adam: measures
                      the cost of the tf.cond alone)
  hand+call-guard     the same loop checked once per call: each step's loss,
                      and at the end every weight and optimizer slot, with
                      the state read at the start kept to undo the call
  hand jit / hand+sum-guard jit   the step compiled with XLA
  scenario / scenario jit         snt.scenarios.Supervised, jit_compile off/on
                      (its default check: once per call at K = 32)
  scenario step       snt.scenarios.Supervised, nonfinite_check="step"

Prints median steps/s and the ratio to "hand".

    python benchmarks/bench_guard.py [--steps 640] [--rounds 3]
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
from sonnet_like.scenarios import data  # pylint: disable=g-import-not-at-top

SIZES, BATCH, K = (1024, 1024, 10), 64, 32


def _loss(logits, labels):
  return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)


def _mlp():
  tf.random.set_seed(0)
  return snt.nets.MLP(SIZES, name="mlp")


def handwritten(x, y, steps, guard=None, jit=False):
  model, optimizer = _mlp(), keras.optimizers.Adam(1e-3)
  iterator = iter(data.training_dataset("bench", "train_data", (x, y), BATCH,
                                        seed=0))

  def step(inputs, targets):
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean(_loss(model(inputs), targets))
    variables = model.trainable_variables
    grads = tape.gradient(loss, variables)
    if guard in (None, "call"):
      optimizer.apply_gradients(zip(grads, variables))
      return loss
    finite = tf.math.is_finite(
        tf.add_n([loss] + [tf.reduce_sum(g) for g in grads]))
    if guard == "where":
      optimizer.apply_gradients(zip(
          [tf.where(finite, g, tf.zeros_like(g)) for g in grads], variables))
      return loss

    def apply():
      optimizer.apply_gradients(zip(grads, variables))
      return tf.constant(True)

    tf.cond(finite, apply, lambda: tf.constant(False))
    return loss

  compiled = tf.function(step, jit_compile=True)
  model(tf.zeros([1, 64]))
  optimizer.build(model.trainable_variables)
  state = [v.value for v in optimizer.variables] + list(
      model.trainable_variables)

  @tf.function
  def train(n):
    loss = tf.constant(0.0)
    saved = [tf.identity(v) for v in state] if guard == "call" else None
    finite = tf.constant(True)
    for _ in tf.range(n):
      inputs, targets = next(iterator)
      loss = (compiled if jit else step)(inputs, targets)
      finite = tf.logical_and(finite, tf.math.is_finite(loss))
    if guard == "call":
      floating = [tf.reduce_sum(v) for v in state if v.dtype.is_floating]
      finite = tf.logical_and(finite, tf.math.is_finite(tf.add_n(floating)))

      def undo():
        for variable, value in zip(state, saved):
          variable.assign(value)
        return tf.constant(False)

      finite = tf.cond(finite, lambda: tf.constant(True), undo)
    return loss + 0.0 * tf.cast(finite, tf.float32)

  return _timing.time_calls(train, steps, K)


def scenario(x, y, steps, jit=False, check="auto"):
  clock = _timing.StepClock()
  train = snt.scenarios.Supervised(
      num_steps=steps, batch_size=BATCH, steps_per_call=K, log_every=steps,
      progress=False, catch_signals=False, hooks=[clock], jit_compile=jit,
      nonfinite_check=check)
  start = time.perf_counter()
  train(_mlp(), keras.optimizers.Adam(1e-3), _loss, (x, y))
  return clock.result(start)


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--steps", type=int, default=640)
  parser.add_argument("--rounds", type=int, default=3)
  args = parser.parse_args()
  (x, y), _ = _digits.load(flat=True)
  steps = args.steps
  contenders = [
      ("hand", lambda: handwritten(x, y, steps)),
      ("hand+sum-guard", lambda: handwritten(x, y, steps, "sum")),
      ("hand+where-guard", lambda: handwritten(x, y, steps, "where")),
      ("hand+call-guard", lambda: handwritten(x, y, steps, "call")),
      ("hand jit", lambda: handwritten(x, y, steps, jit=True)),
      ("hand+sum-guard jit", lambda: handwritten(x, y, steps, "sum", True)),
      ("scenario", lambda: scenario(x, y, steps)),
      ("scenario jit", lambda: scenario(x, y, steps, jit=True)),
      ("scenario step", lambda: scenario(x, y, steps, check="step")),
  ]
  results = {name: [] for name, _ in contenders}
  for r in range(args.rounds):
    for name, run in (contenders if r % 2 == 0 else contenders[::-1]):
      results[name].append(run()[1])
    print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
  base = statistics.median(results["hand"])
  for name, speeds in results.items():
    median = statistics.median(speeds)
    print(f"{name:20s} {median:8.1f} steps/s {median / base:6.2f}x "
          f"[{min(speeds):.0f}-{max(speeds):.0f}]")


if __name__ == "__main__":
  main()
