"""Modules without a scenario: a hand-written training loop on digits.

Trains an MLP and a small ConvNet on scikit-learn's bundled 8x8 digits with a
plain `tf.GradientTape` step compiled by `tf.function`, and prints the test
accuracy of each (both reach >= 97%).

Run: python examples/digits_handwritten.py [--steps 1500]
"""

import argparse
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

import sonnet_like as snt  # pylint: disable=g-import-not-at-top
from sklearn import datasets  # pylint: disable=g-import-not-at-top
from sklearn import model_selection  # pylint: disable=g-import-not-at-top


def load_digits(seed: int = 0):
  """Images in [0, 1] of shape [N, 8, 8, 1], int labels; a stratified split."""
  digits = datasets.load_digits()
  images = (digits.images / 16.).astype(np.float32)[..., None]
  return model_selection.train_test_split(
      images, digits.target.astype(np.int32), test_size=0.25,
      random_state=seed, stratify=digits.target)


def mlp() -> snt.Module:
  return snt.Sequential([snt.Flatten(), snt.nets.MLP([256, 128, 10])])


def convnet() -> snt.Module:
  return snt.Sequential([
      snt.Conv2D(32, 3), tf.nn.relu,
      snt.Conv2D(64, 3, stride=2), tf.nn.relu,
      snt.Flatten(),
      snt.Linear(128), tf.nn.relu,
      snt.Linear(10),
  ])


def train(model: snt.Module, data, steps: int, batch_size: int = 64,
          seed: int = 0) -> float:
  """Trains `model` with Adam; returns its test accuracy."""
  x_train, x_test, y_train, y_test = data
  dataset = (tf.data.Dataset.from_tensor_slices((x_train, y_train))
             .shuffle(len(x_train), seed=seed).repeat().batch(batch_size))
  optimizer = snt.optimizers.Adam(1e-3)

  @tf.function
  def step(images, labels):
    with tf.GradientTape() as tape:
      logits = model(images)
      loss = tf.reduce_mean(
          tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply(grads, model.trainable_variables)
    return loss

  for i, (images, labels) in enumerate(dataset.take(steps)):
    loss = step(images, labels)
    if i % 500 == 0 or i == steps - 1:
      print(f"  step {i:5d}  loss {float(loss):.4f}")
  predictions = tf.argmax(model(x_test), axis=-1, output_type=tf.int32)
  return float(np.mean(predictions.numpy() == y_test))


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--steps", type=int, default=1500)
  parser.add_argument("--dry_run", action="store_true",
                      help="train 3 steps (a quick check), then stop")
  args = parser.parse_args()
  tf.random.set_seed(0)
  data = load_digits()
  for name, make in (("MLP", mlp), ("ConvNet", convnet)):
    print(f"{name}:")
    accuracy = train(make(), data, 3 if args.dry_run else args.steps)
    print(f"{name} test accuracy: {accuracy:.2%}")


if __name__ == "__main__":
  main()
