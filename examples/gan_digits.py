"""A GAN on scikit-learn's 8x8 digits, scored by a digits classifier.

    python examples/gan_digits.py            # trains, or resumes
    python examples/gan_digits.py            # again: says it is done

1. Trains a digits classifier (an MLP on the flat 8x8 images) with
   `snt.scenarios.Supervised` and reports its test accuracy.
2. Trains `snt.scenarios.GAN` (non-saturating loss, R1 penalty, generator
   EMA) on the training images, with checkpoints under runs/gan_digits
   (stop it at any time and run the same command to carry on).
3. At every evaluation writes a PNG grid of 100 samples
   (runs/gan_digits/samples_<step>.png) and the classifier score of 1,000
   samples: how often the classifier is confident (top probability >= 0.9),
   how evenly the ten classes come out (entropy / log 10) and how many
   classes appear. Real test digits are scored the same way for reference.

Measured (10,000 steps): classifier test accuracy 97.2%; real test digits
91.7% confident, evenness 0.997, 10 classes; GAN samples 74.2% confident,
evenness 0.990, 10 classes. Most samples in the grid read as digits, some
are blurred or ambiguous.
"""

import argparse
import os
import shutil
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE, os.path.dirname(_HERE)]
import _digits  # pylint: disable=g-import-not-at-top
import sonnet_like as snt  # pylint: disable=g-import-not-at-top
from sonnet_like.scenarios.gan import evaluation as gan_eval  # pylint: disable=g-import-not-at-top


class Generator(snt.Module):
  """Latent code -> 64 pixels in [0, 1]."""

  def __init__(self, name: str = "generator"):
    super().__init__(name=name)
    self.mlp = snt.nets.MLP([256, 256, 64], activation=tf.nn.leaky_relu,
                            name="mlp")

  def __call__(self, codes: tf.Tensor) -> tf.Tensor:
    return tf.sigmoid(self.mlp(codes))


def discriminator() -> snt.Module:
  return snt.nets.MLP([256, 256, 1], activation=tf.nn.leaky_relu,
                      name="discriminator")


def train_classifier(x_train, y_train, x_test, y_test, save_dir,
                     dry_run=False):
  """A digits classifier trained with the Supervised scenario."""
  tf.random.set_seed(0)
  classifier = snt.nets.MLP([128, 10], name="classifier")
  loss = lambda logits, labels: (
      tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
  train = snt.scenarios.Supervised(
      num_steps=2_000, batch_size=64, steps_per_call=50, eval_every=2_000,
      save_dir=os.path.join(save_dir, "classifier"), save_every=2_000,
      progress=False, dry_run=dry_run)
  history = train(classifier, snt.optimizers.Adam(1e-3), loss,
                  (x_train, y_train), eval_data=(x_test, y_test))
  return classifier, history.eval["accuracy"][-1]


def main(argv=None) -> dict[str, float]:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--num_steps", type=int, default=10_000)
  parser.add_argument("--eval_every", type=int, default=1_000)
  parser.add_argument("--save_dir", default="runs/gan_digits")
  parser.add_argument("--dry_run", action="store_true",
                      help="check the whole run first, in seconds: a few "
                      "steps, an evaluation, a save, a resume and an export "
                      "in a temporary folder, then stop")
  args = parser.parse_args(argv)

  (x_train, y_train), (x_test, y_test) = _digits.load(flat=True)
  classifier, accuracy = train_classifier(x_train, y_train, x_test, y_test,
                                          args.save_dir, args.dry_run)
  print(f"Classifier test accuracy: {accuracy:.2%}")
  real = gan_eval.classifier_score(classifier(x_test))
  print(f"Real test digits: {real}")

  tf.random.set_seed(1)
  gan = snt.scenarios.GAN(
      num_steps=args.num_steps, loss="non_saturating", gradient_penalty=1.0,
      penalty="r1", generator_ema=0.999, latent_size=32, batch_size=64,
      steps_per_call=50, eval_every=args.eval_every,
      save_every=args.eval_every, save_dir=args.save_dir,
      log_every=args.eval_every, dry_run=args.dry_run)
  # A dry run leaves save_dir untouched: its sample grids go elsewhere.
  grid_dir = tempfile.mkdtemp() if args.dry_run else args.save_dir
  grid = gan_eval.SampleGrid(grid_dir, num_samples=100, columns=10,
                             shape=(8, 8), scale=6)
  history = gan(Generator(), discriminator(),
                keras.optimizers.Adam(2e-4, beta_1=0.5),
                keras.optimizers.Adam(2e-4, beta_1=0.5), x_train,
                evaluators=[grid, gan_eval.ClassifierScore(classifier)])
  if args.dry_run:
    shutil.rmtree(grid_dir, ignore_errors=True)
    return {}
  if not history.eval:
    return {}
  score = {k: history.eval[k][-1] for k in ("confident", "class_evenness",
                                            "classes")}
  print(f"GAN samples after {gan.step} steps: {score}")
  if grid.last_path:
    print(f"Sample grid: {grid.last_path}")
  return score


if __name__ == "__main__":
  main()
