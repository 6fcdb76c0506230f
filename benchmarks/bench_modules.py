"""Call time of sonnet_like modules against the same maths in raw TF ops.

Everything runs in one process with rounds interleaved; each figure is the
median over rounds of the mean time per call. Printed:

- Linear and MLP: raw ops, sonnet_like and dm-sonnet 2 (if installed), eagerly
  and under tf.function (tracing time shown apart from the call time);
- a model of 100 small Linear layers, eager vs tf.function, and the eager
  overhead per module call over raw ops, for sonnet_like and dm-sonnet.

Run: python benchmarks/bench_modules.py [--rounds 7] [--calls 300]
"""

import argparse
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # pylint: disable=g-import-not-at-top

import sonnet_like as snt  # pylint: disable=g-import-not-at-top

try:
  import sonnet as reference  # pylint: disable=g-import-not-at-top
except ImportError:
  reference = None


def _per_call(fn, x, calls: int) -> float:
  start = time.perf_counter()
  for _ in range(calls):
    out = fn(x)
  _ = out.numpy()  # Wait for the last result.
  return (time.perf_counter() - start) / calls


def _trace_time(fn, x) -> float:
  start = time.perf_counter()
  fn(x).numpy()
  return time.perf_counter() - start


def _raw_stack(module, activation):
  """The same maths as a built stack of Linear layers, in raw ops."""
  params = [(m.w, m.b) for m in (module, *module.submodules)
            if hasattr(m, "w")]

  def forward(x):
    for i, (w, b) in enumerate(params):
      x = tf.matmul(x, w) + b
      if activation is not None and i < len(params) - 1:
        x = activation(x)
    return x

  return forward


def _cases(width: int, batch: int):
  """(name, input, {variant: callable}) for each benchmark case."""
  cases = []
  x = tf.random.normal([batch, width])

  linear = snt.Linear(width)
  linear(x)
  variants = {"raw": _raw_stack(linear, None), "sonnet_like": linear}
  if reference is not None:
    ref = reference.Linear(width)
    ref(x)
    variants["dm-sonnet"] = ref
  cases.append((f"Linear({width}) on [{batch}, {width}]", x, variants))

  sizes = [width, width, 10]
  mlp = snt.nets.MLP(sizes)
  mlp(x)
  variants = {"raw": _raw_stack(mlp, tf.nn.relu), "sonnet_like": mlp}
  if reference is not None:
    ref = reference.nets.MLP(sizes)
    ref(x)
    variants["dm-sonnet"] = ref
  cases.append((f"MLP({sizes}) on [{batch}, {width}]", x, variants))

  small = tf.random.normal([1, 8])
  deep = snt.Sequential([snt.Linear(8) for _ in range(100)])
  deep(small)
  variants = {"raw": _raw_stack(deep, None), "sonnet_like": deep}
  if reference is not None:
    ref = reference.Sequential([reference.Linear(8) for _ in range(100)])
    ref(small)
    variants["dm-sonnet"] = ref
  cases.append(("100 x Linear(8) on [1, 8]", small, variants))
  return cases


def _median_times(variants, x, rounds, calls):
  """{(variant, mode): median seconds per call}, rounds interleaved.

  Every other round runs the variants in reversed order.
  """
  compiled = {name: tf.function(fn) for name, fn in variants.items()}
  trace = {name: _trace_time(fn, x) for name, fn in compiled.items()}
  samples = {}
  names = list(variants)
  for r in range(rounds):
    for name in names if r % 2 == 0 else names[::-1]:
      for mode, fn in (("eager", variants[name]), ("function",
                                                   compiled[name])):
        samples.setdefault((name, mode), []).append(_per_call(fn, x, calls))
  return {k: statistics.median(v) for k, v in samples.items()}, trace


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--rounds", type=int, default=7)
  parser.add_argument("--calls", type=int, default=300)
  parser.add_argument("--width", type=int, default=256)
  parser.add_argument("--batch", type=int, default=64)
  args = parser.parse_args()

  print(f"TensorFlow {tf.__version__}, sonnet_like {snt.__version__}, "
        f"dm-sonnet {getattr(reference, '__version__', 'not installed')}; "
        f"{args.rounds} rounds x {args.calls} calls, medians")
  for title, x, variants in _cases(args.width, args.batch):
    times, trace = _median_times(variants, x, args.rounds, args.calls)
    print(f"\n{title}")
    print(f"  {'variant':<12} {'eager us':>9} {'x raw':>6} {'tf.function us':>15}"
          f" {'x raw':>6} {'trace ms':>9}")
    for name in variants:
      eager, function = times[(name, "eager")], times[(name, "function")]
      print(f"  {name:<12} {eager * 1e6:9.1f} "
            f"{eager / times[('raw', 'eager')]:6.2f} {function * 1e6:15.1f} "
            f"{function / times[('raw', 'function')]:6.2f} "
            f"{trace[name] * 1e3:9.1f}")
    if title.startswith("100"):
      raw = times[("raw", "eager")]
      for name in variants:
        if name != "raw":
          overhead = (times[(name, "eager")] - raw) / 100
          print(f"  eager overhead per module call, {name}: "
                f"{overhead * 1e6:.1f} us")
      print("  sonnet_like eager / tf.function: "
            f"{times[('sonnet_like', 'eager')] / times[('sonnet_like', 'function')]:.1f}x")


if __name__ == "__main__":
  main()
