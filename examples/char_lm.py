"""Character-level transformer language model on Python's own source code.

The corpus is the standard library of the Python running this script (the
`.py` files next to `os.py`, read at run time; nothing is downloaded). One
file in ten is held out. A `snt.nets.TransformerLM` (rotary positions,
pre-norm blocks) learns to predict each next byte of random windows of the
other files, trained by `snt.scenarios.Supervised` with Adam and a linear
warm-up then cosine decay of the learning rate. The script reports bits per
character (per byte: the few non-ASCII bytes share one id) on the held-out
files, writes code from a prompt with the key/value cache (every token in
one compiled call), and exports a sampler that plain TensorFlow serves:

    loaded = tf.saved_model.load("runs/char_lm/sampler")
    loaded.signatures["serving_default"](prompt=tf.constant("def "),
                                         seed=tf.constant(0, tf.int64))

Run: python examples/char_lm.py [--minutes 8.5] [--dry_run]

Training stops after `--num_steps` or `--minutes` (from the start of the
script), whichever comes first, so the whole script ends within about ten
minutes on a 2-core machine.
"""

import argparse
import glob
import math
import os
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

import sonnet_like as snt  # pylint: disable=g-import-not-at-top

# Id 0 is every byte outside printable ASCII (and tab); then newline and
# the printable characters.
CHARS = "\0\n" + "".join(chr(c) for c in range(32, 127))
VOCAB_SIZE = len(CHARS)
PROMPT_LENGTH = 32  # The exported sampler left-pads its prompt with newlines.


def byte_table() -> np.ndarray:
  """The id of each byte value."""
  table = np.zeros(256, np.int32)
  for i, c in enumerate(CHARS[1:], start=1):
    table[ord(c)] = i
  return table


def corpus(held_out_every: int = 10) -> tuple[np.ndarray, np.ndarray, int]:
  """(training ids, held-out ids, number of files) from the standard library."""
  folder = os.path.dirname(os.__file__)
  files = sorted(glob.glob(os.path.join(folder, "*.py")))
  table = byte_table()
  train, held_out = [], []
  for i, path in enumerate(files):
    with open(path, "rb") as f:
      ids = table[np.frombuffer(f.read(), np.uint8)]
    (held_out if i % held_out_every == 0 else train).append(ids)
  return np.concatenate(train), np.concatenate(held_out), len(files)


def training_windows(ids: np.ndarray, length: int, batch_size: int,
                     seed: int) -> tf.data.Dataset:
  """Endless batches of random windows: (inputs, next characters)."""
  ids = tf.constant(ids)
  starts = len(ids) - length - 1

  def window(r):
    start = tf.cast(tf.math.floormod(r, starts), tf.int32)
    chunk = tf.slice(ids, [start], [length + 1])
    return chunk[:-1], chunk[1:]

  return (tf.data.Dataset.random(seed=seed).map(window)
          .batch(batch_size, drop_remainder=True))


def held_out_windows(ids: np.ndarray, length: int,
                     count: int) -> tuple[np.ndarray, np.ndarray]:
  """Evenly spaced windows of the held-out files (inputs, targets)."""
  starts = np.linspace(0, len(ids) - length - 1, count).astype(np.int64)
  chunks = np.stack([ids[s:s + length + 1] for s in starts])
  return chunks[:, :-1], chunks[:, 1:]


def cross_entropy(logits: tf.Tensor, targets: tf.Tensor) -> tf.Tensor:
  """Mean nats per character of each window."""
  return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
      labels=targets, logits=logits), axis=-1)


def bits_per_character(logits: tf.Tensor, targets: tf.Tensor) -> tf.Tensor:
  return cross_entropy(logits, targets) / math.log(2.)


def text_of(ids) -> str:
  return "".join(CHARS[i] if i else "?" for i in np.asarray(ids).ravel())


class TimeBudget(snt.scenarios.Hook):
  """Ends training once `minutes` have passed since the script started."""

  def __init__(self, start: float, minutes: float):
    self.start, self.minutes = start, minutes

  def step_end(self, scenario, step, logs):
    if time.time() - self.start > 60 * self.minutes:
      scenario.request_stop(f"time budget of {self.minutes} minutes spent at "
                            f"step {step}", final=True)


