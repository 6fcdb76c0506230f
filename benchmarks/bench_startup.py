"""Time to the first finished step in a new process: Supervised against a
hand-written loop.

What a user waits for before a run's first step, after `import`: building
the model, tracing and compiling the step. Most of it is paid once per
process (AutoGraph rewrites each Python function once, TensorFlow sets up
its runtime), so every measurement is a new Python process, and the rounds
interleave the contenders. The MLP 64-256-256-10 on scikit-learn's digits,
batch 64, Adam 1e-3, one step, trained by

  (a) a hand-written tf.function + GradientTape step with snt.optimizers.Adam,
  (b) snt.scenarios.Supervised (num_steps=1, its default checks).

Prints the median seconds (with the fastest and slowest round) and (b)/(a).

    python benchmarks/bench_startup.py [--rounds 7]
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONTENDERS = ("hand-written", "Supervised")


def _loss(logits, labels):
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)


def _first_step(name: str) -> float:
  """Seconds from after the imports to the end of the first step."""
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
  sys.path[:0] = [os.path.join(_ROOT, "examples"), _ROOT]
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


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--rounds", type=int, default=7)
  parser.add_argument("--one", choices=CONTENDERS, help=argparse.SUPPRESS)
  args = parser.parse_args()
  if args.one:
    print(f"SECONDS {_first_step(args.one)}")
    return
  results = {name: [] for name in CONTENDERS}
  for r in range(args.rounds):
    for name in (CONTENDERS if r % 2 == 0 else CONTENDERS[::-1]):
      out = subprocess.run([sys.executable, __file__, "--one", name],
                           capture_output=True, text=True, check=True).stdout
      results[name].append(float(out.split("SECONDS ")[-1]))
    print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
  median = {name: statistics.median(s) for name, s in results.items()}
  print(f"{'':14s} {'first step':>11s} {'rounds min-max':>15s}")
  for name, seconds in results.items():
    print(f"{name:14s} {median[name]:10.2f}s "
          f"{min(seconds):7.2f}-{max(seconds):.2f}s")
  print(f"Supervised: {median['Supervised'] / median['hand-written']:.2f}x "
        "the hand-written step's time to the first step")


if __name__ == "__main__":
  main()
