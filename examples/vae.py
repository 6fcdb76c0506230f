"""A variational autoencoder on scikit-learn's digits: a scenario from scratch.

    python examples/vae.py                 # trains (or resumes) in runs/vae
    python examples/vae.py --num_steps 4000

`VAE` subclasses `snt.scenarios.Scenario` directly: it feeds the images to
the engine, draws the reparameterisation noise from `self.rng` (the engine's
checkpointed generator, so a killed run resumes bit for bit) and minimises
the negative ELBO. Checkpoints, resume, the NaN guard, hooks, TensorBoard
and `tf.distribute` all come from the engine.
"""

import argparse
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [_HERE, os.path.dirname(_HERE)]
import _digits  # pylint: disable=g-import-not-at-top
import sonnet_like as snt  # pylint: disable=g-import-not-at-top


def negative_elbo(encoder, decoder, images, noise):
  """Per-example negative ELBO (nats): Bernoulli reconstruction + KL."""
  mean, log_var = tf.split(encoder(images), 2, axis=-1)
  codes = mean + tf.exp(0.5 * log_var) * noise  # The reparameterisation.
  logits = decoder(codes)
  reconstruction = tf.reduce_sum(
      tf.nn.sigmoid_cross_entropy_with_logits(images, logits), axis=-1)
  kl = 0.5 * tf.reduce_sum(tf.exp(log_var) + mean ** 2 - 1 - log_var, -1)
  return reconstruction + kl


class VAE(snt.scenarios.Scenario):
  """Trains `encoder` (images -> 2 * latent_size) and `decoder` (codes ->
  pixel logits) on `[batch, pixels]` images in [0, 1]; logs "loss" (the
  negative ELBO per image) and evaluates it on `eval_data`."""

  def __init__(self, num_steps: int, *, latent_size: int = 8,
               batch_size: int = 64, **kwargs):
    super().__init__(num_steps, **kwargs)
    self.latent_size, self.batch_size = latent_size, batch_size

  def __call__(self, encoder, decoder, optimizer, train_data, eval_data=None):
    self.encoder, self.decoder, self.optimizer = encoder, decoder, optimizer
    self.eval_data = eval_data
    self.feed(train_data, batch_size=self.batch_size, argument="train_data",
              check=self._check)
    return self.run()

  def _check(self, spec):
    if not isinstance(spec, tf.TensorSpec) or spec.shape.rank != 2:
      raise TypeError(f"VAE: train_data must hold images flattened to "
                      f"[batch, pixels], got elements {spec}.")

  def models(self):
    return {"encoder": self.encoder, "decoder": self.decoder}

  def trackables(self):
    return dict(self.models(), optimizer=self.optimizer)

  def build(self):
    images = self.example_batch()
    noise = tf.zeros([2, self.latent_size])
    negative_elbo(self.encoder, self.decoder, images, noise)
    self.build_optimizer(self.optimizer, self.variables())

  def variables(self):
    return self.encoder.trainable_variables + self.decoder.trainable_variables

  def next_inputs(self):
    # Noise for the whole global batch, then one share per replica: N
    # replicas draw what one device would.
    images = self.next_batch()
    noise = self.rng.normal([tf.shape(images)[0], self.latent_size])
    return self.split_for_replicas((images, noise))

  def train_step(self, images, noise):
    global_size = tf.cast(tf.shape(images)[0], tf.float32) * (
        self.strategy.num_replicas_in_sync)
    with tf.GradientTape() as tape:
      values = negative_elbo(self.encoder, self.decoder, images, noise)
      loss = tf.reduce_sum(values) / global_size
    grads = tape.gradient(loss, self.variables())
    self.apply_update(self.optimizer, grads, self.variables(), loss=loss)
    return {"loss": loss * self.strategy.num_replicas_in_sync}

  def evaluate_now(self):
    if self.eval_data is None:
      return None
    images = tf.constant(self.eval_data)
    # Fixed noise: evaluating neither uses nor moves `self.rng`.
    noise = tf.random.stateless_normal(
        [images.shape[0], self.latent_size], seed=[0, 0])
    values = negative_elbo(self.encoder, self.decoder, images, noise)
    return {"loss": float(tf.reduce_mean(values))}


def make_models(latent_size: int = 8, hidden: int = 128, pixels: int = 64):
  encoder = snt.nets.MLP([hidden, 2 * latent_size], name="encoder")
  decoder = snt.nets.MLP([hidden, pixels], name="decoder")
  return encoder, decoder


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--num_steps", type=int, default=3000)
  parser.add_argument("--save_dir", default="runs/vae")
  parser.add_argument("--dry_run", action="store_true",
                      help="check the whole run first, in seconds: a few "
                      "steps, an evaluation, a save, a resume and an export "
                      "in a temporary folder, then stop")
  args = parser.parse_args(argv)
  (x_train, _), (x_test, _) = _digits.load(flat=True)
  tf.random.set_seed(0)
  encoder, decoder = make_models()
  vae = VAE(num_steps=args.num_steps, steps_per_call=50, log_every=500,
            eval_every=1000, save_every=1000, save_dir=args.save_dir,
            dry_run=args.dry_run)
  history = vae(encoder, decoder, keras.optimizers.Adam(1e-3), x_train,
                eval_data=x_test)
  if args.dry_run:
    return
  if history.eval:
    print(f"test negative ELBO: {history.eval['loss'][0]:.1f} nats at step "
          f"{history.eval['step'][0]} -> {history.eval['loss'][-1]:.1f} at "
          f"step {history.eval['step'][-1]}")


if __name__ == "__main__":
  main()
