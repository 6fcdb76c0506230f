"""Self-supervised digits: a SimCLR-style scenario, then a linear probe.

    python examples/contrastive.py                  # trains in runs/contrastive
    python examples/contrastive.py --labels 100

`Contrastive` subclasses `snt.scenarios.Scenario`: every step draws two
random views of each image in the graph (a shift of up to one pixel,
pixels masked out, Gaussian noise; all from `self.rng`, the engine's
checkpointed generator, so a resumed run is bitwise the same), encodes and
projects both, and minimises the NT-Xent loss (Chen et al. 2020): each view
must pick its partner out of the other 2N - 2 views of the batch. Under a
multi-replica strategy the projections are gathered across replicas, so the
negatives are those of the global batch, as on one device.

Then a logistic-regression probe trained on a few labelled images (`--labels`)
compares the learned features with raw pixels on the held-out test set.
"""

import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # pylint: disable=g-import-not-at-top
import numpy as np  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE, os.path.dirname(_HERE)]
import _digits  # pylint: disable=g-import-not-at-top
import sonnet_like as snt  # pylint: disable=g-import-not-at-top


def augment(rng: tf.random.Generator, images: tf.Tensor,
            mask_rate: float = 0.2, noise: float = 0.1) -> tf.Tensor:
  """A random view of each `[batch, 8, 8]` image, flattened to 64 pixels."""
  batch = tf.shape(images)[0]
  padded = tf.pad(images, [[0, 0], [1, 1], [1, 1]])
  shifts = tf.stack([padded[:, i:i + 8, j:j + 8]  # The 9 one-pixel shifts.
                     for i in range(3) for j in range(3)], axis=1)
  choice = tf.one_hot(rng.uniform([batch], 0, 9, dtype=tf.int32), 9)
  views = tf.einsum("bkhw,bk->bhw", shifts, choice)
  keep = tf.cast(rng.uniform(tf.shape(views)) >= mask_rate, views.dtype)
  views = views * keep + noise * rng.normal(tf.shape(views))
  return tf.reshape(views, [batch, 64])


def nt_xent(queries, keys, positives, own, temperature):
  """Cross-entropy of each query picking its positive among the keys.

  `queries` `[q, d]` and `keys` `[k, d]` are unit vectors; `positives` and
  `own` are each query's partner and its own index in `keys` (masked out).
  """
  logits = tf.matmul(queries, keys, transpose_b=True) / temperature
  logits -= 1e9 * tf.one_hot(own, tf.shape(keys)[0])
  return tf.nn.sparse_softmax_cross_entropy_with_logits(positives, logits)


class Contrastive(snt.scenarios.Scenario):
  """Trains `encoder` (pixels -> features) and `head` (features ->
  projections) with NT-Xent on `[batch, 8, 8]` images in [0, 1]; logs
  "loss" and "positive_similarity" (mean cosine of the two views' projections).
  """

  def __init__(self, num_steps: int, *, batch_size: int = 256,
               temperature: float = 0.5, **kwargs):
    super().__init__(num_steps, **kwargs)
    self.batch_size, self.temperature = batch_size, temperature

  def __call__(self, encoder, head, optimizer, train_data):
    self.encoder, self.head, self.optimizer = encoder, head, optimizer
    self.feed(train_data, batch_size=self.batch_size, argument="train_data",
              check=self._check)
    return self.run()

  def _check(self, spec):
    if not isinstance(spec, tf.TensorSpec) or spec.shape[1:] != [8, 8]:
      raise TypeError(f"Contrastive: train_data must hold [batch, 8, 8] "
                      f"images, got elements {spec}.")

  def models(self):
    return {"encoder": self.encoder, "head": self.head}

  def trackables(self):
    return dict(self.models(), optimizer=self.optimizer)

  def variables(self):
    return self.encoder.trainable_variables + self.head.trainable_variables

  def build(self):
    self.head(self.encoder(tf.zeros([2, 64])))
    self.build_optimizer(self.optimizer, self.variables())

  def next_inputs(self):
    # Both views of the whole global batch, then one share per replica.
    images = self.next_batch()
    return self.split_for_replicas((augment(self.rng, images),
                                    augment(self.rng, images)))

  def _project(self, views):
    return tf.math.l2_normalize(self.head(self.encoder(views)), axis=-1)

  def train_step(self, first, second):
    context = tf.distribute.get_replica_context()
    replicas = self.strategy.num_replicas_in_sync
    local = tf.shape(first)[0]
    offset = context.replica_id_in_sync_group * local
    with tf.GradientTape() as tape:
      z1, z2 = self._project(first), self._project(second)
      everyone = (z1, z2) if replicas == 1 else (
          context.all_gather(z1, axis=0), context.all_gather(z2, axis=0))
      total = local * replicas
      index = offset + tf.range(local)
      losses = nt_xent(tf.concat([z1, z2], 0), tf.concat(everyone, 0),
                       tf.concat([index + total, index], 0),
                       tf.concat([index, index + total], 0), self.temperature)
      loss = tf.reduce_sum(losses) / tf.cast(2 * total, losses.dtype)
    grads = tape.gradient(loss, self.variables())
    self.apply_update(self.optimizer, grads, self.variables(), loss=loss)
    similarity = tf.reduce_mean(tf.reduce_sum(z1 * z2, -1))
    return {"loss": loss * replicas, "positive_similarity": similarity}


