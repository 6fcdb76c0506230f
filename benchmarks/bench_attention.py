"""Attention (issue 43): speed against Keras, memory, cached sampling.

Three measurements, each a ratio taken in one process (memory: in child
processes, one per contender, so each has its own peak):

1. `speed`: forward + backward of `snt.MultiHeadAttention` against
   `keras.layers.MultiHeadAttention` with the same weights (self-attention,
   4 heads, model size 256, batch 8, sequence 256), in `tf.function` with
   and without XLA. Rounds interleave the two; medians of the time per
   step. Tracing/compiling is timed apart.
2. `memory`: peak resident memory (`ru_maxrss`) of one training step of a
   2-block `snt.nets.Transformer` (model size 256, 4 heads, batch 1,
   sequence 4096): plain attention against chunked attention (256 keys a
   chunk by default, `--chunk_size`) with `remat=True`. Printed: the peak of the whole process and the
   peak above the process's memory just before the step (TensorFlow and
   the weights), whose ratio is the step's own memory.
3. `sampling`: `TransformerLM.sample` of 256 tokens after a 16-token prompt
   in one compiled call, from the key/value cache against recomputing the
   whole sequence at every token (`use_cache=False`), with and without XLA.

Run: python benchmarks/bench_attention.py [--rounds 7] [--parts speed,memory,sampling]

Measured (2026-11-27, 2 cores shared with other jobs, load average 7-15):
ours / Keras 1.00x (tf.function) and 1.08x (XLA); the step's own memory
0.19x of plain with 256-key chunks (0.24x with 512; whole process 0.48x,
TensorFlow itself being ~800 MB); cached sampling 5.9x (tf.function) and
47x (XLA) faster than recomputing, with the same tokens.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # pylint: disable=g-import-not-at-top

import sonnet_like as snt  # pylint: disable=g-import-not-at-top


def _keras_twin(ours, x, heads, key_size):
  """A Keras MultiHeadAttention holding `ours`' weights."""
  import keras  # pylint: disable=g-import-not-at-top
  layer = keras.layers.MultiHeadAttention(heads, key_size)
  layer(x, x)
  for dense, projection in [(layer.query_dense, ours.query_projection),
                            (layer.key_dense, ours.key_projection),
                            (layer.value_dense, ours.value_projection)]:
    dense.kernel.assign(tf.reshape(projection.w, [-1, heads, key_size]))
    dense.bias.assign(tf.reshape(projection.b, [heads, key_size]))
  layer.output_dense.kernel.assign(
      tf.reshape(ours.output_projection.w, [heads, key_size, -1]))
  layer.output_dense.bias.assign(ours.output_projection.b)
  return layer


def _step(layer, variables, keras_style):
  def step(x):
    with tf.GradientTape() as tape:
      out = layer(x, x) if keras_style else layer(x)
      loss = tf.reduce_mean(out ** 2)
    return loss, tape.gradient(loss, variables)
  return step


def _time(fn, x, calls):
  start = time.perf_counter()
  for _ in range(calls):
    loss, _ = fn(x)
  float(loss)
  return (time.perf_counter() - start) / calls


