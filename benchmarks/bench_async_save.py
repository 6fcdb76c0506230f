"""The training loop's stall per checkpoint save: synchronous against async.

An MLP of 59M parameters (2048-4096-4096-4096-4096) trained with
`snt.optimizers.Adam` (so a checkpoint holds 177M floats, ~710 MB), batch
32, a save every `--every` steps through `checkpointing.Checkpointer`, in
one process with interleaved rounds:

  sync    each save writes the whole checkpoint before training goes on
  async   `Checkpointer(async_save=True)`: the save writes to memory
          (`ram://`) and returns; a thread copies the files into the folder
          while training goes on (`background_save.BackgroundWriter`)

Prints, per mode, the median time the loop waited inside `save()` (the
stall), the median wall time of the whole run (the saves included, and the
last async write waited for), and the ratios async/sync. What async saves
win is the write to `save_dir` minus the write to memory: on a local disk
(written to the page cache) about nothing, on cloud storage the upload;
`--save_dir gs://bucket/tmp` measures that where a bucket is reachable.

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
from sonnet_like.scenarios.run_folder import checkpointing  # pylint: disable=g-import-not-at-top

SIZES, INPUT, BATCH = (4096, 4096, 4096, 4096), 2048, 32


def run(async_save: bool, steps: int, every: int,
        parent: str | None) -> tuple[float, float]:
  """(median stall per save, wall time) of one training run."""
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
  stalls = []
  try:
    saver = checkpointing.Checkpointer(
        folder, {"model": model, "optimizer": optimizer}, max_to_keep=2,
        async_save=async_save, say=lambda message: None)
    start = time.perf_counter()
    for i in range(1, steps + 1):
      step().numpy()
      if i % every == 0:
        before = time.perf_counter()
        saver.save(i)
        stalls.append(time.perf_counter() - before)
    saver.close()  # Waits for the last async write.
    wall = time.perf_counter() - start
  finally:
    files.rmtree(folder)
  return statistics.median(stalls), wall


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
        f"weights, Adam; {args.steps} steps, a save every {args.every}")
  results = {"sync": [], "async": []}
  for _ in range(args.rounds):
    for mode in results:
      results[mode].append(run(mode == "async", args.steps, args.every,
                               args.save_dir))
  medians = {mode: (statistics.median(r[0] for r in rows),
                    statistics.median(r[1] for r in rows))
             for mode, rows in results.items()}
  for mode, (stall, wall) in medians.items():
    print(f"{mode:6s} stall per save {stall * 1000:8.1f} ms   "
          f"run {wall:6.1f} s")
  (sync_stall, sync_wall), (async_stall, async_wall) = (medians["sync"],
                                                        medians["async"])
  print(f"async/sync: stall per save {async_stall / sync_stall:.3f}x, "
        f"run time {async_wall / sync_wall:.3f}x")


if __name__ == "__main__":
  main()
