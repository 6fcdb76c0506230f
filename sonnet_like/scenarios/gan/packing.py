"""PacGAN packing for the `GAN` scenario: the discriminator judges `pack`
samples at once (Lin et al. 2018, "PacGAN: The power of two samples in
generative adversarial networks").

A batch `[batch, ..., features]` becomes `[batch / pack, ..., pack *
features]`: consecutive examples are concatenated along the last axis, so
every pack is all real or all fake. The discriminator gives one score per
pack; `unpack` repeats it for each member, so per-example losses summed and
divided by the global batch size are the mean loss per pack.

    >>> import numpy as np
    >>> from sonnet_like.scenarios.gan import packing
    >>> packing.pack(np.arange(8.0).reshape(4, 2), 2).numpy().tolist()
    [[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0]]

Penalties are taken on the packed input, as the packed discriminator sees
it: R1 on packs of real examples, WGAN-GP on interpolates between a real and
a fake pack with one weight per pack (the weight of its first member).
"""

from typing import Any, Callable

import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import autograph
from sonnet_like.scenarios.gan import losses

Scores = Callable[[tf.Tensor], tf.Tensor]


def check(pack: Any, batch_size: int, replicas: int) -> None:
  """Raises a `GAN: ...` ValueError unless `pack` is a positive int that
  divides each replica's share of `batch_size`."""
  arguments.check_positive_int("GAN", "pack", pack)
  if batch_size % (pack * replicas):
    raise ValueError(
        f"GAN: batch_size must be a multiple of pack * replicas = {pack} * "
        f"{replicas} = {pack * replicas} (each replica cuts its batch into "
        f"packs of {pack}), got {batch_size}.")


@autograph.as_written
def pack(inputs: Any, pack_size: int) -> tf.Tensor:
  """`[batch, ..., features]` -> `[batch / pack_size, ..., pack_size *
  features]` (rank-1 inputs `[batch]` -> `[batch / pack_size, pack_size]`)."""
  inputs = tf.convert_to_tensor(inputs)
  if pack_size == 1:
    return inputs
  batch = inputs.shape[0]
  advice = "; make the batch size a multiple of pack."
  if batch is not None and batch % pack_size:
    raise ValueError(f"GAN: a batch of {batch} examples cannot be cut into "
                     f"packs of {pack_size}{advice}")
  if batch is None:  # Checked when the graph runs (XLA drops the check).
    check = tf.debugging.assert_equal(
        tf.shape(inputs)[0] % pack_size, 0,
        message=f"GAN: a batch (of a size unknown when traced) cannot be cut "
        f"into packs of {pack_size}{advice}")
    with tf.control_dependencies([check]):
      inputs = tf.identity(inputs)
  rank = inputs.shape.rank
  if rank == 1:
    return tf.reshape(inputs, [-1, pack_size])
  shape = tf.shape(inputs)
  grouped = tf.reshape(inputs, tf.concat([[-1, pack_size], shape[1:]], 0))
  # Move the member axis next to the feature axis: [packs, ..., pack, feat].
  perm = [0] + list(range(2, rank)) + [1, rank]
  grouped = tf.transpose(grouped, perm)
  static = inputs.shape[1:-1].as_list() + [
      None if inputs.shape[-1] is None else pack_size * inputs.shape[-1]]
  packed = tf.reshape(grouped, tf.concat(
      [[-1], shape[1:-1], [pack_size * shape[-1]]], 0))
  packed.set_shape([None if batch is None else batch // pack_size] + static)
  return packed


@autograph.as_written
def unpack(per_pack: tf.Tensor, pack_size: int) -> tf.Tensor:
  """One value per pack `[packs]` -> the same value for each member
  `[packs * pack_size]`."""
  if pack_size == 1:
    return per_pack
  return tf.repeat(per_pack, pack_size, axis=0)


@autograph.as_written
def penalty(name: str, packed_scores: Scores, real: tf.Tensor,
            fake: tf.Tensor, weight: tf.Tensor | None,
            pack_size: int) -> tf.Tensor:
  """The per-example penalty `name` ("wgan_gp" or "r1") of a discriminator
  that judges packs.

  Args:
    name: A name in `losses.PENALTIES`.
    packed_scores: Maps packed inputs `[packs, ...]` to scores `[packs]`.
    real: Real examples, `[batch, ...]` (unpacked).
    fake: Generated examples, same shape.
    weight: Interpolation weights `[batch]` for "wgan_gp"; one per pack is
      used, so an interpolate lies on the segment between two packs.
    pack_size: Examples per pack.

  Returns:
    The penalty of each pack repeated for its members, `[batch]`.
  """
  real_packs = pack(real, pack_size)
  if name == "wgan_gp":
    per_pack = losses.wgan_gp_penalty(
        packed_scores, real_packs, pack(fake, pack_size),
        weight[::pack_size])
  else:
    per_pack = losses.r1_penalty(packed_scores, real_packs)
  return unpack(per_pack, pack_size)