class Sampler(tf.Module):
  """A string prompt -> its continuation, in one compiled call."""

  def __init__(self, model: snt.nets.TransformerLM, num_tokens: int,
               temperature: float = 0.8, top_k: int = 20):
    super().__init__()
    self.model = model
    self.num_tokens = num_tokens
    self.temperature = temperature
    self.top_k = top_k
    self.table = tf.constant(byte_table())
    self.chars = tf.constant([c.encode() if i else b"?"
                              for i, c in enumerate(CHARS)])
    # The strings stay outside XLA; the whole generation is compiled.
    self._tokens = tf.function(
        lambda ids, seed: model.sample(ids, num_tokens,
                                       temperature=temperature, top_k=top_k,
                                       seed=seed), jit_compile=True)

  def __call__(self, inputs: dict[str, tf.Tensor]) -> tf.Tensor:
    ids = tf.gather(self.table, tf.cast(
        tf.io.decode_raw(inputs["prompt"], tf.uint8), tf.int32))
    padded = tf.concat([tf.fill([PROMPT_LENGTH], 1), ids], 0)
    padded = tf.reshape(padded[-PROMPT_LENGTH:], [PROMPT_LENGTH])
    seed = tf.stack([tf.cast(inputs["seed"], tf.int32), 0])
    tokens = self._tokens(padded[tf.newaxis], seed)
    return tf.strings.reduce_join(tf.gather(self.chars, tokens[0]))


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--num_steps", type=int, default=1_000)
  parser.add_argument("--minutes", type=float, default=8.5,
                      help="stop training after this many minutes from the "
                      "start (the schedule is planned for --num_steps)")
  parser.add_argument("--batch_size", type=int, default=32)
  parser.add_argument("--length", type=int, default=128)
  parser.add_argument("--num_layers", type=int, default=3)
  parser.add_argument("--model_size", type=int, default=192)
  parser.add_argument("--num_heads", type=int, default=4)
  parser.add_argument("--learning_rate", type=float, default=2e-3)
  parser.add_argument("--eval_windows", type=int, default=256)
  parser.add_argument("--sample_tokens", type=int, default=400)
  parser.add_argument("--save_dir", default="runs/char_lm")
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--dry_run", action="store_true",
                      help="check the whole run in seconds: a few steps, an "
                      "evaluation, a save, a resume, sampling and the "
                      "sampler's export in a temporary folder, then stop")
  args = parser.parse_args(argv)

  start = time.time()
  train_ids, held_out_ids, num_files = corpus()
  eval_windows = 8 if args.dry_run else args.eval_windows
  eval_data = held_out_windows(held_out_ids, args.length, eval_windows)
  print(f"{num_files} files of {os.path.dirname(os.__file__)}: "
        f"{len(train_ids):,} training characters, {len(held_out_ids):,} "
        f"held out ({eval_windows} windows of {args.length} evaluated); "
        f"uniform guessing costs log2({VOCAB_SIZE}) = "
        f"{math.log2(VOCAB_SIZE):.2f} bits per character.")

  tf.random.set_seed(args.seed)
  model = snt.nets.TransformerLM(
      VOCAB_SIZE, args.num_layers, args.num_heads, args.model_size,
      norm="rms", name="char_lm")
  optimizer = snt.optimizers.Adam(args.learning_rate)
  warmup = max(1, args.num_steps // 20)
  train = snt.scenarios.Supervised(
      num_steps=args.num_steps, steps_per_call=10,
      eval_every=max(10, args.num_steps // 4), log_every=100,
      save_dir=args.save_dir, seed=args.seed,
      hooks=[TimeBudget(start, args.minutes)],
      learning_rate_schedule=snt.scenarios.schedules.warmup_cosine(
          warmup, args.num_steps - warmup, end=0.05),
      dry_run=args.dry_run)
  history = train(model, optimizer, cross_entropy,
                  training_windows(train_ids, args.length, args.batch_size,
                                   args.seed),
                  eval_data=eval_data,
                  metrics={"bits_per_character": bits_per_character})
  bits = history.eval["bits_per_character"][-1]
  if not args.dry_run:
    bits = train.evaluate(model, eval_data, cross_entropy, metrics={
        "bits_per_character": bits_per_character})["bits_per_character"]
  stopped = getattr(history, "stop_reason", None)
  print(f"Held-out bits per character: {bits:.3f} after {train.step} steps "
        f"({time.time() - start:.0f} s since the start"
        f"{'; ' + stopped if stopped else ''}).")

  num_tokens = 24 if args.dry_run else args.sample_tokens
  sampler = Sampler(model, num_tokens)
  generate = tf.function(sampler)
  clock = time.time()
  text = generate({"prompt": tf.constant("def "),
                   "seed": tf.constant(args.seed, tf.int64)})
  print(f"\nSampled {num_tokens} characters after 'def ' (one call, "
        f"{time.time() - clock:.1f} s with compiling):\ndef "
        f"{text.numpy().decode()}\n")

  export_dir = (tempfile.mkdtemp(prefix="char_lm_sampler_") if args.dry_run
                else os.path.join(args.save_dir, "sampler"))
  snt.export.save(export_dir, {"serving_default": snt.export.Signature(
      sampler, {"prompt": tf.TensorSpec([], tf.string),
                "seed": tf.TensorSpec([], tf.int64)},
      batched=False, output_name="text")})
  loaded = tf.saved_model.load(export_dir)  # Plain TensorFlow from here.
  served = loaded.signatures["serving_default"](
      prompt=tf.constant("import "), seed=tf.constant(1, tf.int64))["text"]
  print(f"Exported sampler: {export_dir}; served after 'import ': "
        f"{served.numpy().decode()[:60]!r}...")
  return bits


if __name__ == "__main__":
  main()
