"""Character-level language model: an LSTM learns to continue a text.

The text below is the whole data set (no download). Each training example is
a window of characters; the model reads it one character per step with
`snt.dynamic_unroll` and predicts the next character at every step. The
training step is a hand-written `tf.GradientTape` loop compiled with
`tf.function`. The script prints the loss falling from about ln(vocabulary
size) and then lets the model write a continuation of a prompt.

Run: python examples/lstm_sequence.py [--steps 600]
"""

import argparse
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

import sonnet_like as snt  # pylint: disable=g-import-not-at-top

TEXT = """\
a recurrent network reads a sequence one step at a time. at every step it
takes the next input and the state it carried from the step before, and it
returns an output and a new state. the state is the memory of the network:
whatever it needs to know about the past has to fit in it. a long short-term
memory keeps a cell next to its hidden state, and three gates decide how much
of the cell to forget, how much of the new input to write into it, and how
much of it to show as output. because the cell is changed by adding to it,
gradients can travel back over many steps without vanishing, and the network
can learn to remember a word it saw long ago. to train it we unroll the
network over a window of text, ask it to predict every next character, and
follow the gradient of the error back through all the steps of the window.
"""


class CharModel(snt.Module):
  """One-hot characters -> LSTM -> logits over the vocabulary."""

  def __init__(self, vocab_size: int, hidden_size: int = 128,
               name: str | None = None):
    super().__init__(name=name)
    self.vocab_size = vocab_size
    self.core = snt.LSTM(hidden_size, name="lstm")
    self.readout = snt.Linear(vocab_size, name="readout")

  def __call__(self, chars: tf.Tensor, state=None):
    """`chars` [T, B] ints -> (logits [T, B, V], final LSTM state)."""
    if state is None:
      state = self.core.initial_state(tf.shape(chars)[1])
    inputs = tf.one_hot(chars, self.vocab_size)
    hidden, state = snt.dynamic_unroll(self.core, inputs, state)
    return self.readout(hidden), state


def windows(ids: np.ndarray, length: int, batch_size: int,
            rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
  """Random windows, time-major: inputs [T, B] and next characters [T, B]."""
  starts = rng.integers(0, len(ids) - length - 1, size=batch_size)
  batch = np.stack([ids[s:s + length + 1] for s in starts], axis=1)
  return batch[:-1], batch[1:]


def generate(model: CharModel, prompt: str, chars: list[str],
             length: int) -> str:
  """Greedy continuation of `prompt`, one core step per character."""
  index = {c: i for i, c in enumerate(chars)}
  ids = tf.constant([[index[c]] for c in prompt])  # [T, 1]
  logits, state = model(ids)
  out = []
  next_id = int(tf.argmax(logits[-1, 0]))
  for _ in range(length):
    out.append(chars[next_id])
    hidden, state = model.core(tf.one_hot([next_id], model.vocab_size), state)
    next_id = int(tf.argmax(model.readout(hidden)[0]))
  return prompt + "".join(out)


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--steps", type=int, default=600)
  parser.add_argument("--length", type=int, default=48)
  parser.add_argument("--batch_size", type=int, default=32)
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--dry_run", action="store_true",
                      help="train 3 steps (a quick check), then stop")
  args = parser.parse_args()

  tf.random.set_seed(args.seed)
  rng = np.random.default_rng(args.seed)
  chars = sorted(set(TEXT))
  ids = np.array([chars.index(c) for c in TEXT], np.int32)
  model = CharModel(len(chars))
  optimizer = tf.keras.optimizers.Adam(3e-3)

  @tf.function
  def train_step(inputs, targets):
    with tf.GradientTape() as tape:
      logits, _ = model(inputs)
      loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
          labels=targets, logits=logits))
    variables = model.trainable_variables
    grads = tape.gradient(loss, variables)
    grads, _ = tf.clip_by_global_norm(grads, 5.)
    optimizer.apply_gradients(zip(grads, variables))
    return loss

  print(f"{len(TEXT)} characters, vocabulary of {len(chars)}; uniform "
        f"guessing costs ln({len(chars)}) = {np.log(len(chars)):.2f} nats.")
  start, recent = time.time(), []
  for step in range(1, (3 if args.dry_run else args.steps) + 1):
    loss = train_step(*windows(ids, args.length, args.batch_size, rng))
    recent.append(float(loss))
    if step == 1 or step % 50 == 0:
      print(f"step {step:4d}  loss {np.mean(recent):.3f}  "
            f"({time.time() - start:.0f}s)")
      recent = []
  print("\nprompt 'the state ' ->")
  print(generate(model, "the state ", chars, 80))


if __name__ == "__main__":
  main()
