"""`GAN`: adversarial training of a generator against a discriminator.

    gan = snt.scenarios.GAN(num_steps=20_000, n_critic=5, loss="wasserstein",
                            gradient_penalty=10.0, generator_ema=0.999)
    gan(generator, discriminator, g_optimizer, d_optimizer, data)

Design (the choices, and why):

- One engine step is one full cycle: `n_critic` discriminator updates, then
  one generator update, all inside the compiled step (the critic loop is
  unrolled in Python while tracing, so each update is a plain graph node: no
  `tf.cond`/`tf.while_loop` around an optimizer, which a multi-replica
  strategy cannot synchronise, and no loop overhead). `num_steps` therefore
  counts generator updates, as in the WGAN-GP paper. Steps per call, hooks,
  logging, evaluation and checkpoints fall between cycles, so the phase
  inside the `n_critic` cycle is always 0 at a checkpoint: resume is exact
  without a separate phase counter.
- All randomness of a step (latent codes for every update, WGAN-GP
  interpolation weights) is drawn from `self.rng`, the engine's checkpointed
  generator, in `next_inputs` for the whole global batch, then cut per
  replica like the real data. So a resumed run draws the same numbers, and a
  `MirroredStrategy` run sees exactly what one device sees.
- The latent sampler is `latent_size=` (standard normal `[batch,
  latent_size]`) or a callable `sampler(rng, batch_size)` returning a
  `[batch_size, ...]` tensor drawn from the `tf.random.Generator` it gets.
- Data is an array of real examples `[N, ...]` (shuffled every epoch from
  `seed`, cut into `batch_size` batches) or a `tf.data.Dataset` of real
  batches (used as batched, repeated). Each critic update takes the next
  batch; the iterator is checkpointed. Scale the data to about unit
  variance: on the 25-Gaussian grid (range +-4) small MLPs captured ~20
  modes with ~2% high-quality samples unscaled and 25 with 70% scaled.
- The generator's EMA (`generator_ema=decay`) is the engine's weight EMA
  for the generator (`ema={"generator": decay}`, `scenarios/updates/ema.py`):
  variables that mirror the generator's trainable variables, start equal to
  them and are updated after every step (one generator update), `ema =
  decay * ema + (1 - decay) * w`. They are checkpointed as "generator_ema"
  and swapped into the generator by `sample`, `export` and `ema_weights()`
  (so evaluators use them).
- Losses are per example and divided by the global batch size, so N
  replicas add up to one device.
- `pack=m` is PacGAN (`gan/packing.py`): the discriminator judges packs of m
  real or m generated examples concatenated along the last axis, and each
  pack's score (and penalty) counts for each of its members, so losses
  stay per example and divided by the global batch size.
"""

from typing import Any, Callable, Iterable

import numpy as np
import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import autograph
from sonnet_like.core import generator as generator_lib
from sonnet_like.scenarios.compiled import calling
from sonnet_like import export as export_lib
from sonnet_like.scenarios import engine
from sonnet_like.scenarios.gan import data as gan_data
from sonnet_like.scenarios.gan import ema as gan_ema
from sonnet_like.scenarios.gan import losses as gan_losses
from sonnet_like.scenarios.gan import packing as gan_pack
from sonnet_like.scenarios.run_folder import history as history_lib

Sampler = Callable[[tf.random.Generator, Any], tf.Tensor]
Evaluator = Callable[[Any], dict[str, float]]

DISCRIMINATOR_OUTPUT_ERROR = (
    "GAN: the discriminator must return one score per example, shaped "
    "[batch] or [batch, 1], got shape {shape} for {inputs}. End it with a "
    "Linear(1) (and no softmax).")

GENERATOR_OUTPUT_ERROR = (
    "GAN: the generator's samples have shape {fake} per example but the real "
    "data has {real}; make the generator's last layer produce the data's "
    "shape.")


def _check_fraction(name: str, value: Any) -> None:
  if value is None:
    return
  if (isinstance(value, bool) or not isinstance(value, (int, float)) or
      not 0.0 <= value < 1.0):
    raise ValueError(f"GAN: {name} must be a float in [0, 1) or None, got "
                     f"{value!r}.")


