"""The training loop's stall per checkpoint save: synchronous against async.

An MLP of 59M parameters (2048-4096-4096-4096-4096) trained with
`snt.optimizers.Adam` (so a checkpoint holds 177M floats, ~710 MB), batch
32, in one process with interleaved rounds of three modes:

  none    no saves: the baseline of the run time
  sync    a save every `--every` steps writes the whole checkpoint before
          training goes on (`checkpointing.Checkpointer`)
  async   `Checkpointer(async_save=True)`: the save takes a snapshot of the
          state in memory (`snapshot.take`) and returns; a thread writes it
          into the folder while training goes on

Prints, per mode, the median time the loop waited inside `save()` (the
stall; for async, the part spent waiting for the previous write, which
has not finished when saves come faster than writes), the median wall time of the loop (its last step done) and of the
whole run (the last write waited for, as a scenario's end waits), the
process's CPU time, and the ratios: stall async/sync, run time against
`none`. The machine's load average (`os.getloadavg`, 1 min) is printed
beside each figure: on a shared machine the figures move with it.

    python benchmarks/bench_async_save.py [--steps 24] [--every 4] [--rounds 2]
        [--save_dir DIR]
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # pylint: disable=g-import-not-at-top

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, _ROOT)
import sonnet_like as snt  # pylint: disable=g-import-not-at-top
from sonnet_like.core import files  # pylint: disable=g-import-not-at-top
from sonnet_like.scenarios.run_folder import background_save  # pylint: disable=g-import-not-at-top
from sonnet_like.scenarios.run_folder import checkpointing  # pylint: disable=g-import-not-at-top

SIZES, INPUT, BATCH = (4096, 4096, 4096, 4096), 2048, 32
MODES = ("none", "sync", "async")


def run(mode: str, steps: int, every: int,
        parent: str | None) -> dict[str, float]:
  """One training run: its median stall per save, loop and run wall times,
  CPU time and the load average at its end."""
  tf.random.set_seed(0)
  model = snt.nets.MLP(SIZES, name="mlp")
  optimizer = snt.optimizers.Adam(1e-4)
  x = tf.random.normal([BATCH, INPUT])

  @tf.function
  def step():
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean(tf.square(model(x)))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply(grads, model.trainable_variables)
    return loss

  step()  # Trace outside the timing.
  folder = (tempfile.mkdtemp(prefix="bench_async_save_") if parent is None
            else files.join(parent, f"bench_async_save_{uuid.uuid4().hex}"))
  stalls, waits = [], []
  try:
    saver = None if mode == "none" else checkpointing.Checkpointer(
        folder, {"model": model, "optimizer": optimizer}, max_to_keep=2,
        async_save=mode == "async", say=lambda message: None)
    cpu, start = time.process_time(), time.perf_counter()
    for i in range(1, steps + 1):
      step().numpy()
      if saver is not None and i % every == 0:
        before, waited = time.perf_counter(), _Waited.total
        saver.save(i)
        stalls.append(time.perf_counter() - before)
        waits.append(_Waited.total - waited)
    loop = time.perf_counter() - start
    if saver is not None:
      saver.close()  # Waits for the last async write.
    wall = time.perf_counter() - start
    cpu = time.process_time() - cpu
  finally:
    files.rmtree(folder)
  return dict(stall=statistics.median(stalls) if stalls else 0.0,
              wait=statistics.median(waits) if waits else 0.0, loop=loop,
              wall=wall, cpu=cpu, load=os.getloadavg()[0])


class _Waited:
  """Seconds an async save spent waiting for the previous write (part of
  its stall; the rest is the snapshot)."""
  total = 0.0
  wait = background_save.BackgroundWriter.wait

  @staticmethod
  def timed(writer) -> None:
    start = time.perf_counter()
    try:
      _Waited.wait(writer)
    finally:
      _Waited.total += time.perf_counter() - start


background_save.BackgroundWriter.wait = _Waited.timed


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--steps", type=int, default=24)
  parser.add_argument("--every", type=int, default=4)
  parser.add_argument("--rounds", type=int, default=2)
  parser.add_argument("--save_dir", default=None,
                      help="where the run folders go (default: a local "
                      "temporary folder); any file system TensorFlow reaches")
  args = parser.parse_args()
  count = sum(a * b + b for a, b in zip((INPUT,) + SIZES[:-1], SIZES))
  print(f"MLP {INPUT}-{'-'.join(map(str, SIZES))}: {count / 1e6:.0f}M "
        f"weights, Adam; {args.steps} steps, a save every {args.every}; "
        f"load average at start {os.getloadavg()[0]:.2f}")
  rows = {mode: [] for mode in MODES}
  for round_ in range(args.rounds):
    for mode in MODES:
      result = run(mode, args.steps, args.every, args.save_dir)
      rows[mode].append(result)
      print(f"  round {round_ + 1} {mode:5s} stall "
            f"{result['stall'] * 1000:7.1f} ms (waiting "
            f"{result['wait'] * 1000:6.1f})  loop {result['loop']:6.2f} s"
            f"  run {result['wall']:6.2f} s  cpu {result['cpu']:6.1f} s  "
            f"(load {result['load']:.2f})", flush=True)
  med = {mode: {key: statistics.median(r[key] for r in results)
                for key in results[0]} for mode, results in rows.items()}
  for mode in MODES:
    m = med[mode]
    print(f"{mode:5s} stall per save {m['stall'] * 1000:7.1f} ms (waiting "
          f"for the previous write {m['wait'] * 1000:6.1f} ms)   loop "
          f"{m['loop']:6.2f} s   run {m['wall']:6.2f} s   cpu "
          f"{m['cpu']:6.1f} s   (load {m['load']:.2f})")
  sync, fast, none = med["sync"], med["async"], med["none"]
  print(f"async/sync stall per save {fast['stall'] / sync['stall']:.3f}x "
        f"({sync['stall'] / max(fast['stall'], 1e-9):.0f}x smaller)")
  print(f"run time against no saves: async {fast['wall'] / none['wall']:.3f}x"
        f" (loop {fast['loop'] / none['loop']:.3f}x), sync "
        f"{sync['wall'] / none['wall']:.3f}x")
  print(f"load average at end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
  main()
