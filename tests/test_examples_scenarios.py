"""The example scenarios written from scratch on `snt.scenarios.Scenario`
(examples/vae.py, examples/contrastive.py) learn."""

import importlib
import os
import sys

import keras
import numpy as np
import tensorflow as tf

_EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "examples")


def example(name: str):
  """Imports examples/<name>.py (and its `_digits` helper)."""
  if _EXAMPLES not in sys.path:
    sys.path.insert(0, _EXAMPLES)
  return importlib.import_module(name)


def test_vae_negative_elbo_falls():
  vae_lib, digits = example("vae"), example("_digits")
  (x_train, _), (x_test, _) = digits.load(flat=True)
  tf.random.set_seed(0)
  encoder, decoder = vae_lib.make_models(hidden=64)
  untrained = float(tf.reduce_mean(vae_lib.negative_elbo(
      encoder, decoder, x_test, tf.zeros([len(x_test), 8]))))
  vae = vae_lib.VAE(num_steps=400, steps_per_call=50, eval_every=200,
                    log_every=50, progress=False)
  history = vae(encoder, decoder, keras.optimizers.Adam(3e-3), x_train,
                eval_data=x_test)
  # Untrained: ~64 ln 2 = 44 nats per image; it falls well below that.
  assert untrained > 40
  assert history.eval["loss"][-1] < 0.75 * untrained
  assert history.eval["loss"][-1] < history.eval["loss"][0]
  assert vae.step == 400


def test_contrastive_loss_falls_and_the_two_views_draw_together():
  # The probe's win over raw pixels needs the example's full run (~1 min;
  # measured: 0.913 against 0.871 on 50 labels), too long for a test.
  contrastive, digits = example("contrastive"), example("_digits")
  (x_train, _), _ = digits.load()
  x_train = x_train[..., 0]
  tf.random.set_seed(0)
  encoder, head = contrastive.make_models()
  train = contrastive.Contrastive(num_steps=300, batch_size=128,
                                  steps_per_call=50, log_every=50,
                                  progress=False)
  history = train(encoder, head, keras.optimizers.Adam(1e-3), x_train)
  loss, similarity = history.train["loss"], history.train["positive_similarity"]
  assert loss[-1] < loss[0] - 0.2
  assert similarity[-1] > similarity[0] + 0.05


def test_contrastive_views_differ_and_come_from_the_scenario_generator():
  contrastive = example("contrastive")
  images = tf.constant(np.random.default_rng(0).uniform(
      size=(4, 8, 8)).astype(np.float32))
  first = contrastive.augment(tf.random.Generator.from_seed(1), images)
  again = contrastive.augment(tf.random.Generator.from_seed(1), images)
  other = contrastive.augment(tf.random.Generator.from_seed(2), images)
  assert first.shape == (4, 64)
  np.testing.assert_array_equal(first, again)
  assert np.abs(first - other).max() > 0.1