def make_models(features: int = 128, projection: int = 32):
  encoder = snt.nets.MLP([256, features], name="encoder")
  head = snt.nets.MLP([features, projection], name="head")
  return encoder, head


def probe_accuracies(encoder, train, test, labels: int, draws: int = 3):
  """Logistic regression on `labels` labelled images (the same number per
  class): mean test accuracy over `draws` random labelled sets, on the
  learned features and on raw pixels."""
  from sklearn import linear_model  # pylint: disable=g-import-not-at-top
  (x_train, y_train), (x_test, y_test) = train, test
  encode = lambda x: encoder(tf.reshape(x, [len(x), 64])).numpy()
  pixels = lambda x: np.reshape(x, [len(x), 64])
  scores = {"features": [], "pixels": []}
  for seed in range(draws):
    rng = np.random.default_rng(seed)
    chosen = np.concatenate([
        rng.choice(np.flatnonzero(y_train == c), labels // 10, replace=False)
        for c in range(10)])
    for name, fn in (("features", encode), ("pixels", pixels)):
      probe = linear_model.LogisticRegression(max_iter=5000)
      probe.fit(fn(x_train[chosen]), y_train[chosen])
      scores[name].append(probe.score(fn(x_test), y_test))
  return {name: float(np.mean(values)) for name, values in scores.items()}


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--num_steps", type=int, default=3000)
  parser.add_argument("--labels", type=int, default=50)
  parser.add_argument("--save_dir", default="runs/contrastive")
  parser.add_argument("--dry_run", action="store_true",
                      help="check the whole run first, in seconds: a few "
                      "steps, an evaluation, a save, a resume and an export "
                      "in a temporary folder, then stop")
  args = parser.parse_args(argv)
  (x_train, y_train), test = _digits.load()
  x_train = x_train[..., 0]
  tf.random.set_seed(0)
  encoder, head = make_models()
  train = Contrastive(num_steps=args.num_steps, steps_per_call=50,
                      log_every=500, save_every=1000, save_dir=args.save_dir,
                      dry_run=args.dry_run)
  history = train(encoder, head, keras.optimizers.Adam(1e-3), x_train)
  if args.dry_run:
    return
  print(f"NT-Xent {history.train['loss'][0]:.2f} -> "
        f"{history.train['loss'][-1]:.2f}, positive-pair cosine "
        f"{history.train['positive_similarity'][0]:.2f} -> "
        f"{history.train['positive_similarity'][-1]:.2f}")
  accuracy = probe_accuracies(encoder, (x_train, y_train),
                              (test[0][..., 0], test[1]), args.labels)
  print(f"linear probe on {args.labels} labels (mean of 3 draws): learned features "
        f"{accuracy['features']:.3f}, raw pixels {accuracy['pixels']:.3f}")


if __name__ == "__main__":
  main()