class GAN(engine.Scenario):
  """Trains a generator and a discriminator in alternation.

      >>> import numpy as np, sonnet_like as snt, keras, tensorflow as tf
      >>> tf.random.set_seed(0)  # The initial weights.
      >>> real = np.random.default_rng(0).normal(3.0, 0.5, size=(256, 1))
      >>> generator = snt.nets.MLP([16, 1], name="generator")
      >>> discriminator = snt.nets.MLP([16, 1], name="discriminator")
      >>> gan = snt.scenarios.GAN(num_steps=600, batch_size=64, latent_size=4,
      ...                         steps_per_call=50, progress=False)
      >>> history = gan(generator, discriminator, keras.optimizers.Adam(0.01),
      ...               keras.optimizers.Adam(0.01), real)
      >>> bool(abs(gan.sample(500).mean() - 3.0) < 0.5)
      True

  Args:
    num_steps: Generator updates (each preceded by `n_critic` discriminator
      updates).
    n_critic: Discriminator updates per generator update.
    loss: A name in `snt.scenarios.gan_losses.LOSSES` ("minimax",
      "non_saturating", "wasserstein", "hinge", "least_squares") or a pair
      of per-example callables `(d_loss(real_logits, fake_logits),
      g_loss(fake_logits))`.
    gradient_penalty: Weight of the gradient penalty on the discriminator (0
      for none): lambda of WGAN-GP or gamma of R1.
    penalty: "wgan_gp" (on interpolates) or "r1" (on real examples).
    generator_ema: Decay of the generator's weight average, in [0, 1), or
      None for no average. When set, `sample` and evaluators use it.
    latent_size: Size of the standard normal latent code.
    sampler: Instead of `latent_size`, `sampler(rng, batch_size)` returning a
      latent batch drawn from the `tf.random.Generator` `rng`.
    batch_size: Global batch size for array data; a multiple of `pack`
      times the number of replicas.
    shuffle: Shuffle array data every epoch (from `seed`).
    pack: PacGAN packing: the discriminator judges `pack` examples at once,
      seeing `[batch / pack, ..., pack * features]` (all real or all fake
      packs); 1 for none.
    **kwargs: Loop settings of `Scenario` (steps_per_call, eval_every,
      save_every, save_dir, strategy, jit_compile, on_nonfinite, clip_norm,
      seed, hooks, progress, ...).
  """

  def __init__(self, num_steps: int, *, n_critic: int = 1,
               loss: Any = "non_saturating", gradient_penalty: float = 0.0,
               penalty: str = "wgan_gp", generator_ema: float | None = None,
               latent_size: int | None = 64, sampler: Sampler | None = None,
               batch_size: int = 64, shuffle: bool = True, pack: int = 1,
               **kwargs):
    super().__init__(num_steps, **kwargs)
    arguments.check_positive_int("GAN", "n_critic", n_critic)
    arguments.check_positive_int("GAN", "batch_size", batch_size)
    self.d_loss_fn, self.g_loss_fn = gan_losses.get(loss)
    if (isinstance(gradient_penalty, bool) or
        not isinstance(gradient_penalty, (int, float)) or
        not gradient_penalty >= 0):
      raise ValueError(f"GAN: gradient_penalty must be a non-negative float, "
                       f"got {gradient_penalty!r}.")
    if penalty not in gan_losses.PENALTIES:
      raise ValueError(f"GAN: penalty must be one of "
                       f"{list(gan_losses.PENALTIES)}, got {penalty!r}.")
    _check_fraction("generator_ema", generator_ema)
    if generator_ema is not None:
      if self.updates.ema is not None:
        raise ValueError(f"GAN: pass generator_ema or ema, not both; got "
                         f"generator_ema={generator_ema!r} and "
                         f"ema={self.updates.ema!r}.")
      self.updates.ema = {"generator": float(generator_ema)}
    if sampler is not None:
      if not callable(sampler):
        raise TypeError(f"GAN: sampler must be callable as sampler(rng, "
                        f"batch_size), got {sampler!r}.")
    else:
      arguments.check_positive_int("GAN", "latent_size", latent_size)
    replicas = self.strategy.num_replicas_in_sync
    if batch_size % replicas:
      raise ValueError(f"GAN: batch_size must be a multiple of the "
                       f"{replicas} replicas, got {batch_size}.")
    gan_pack.check(pack, batch_size, replicas)
    self.n_critic, self.loss = n_critic, loss
    self.gradient_penalty, self.penalty = float(gradient_penalty), penalty
    self.generator_ema, self.latent_size = generator_ema, latent_size
    self.batch_size, self.shuffle, self.pack = batch_size, shuffle, pack
    self._sampler = sampler or self._normal

  @property
  def _ema(self) -> gan_ema.GeneratorEMA | None:
    """The generator's average (the engine's), if any."""
    return self.ema_of("generator")

  @autograph.as_written
  def _normal(self, rng: tf.random.Generator, batch_size: Any) -> tf.Tensor:
    return rng.normal([batch_size, self.latent_size])

  def __call__(self, generator: Any, discriminator: Any, g_optimizer: Any,
               d_optimizer: Any, data: Any,
               evaluators: Iterable[Evaluator] = ()) -> history_lib.History:
    """Trains (or resumes training) and returns the `History`.

    Args:
      generator: A callable module mapping latent codes to examples.
      discriminator: A callable module mapping examples (packs, with
        `pack`) to one score (logit) each, shaped `[batch]` or `[batch, 1]`;
        no batch statistics if a gradient penalty is used.
      g_optimizer: Optimizer of the generator (Keras or sonnet_like).
      d_optimizer: Optimizer of the discriminator; a different object.
      data: Real examples: an array `[N, ...]` or a `tf.data.Dataset` of
        batches.
      evaluators: Callables `evaluator(gan) -> {name: value}` run at eval
        boundaries (every `eval_every` steps and at the end); see
        `snt.scenarios.gan_eval`: `ModeCoverage`, `SampleGrid`,
        `ClassifierScore`.
    """
    for name, model in (("generator", generator),
                        ("discriminator", discriminator)):
      if not callable(model):
        raise TypeError(f"GAN: {name} must be callable, got {model!r}.")
    for name, optimizer in (("g_optimizer", g_optimizer),
                            ("d_optimizer", d_optimizer)):
      self.check_optimizer(optimizer, name)
    if g_optimizer is d_optimizer:
      raise ValueError("GAN: g_optimizer and d_optimizer must be two "
                       "optimizer objects (each keeps its own slots), got the "
                       "same object twice.")
    evaluators = tuple(evaluators)
    for evaluator in evaluators:
      if not callable(evaluator):
        raise TypeError(f"GAN: evaluators must be callables evaluator(gan) "
                        f"-> dict, got {evaluator!r}.")
    self.generator, self.discriminator = generator, discriminator
    self.g_optimizer, self.d_optimizer = g_optimizer, d_optimizer
    self.feed(data, batch_size=self.batch_size, shuffle=self.shuffle,
              argument="data", check=gan_data.check_element)
    self.evaluators = evaluators
    return self.run()

  # ---- Engine interface. ----

  @property
  def updates_per_step(self) -> int:
    """Each step makes `n_critic` discriminator updates and one generator
    update."""
    return self.n_critic + 1

  def models(self):
    return {"generator": self.generator, "discriminator": self.discriminator}

  def trackables(self):
    return dict(self.models(), g_optimizer=self.g_optimizer,
                d_optimizer=self.d_optimizer)

  def build(self):
    real_shape = self.element_spec.shape[1:]
    # Made in build: in a population its state is per member, which
    # core.generator's Generator can draw from.
    z = self._sampler(generator_lib.Generator.from_seed(0), 2 * self.pack)
    fake = calling.call_model(self.generator, z, False)
    if not real_shape.is_compatible_with(fake.shape[1:]):
      raise ValueError(GENERATOR_OUTPUT_ERROR.format(
          fake=fake.shape[1:].as_list(), real=real_shape.as_list()))
    self._scores(fake, training=False)
    self.build_optimizer(self.g_optimizer, self.generator.trainable_variables)
    self.build_optimizer(self.d_optimizer,
                         self.discriminator.trainable_variables)

  @autograph.as_written
  def _uses_interpolates(self) -> bool:
    return self.gradient_penalty > 0 and self.penalty == "wgan_gp"

  @autograph.as_written
  def next_inputs(self):
    """`n_critic` real batches, their latent codes and interpolation weights
    and the generator's latent codes, drawn for the global batch."""
    reals, codes, weights = [], [], []
    for _ in range(self.n_critic):
      real = self.next_batch()
      size = real.shape[0] or tf.shape(real)[0]
      reals.append(real)
      codes.append(autograph.as_user_code(self._sampler)(self.rng, size))
      if self._uses_interpolates():
        weights.append(self.rng.uniform([size]))
    generator_codes = autograph.as_user_code(self._sampler)(self.rng, size)
    return self.split_for_replicas(
        (tuple(reals), tuple(codes), tuple(weights), generator_codes))

  @autograph.as_written
  def _scores(self, inputs: tf.Tensor, training: bool = True) -> tf.Tensor:
    """One score per example: its pack's score (with `pack`)."""
    packed = gan_pack.pack(inputs, self.pack)
    return gan_pack.unpack(self._pack_scores(packed, training), self.pack)

  @autograph.as_written
  def _pack_scores(self, inputs: tf.Tensor,
                   training: bool = True) -> tf.Tensor:
    scores = self.forward(self.discriminator, inputs,
                          is_training=training)
    batch = inputs.shape[0]
    shape = scores.shape
    if shape.rank == 2 and shape[1] == 1:
      scores = scores[:, 0]
    elif shape.rank != 1 or (batch is not None and shape[0] is not None and
                             shape[0] != batch):
      raise ValueError(DISCRIMINATOR_OUTPUT_ERROR.format(
          shape=shape.as_list() if shape.rank is not None else shape,
          inputs=f"a batch of {batch}" if self.pack == 1 else
          f"{batch} packs of {self.pack} examples (pack={self.pack})"))
    return scores

  @autograph.as_written
  def _critic_update(self, real, code, weight, global_size):
    fake = tf.stop_gradient(self.forward(self.generator, code,
                                         is_training=True))
    variables = self.discriminator.trainable_variables
    with tf.GradientTape() as tape:
      losses = autograph.as_user_code(self.d_loss_fn)(self._scores(real),
                                                      self._scores(fake))
      penalty = None
      if self.gradient_penalty > 0:
        penalty = gan_pack.penalty(self.penalty, self._pack_scores, real,
                                   fake, weight, self.pack)
        losses = losses + self.gradient_penalty * penalty
      loss = tf.reduce_sum(losses) / tf.cast(global_size, losses.dtype)
    self.minimize(tape, loss, variables, self.d_optimizer)
    mean_penalty = None if penalty is None else tf.reduce_mean(penalty)
    return tf.reduce_mean(losses), mean_penalty

  @autograph.as_written
  def _generator_update(self, code, global_size):
    variables = self.generator.trainable_variables
    with tf.GradientTape() as tape:
      fake = self.forward(self.generator, code, is_training=True)
      losses = autograph.as_user_code(self.g_loss_fn)(self._scores(fake))
      loss = tf.reduce_sum(losses) / tf.cast(global_size, losses.dtype)
    self.minimize(tape, loss, variables, self.g_optimizer)
    return tf.reduce_mean(losses)

  @autograph.as_written
  def train_step(self, reals, codes, weights, generator_codes):
    """One cycle on this replica: `n_critic` D updates, then one G update.

    Returns the mean discriminator loss over the cycle ("d_loss", including
    the weighted penalty), the generator loss ("g_loss") and, with a penalty,
    its mean value ("penalty"), averaged over the global batch.
    """
    replicas = self.strategy.num_replicas_in_sync
    d_losses, penalties = [], []
    for i in range(self.n_critic):
      local = reals[i].shape[0] or tf.shape(reals[i])[0]
      d_loss, penalty = self._critic_update(
          reals[i], codes[i], weights[i] if weights else None,
          local * replicas)
      d_losses.append(d_loss)
      if penalty is not None:
        penalties.append(penalty)
    local = generator_codes.shape[0] or tf.shape(generator_codes)[0]
    g_loss = self._generator_update(generator_codes, local * replicas)
    logs = {"d_loss": tf.add_n(d_losses) / len(d_losses), "g_loss": g_loss}
    if penalties:
      logs["penalty"] = tf.add_n(penalties) / len(penalties)
    return logs

  def evaluate_now(self):
    if not self.evaluators:
      return None
    metrics: dict[str, float] = {}
    for evaluator in self.evaluators:
      metrics.update(evaluator(self) or {})
    return metrics

  # ---- Sampling. ----

  def sample(self, num_samples: int, seed: int = 0) -> np.ndarray:
    """`num_samples` generated examples (EMA weights if enabled), as NumPy.

    The latent codes come from a fresh generator seeded with `seed`, never
    from `self.rng`, so evaluating does not change the training run.
    """
    arguments.check_positive_int("GAN", "num_samples", num_samples)
    codes = self._sampler(tf.random.Generator.from_seed(seed), num_samples)
    with self.ema_weights():
      return np.asarray(calling.call_model(self.generator, codes, False))

  # ---- Export (end of run with export_dir=...). ----

  def export(self, directory: str) -> str:
    """Writes the generator as a sampler (`snt.export.save_sampler`).

    With the EMA weights when `generator_ema` is set. Signatures:
    "serving_default" (`latents` -> `samples`) and "sample"
    (`num_samples`, `seed` -> `samples`, the same as `sample(num_samples,
    seed)`). Returns the path.
    """
    custom = self._sampler != self._normal  # Bound methods: equal if same.
    latents = self._sampler(tf.random.Generator.from_seed(0), 1)
    with self.ema_weights():
      return export_lib.save_sampler(
          self.generator, directory, latents,
          latent_sampler=self._sampler if custom else None)