def speed(rounds: int, calls: int) -> None:
  batch, length, model, heads = 8, 256, 256, 4
  x = tf.random.normal([batch, length, model])
  ours = snt.MultiHeadAttention(heads, model_size=model)
  ours(x)
  theirs = _keras_twin(ours, x, heads, model // heads)
  difference = float(tf.reduce_max(tf.abs(ours(x) - theirs(x, x))))
  # TensorFlow's one-time start-up, so no contender's first call pays it.
  tf.function(lambda x: tf.reduce_sum(tf.matmul(x, x, transpose_b=True)))(x)
  print(f"speed: batch {batch}, sequence {length}, model {model}, "
        f"{heads} heads; max |ours - Keras| = {difference:.2e}")
  for xla in (False, True):
    fns = {
        "sonnet_like": tf.function(
            _step(ours, ours.trainable_variables, False), jit_compile=xla),
        "keras": tf.function(
            _step(theirs, theirs.trainable_variables, True),
            jit_compile=xla),
    }
    first = {}
    for name, fn in fns.items():
      start = time.perf_counter()
      float(fn(x)[0])
      first[name] = time.perf_counter() - start
    samples = {name: [] for name in fns}
    names = list(fns)
    for r in range(rounds):
      for name in names if r % 2 == 0 else names[::-1]:
        samples[name].append(_time(fns[name], x, calls))
    median = {name: statistics.median(s) for name, s in samples.items()}
    label = "XLA" if xla else "tf.function"
    for name in names:
      print(f"  {label:11s} {name:11s} {median[name] * 1e3:8.2f} ms/step "
            f"(first call, tracing{' + compiling' if xla else ''}: "
            f"{first[name]:.2f} s)")
    print(f"  {label:11s} ours / Keras speed: "
          f"{median['keras'] / median['sonnet_like']:.2f}x")


def _memory_child(variant: str, length: int, chunk_size: int) -> None:
  """One training step in this process; prints its memory as JSON."""
  options = {} if variant == "plain" else {"chunk_size": chunk_size,
                                           "remat": True}
  tf.random.set_seed(0)
  net = snt.nets.Transformer(2, 4, 256, causal=True, **options)
  x = tf.random.normal([1, length, 256])
  optimizer = snt.optimizers.SGD(0.01)

  @tf.function
  def train(x):
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean(net(x) ** 2)
    grads = tape.gradient(loss, net.trainable_variables)
    optimizer.apply(grads, net.trainable_variables)
    return loss

  net(x[:, :8])  # Build the weights.
  concrete = train.get_concrete_function(tf.TensorSpec(x.shape, x.dtype))
  before = _rss_now()
  float(concrete(x))
  peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
  start = time.perf_counter()
  float(concrete(x))
  print(json.dumps({"before": before, "peak": peak,
                    "seconds": time.perf_counter() - start}))


def _rss_now() -> int:
  with open("/proc/self/statm") as f:
    return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def memory(length: int, chunk_size: int) -> None:
  print(f"memory: one training step, 2-block Transformer, model 256, 4 "
        f"heads, batch 1, sequence {length}; chunks of {chunk_size} keys")
  results = {}
  for variant in ("plain", "chunked_remat"):
    out = subprocess.run(
        [sys.executable, __file__, "--memory_child", variant, "--length",
         str(length), "--chunk_size", str(chunk_size)], capture_output=True,
        text=True, check=True)
    results[variant] = json.loads(out.stdout.strip().splitlines()[-1])
  mb = 1 / 2**20
  for variant, r in results.items():
    print(f"  {variant:13s} peak {r['peak'] * mb:8.0f} MB, before the step "
          f"{r['before'] * mb:6.0f} MB, step's own {(r['peak'] - r['before']) * mb:8.0f}"
          f" MB, step {r['seconds']:.2f} s")
  plain, chunked = results["plain"], results["chunked_remat"]
  print(f"  chunked+remat / plain: whole process "
        f"{chunked['peak'] / plain['peak']:.3f}, the step's own "
        f"{(chunked['peak'] - chunked['before']) / (plain['peak'] - plain['before']):.3f}")


def sampling(rounds: int, num_tokens: int) -> None:
  tf.random.set_seed(0)
  lm = snt.nets.TransformerLM(96, 2, 4, 256)
  prompt = tf.random.uniform([1, 16], maxval=96, dtype=tf.int32)
  lm(prompt)
  print(f"sampling: TransformerLM 2 blocks, model 256, 4 heads, vocab 96; "
        f"{num_tokens} tokens after 16, greedy, one call")
  for xla in (False, True):
    fns = {cache: tf.function(
        lambda p, cache=cache: lm.sample(p, num_tokens, temperature=0.,
                                         use_cache=cache), jit_compile=xla)
           for cache in (True, False)}
    first, samples, tokens = {}, {True: [], False: []}, {}
    for cache, fn in fns.items():
      start = time.perf_counter()
      tokens[cache] = fn(prompt).numpy()
      first[cache] = time.perf_counter() - start
    for r in range(rounds):
      for cache in (True, False) if r % 2 == 0 else (False, True):
        start = time.perf_counter()
        fns[cache](prompt).numpy()
        samples[cache].append(time.perf_counter() - start)
    median = {c: statistics.median(s) for c, s in samples.items()}
    label = "XLA" if xla else "tf.function"
    same = (tokens[True] == tokens[False]).all()
    print(f"  {label:11s} cache {median[True]:.3f} s (first {first[True]:.1f}"
          f" s), recompute {median[False]:.3f} s (first {first[False]:.1f} "
          f"s): {median[False] / median[True]:.1f}x; same tokens: {same}")


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--rounds", type=int, default=7)
  parser.add_argument("--calls", type=int, default=10)
  parser.add_argument("--length", type=int, default=4096)
  parser.add_argument("--chunk_size", type=int, default=256)
  parser.add_argument("--tokens", type=int, default=256)
  parser.add_argument("--parts", default="speed,memory,sampling")
  parser.add_argument("--memory_child", default=None)
  args = parser.parse_args()
  if args.memory_child:
    _memory_child(args.memory_child, args.length, args.chunk_size)
    return
  print(f"load average: {os.getloadavg()}")
  parts = args.parts.split(",")
  if "speed" in parts:
    speed(args.rounds, args.calls)
  if "memory" in parts:
    memory(args.length, args.chunk_size)
  if "sampling" in parts:
    sampling(max(3, args.rounds // 2), args.tokens)
  print(f"load average: {os.getloadavg()}")


if __name__ == "__main__":
  main()
