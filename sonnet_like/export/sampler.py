"""`save_sampler`: a GAN generator as a SavedModel that draws samples.

Two signatures: "serving_default" maps a batch of latent codes to samples,
"sample" draws `num_samples` samples from a `seed`. With the default
standard normal latents, "sample" draws the codes that
`tf.random.Generator.from_seed(seed).normal([num_samples, *latent_shape])`
draws (with stateless ops: no state changes between calls), so it returns
what `snt.scenarios.GAN.sample(num_samples, seed)` returns.

    >>> import tempfile, sonnet_like as snt, tensorflow as tf
    >>> generator = snt.nets.MLP([8, 2], name="generator")
    >>> path = snt.export.save_sampler(generator,
    ...                                tempfile.mkdtemp() + "/generator",
    ...                                tf.TensorSpec([None, 4]))
    >>> loaded = tf.saved_model.load(path)
    >>> samples = loaded.signatures["sample"](
    ...     num_samples=tf.constant(5), seed=tf.constant(7, tf.int64))
    >>> samples["samples"].shape
    TensorShape([5, 2])
"""

import os
from typing import Any, Callable

import tensorflow as tf

from sonnet_like.export import module as module_lib
from sonnet_like.export import signatures as signatures_lib

LatentSampler = Callable[[tf.random.Generator, Any], tf.Tensor]

_PHILOX = 1  # tf.random.Algorithm.PHILOX


def seeded_normal(seed: tf.Tensor, shape: Any,
                  dtype: tf.DType = tf.float32) -> tf.Tensor:
  """`tf.random.Generator.from_seed(seed).normal(shape)`, bit for bit.

  `from_seed(seed)` starts Philox at counter `(seed, 0)` with key 0 (for
  `seed >= 0`); the stateless op with that key and counter draws the same
  numbers without a generator variable.
  """
  counter = tf.stack([tf.bitcast(tf.cast(seed, tf.int64), tf.uint64),
                      tf.constant(0, tf.uint64)])
  return tf.raw_ops.StatelessRandomNormalV2(
      shape=shape, key=tf.constant([0], tf.uint64), counter=counter,
      alg=_PHILOX, dtype=dtype)


def save_sampler(generator: Callable[..., Any], directory: str | os.PathLike,
                 latents: Any, *, latent_sampler: LatentSampler | None = None,
                 output_name: str = "samples") -> str:
  """Writes `generator` as a sampler SavedModel; returns the path.

  Signatures:
    - "serving_default": `latents` (a batch of codes, any batch size) ->
      `samples`.
    - "sample": `num_samples` (int32 scalar), `seed` (int64 scalar, >= 0)
      -> `samples`. The same seed gives the same samples.

  The generator runs with `is_training=False` where it takes it, with the
  weights it holds when this is called (for a GAN trained with
  `generator_ema`, call it inside `gan.ema_weights()`).

  Args:
    generator: A module (or callable of modules) mapping latent codes
      `[batch, ...]` to samples.
    directory: Folder to write; an earlier export there is replaced.
    latents: A `tf.TensorSpec` or an example batch of latent codes (batch
      size exported as unknown).
    latent_sampler: Instead of standard normal codes shaped like `latents`,
      `latent_sampler(rng, num_samples)` drawing from the
      `tf.random.Generator` `rng` (the GAN scenario's `sampler=`). "sample"
      then resets a generator variable held by the export to
      `from_seed(seed)` on each call: the same numbers, but calls must not
      run concurrently.
    output_name: Name of the samples output.

  Returns:
    `directory` as a string.
  """
  if not callable(generator):
    raise TypeError(f"save_sampler: generator must be callable, got "
                    f"{generator!r}.")
  if latent_sampler is not None and not callable(latent_sampler):
    raise TypeError(f"save_sampler: latent_sampler must be callable as "
                    f"latent_sampler(rng, num_samples), got "
                    f"{latent_sampler!r}.")
  spec, _ = signatures_lib.input_specs("save_sampler", "serving_default",
                                       latents, base="latents")
  if not isinstance(spec, tf.TensorSpec):
    raise TypeError(f"save_sampler: latents must be one tf.TensorSpec or "
                    f"array, got {latents!r}.")
  trackables = [generator] if isinstance(generator, tf.Module) else []

  if latent_sampler is None:
    def draw(num_samples, seed):
      shape = tf.concat([[num_samples], spec.shape[1:].as_list()], axis=0)
      return seeded_normal(seed, shape, spec.dtype)
  else:
    rng = tf.random.Generator.from_seed(0)
    trackables.append(rng)

    def draw(num_samples, seed):
      zero = tf.constant(0, tf.int64)
      rng.reset(tf.stack([tf.cast(seed, tf.int64), zero, zero]))
      return latent_sampler(rng, num_samples)

  def from_latents(codes):
    return module_lib.call_for_inference(generator, codes)

  def sample(inputs):
    return from_latents(draw(inputs["num_samples"], inputs["seed"]))

  count_and_seed = {"num_samples": tf.TensorSpec([], tf.int32),
                    "seed": tf.TensorSpec([], tf.int64)}
  return signatures_lib.save(directory, {
      "serving_default": signatures_lib.Signature(
          from_latents, spec, input_name="latents", output_name=output_name),
      "sample": signatures_lib.Signature(
          sample, count_and_seed, batched=False, output_name=output_name),
  }, trackables=trackables, owner="save_sampler")
