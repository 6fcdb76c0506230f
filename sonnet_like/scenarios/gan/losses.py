"""GAN losses and gradient penalties as small per-example functions.

Every function takes the discriminator's logits (shape `[batch]`) and returns
one loss per example (shape `[batch]`); the `GAN` scenario sums them and
divides by the global batch size, so several replicas add up to one device.
The generator minimises its loss, the discriminator (critic) minimises its
own. `softplus(x) = log(1 + e^x)`, so `-log(sigmoid(x)) = softplus(-x)` and
`-log(1 - sigmoid(x)) = softplus(x)`, which stays finite for any logit.

| name | discriminator | generator |
|---|---|---|
| "minimax" (Goodfellow et al. 2014) | `-log D(x) - log(1 - D(G(z)))` | `log(1 - D(G(z)))` |
| "non_saturating" (same paper) | as minimax | `-log D(G(z))` |
| "wasserstein" (Arjovsky et al. 2017) | `C(G(z)) - C(x)` | `-C(G(z))` |
| "hinge" (Lim & Ye 2017; Miyato et al. 2018) | `relu(1 - C(x)) + relu(1 + C(G(z)))` | `-C(G(z))` |
| "least_squares" (Mao et al. 2017, a=0, b=c=1) | `((C(x) - 1)^2 + C(G(z))^2) / 2` | `(C(G(z)) - 1)^2 / 2` |

Penalties: `wgan_gp_penalty` (Gulrajani et al. 2017) on random interpolates of
real and fake examples, `(|grad C(x_hat)| - 1)^2`; `r1_penalty` (Mescheder et
al. 2018) on real examples, `|grad C(x)|^2 / 2`.
"""

from typing import Any, Callable

import tensorflow as tf

from sonnet_like.core import autograph
DiscriminatorLoss = Callable[[tf.Tensor, tf.Tensor], tf.Tensor]
GeneratorLoss = Callable[[tf.Tensor], tf.Tensor]


@autograph.as_written
def minimax_discriminator_loss(real: tf.Tensor, fake: tf.Tensor) -> tf.Tensor:
  """`-log sigmoid(real) - log(1 - sigmoid(fake))`, per example."""
  return tf.nn.softplus(-real) + tf.nn.softplus(fake)


@autograph.as_written
def minimax_generator_loss(fake: tf.Tensor) -> tf.Tensor:
  """`log(1 - sigmoid(fake))`, per example (saturates when D wins)."""
  return -tf.nn.softplus(fake)


@autograph.as_written
def non_saturating_generator_loss(fake: tf.Tensor) -> tf.Tensor:
  """`-log sigmoid(fake)`, per example.

      >>> import tensorflow as tf
      >>> from sonnet_like.scenarios.gan import losses
      >>> loss = losses.non_saturating_generator_loss(tf.constant([0.0]))
      >>> round(float(loss[0]), 4)  # log 2
      0.6931
  """
  return tf.nn.softplus(-fake)


@autograph.as_written
def wasserstein_discriminator_loss(real: tf.Tensor,
                                   fake: tf.Tensor) -> tf.Tensor:
  """`fake - real`: the critic raises real scores and lowers fake ones."""
  return fake - real


@autograph.as_written
def wasserstein_generator_loss(fake: tf.Tensor) -> tf.Tensor:
  """`-fake`, per example."""
  return -fake


@autograph.as_written
def hinge_discriminator_loss(real: tf.Tensor, fake: tf.Tensor) -> tf.Tensor:
  """`relu(1 - real) + relu(1 + fake)`, per example."""
  return tf.nn.relu(1.0 - real) + tf.nn.relu(1.0 + fake)


@autograph.as_written
def hinge_generator_loss(fake: tf.Tensor) -> tf.Tensor:
  """`-fake`, per example (as for Wasserstein)."""
  return -fake


@autograph.as_written
def least_squares_discriminator_loss(real: tf.Tensor,
                                     fake: tf.Tensor) -> tf.Tensor:
  """`((real - 1)^2 + fake^2) / 2`, per example."""
  return 0.5 * (tf.square(real - 1.0) + tf.square(fake))


@autograph.as_written
def least_squares_generator_loss(fake: tf.Tensor) -> tf.Tensor:
  """`(fake - 1)^2 / 2`, per example."""
  return 0.5 * tf.square(fake - 1.0)


LOSSES: dict[str, tuple[DiscriminatorLoss, GeneratorLoss]] = {
    "minimax": (minimax_discriminator_loss, minimax_generator_loss),
    "non_saturating": (minimax_discriminator_loss,
                       non_saturating_generator_loss),
    "wasserstein": (wasserstein_discriminator_loss,
                    wasserstein_generator_loss),
    "hinge": (hinge_discriminator_loss, hinge_generator_loss),
    "least_squares": (least_squares_discriminator_loss,
                      least_squares_generator_loss),
}


def get(loss: Any, owner: str = "GAN"
        ) -> tuple[DiscriminatorLoss, GeneratorLoss]:
  """`(discriminator_loss, generator_loss)` for a name in `LOSSES` or a pair."""
  if isinstance(loss, str):
    if loss not in LOSSES:
      raise ValueError(f"{owner}: loss must be one of {sorted(LOSSES)} or a "
                       f"(discriminator_loss, generator_loss) pair of "
                       f"callables, got {loss!r}.")
    return LOSSES[loss]
  if (isinstance(loss, (tuple, list)) and len(loss) == 2 and
      all(callable(f) for f in loss)):
    return tuple(loss)
  raise ValueError(f"{owner}: loss must be one of {sorted(LOSSES)} or a "
                   f"(discriminator_loss, generator_loss) pair of callables, "
                   f"got {loss!r}.")


@autograph.as_written
def _per_example_gradient_norm_squared(discriminator: Callable[[Any], Any],
                                       inputs: tf.Tensor) -> tf.Tensor:
  """`|d C(x_i) / d x_i|^2` for every example `i` of `inputs`."""
  with tf.GradientTape() as tape:
    tape.watch(inputs)
    scores = tf.reduce_sum(autograph.as_user_code(discriminator)(inputs))
  grads = tape.gradient(scores, inputs)
  axes = list(range(1, grads.shape.rank))
  return tf.reduce_sum(tf.square(grads), axis=axes) if axes else tf.square(
      grads)


@autograph.as_written
def wgan_gp_penalty(discriminator: Callable[[Any], Any], real: tf.Tensor,
                    fake: tf.Tensor, epsilon: tf.Tensor) -> tf.Tensor:
  """`(|grad C(x_hat)| - 1)^2` at `x_hat = eps * real + (1 - eps) * fake`.

  Args:
    discriminator: Maps a batch to one score per example; the gradient of
      the sum of scores gives per-example gradients (no batch statistics).
    real: Real examples, `[batch, ...]`.
    fake: Generated examples, same shape.
    epsilon: Interpolation weights in [0, 1], shape `[batch]`.

  Returns:
    The penalty per example, `[batch]`.
  """
  shape = [-1] + [1] * (real.shape.rank - 1)
  eps = tf.reshape(tf.cast(epsilon, real.dtype), shape)
  interpolates = eps * real + (1.0 - eps) * fake
  norm_squared = _per_example_gradient_norm_squared(discriminator,
                                                    interpolates)
  # sqrt has an infinite gradient at 0: keep it away from exactly zero.
  return tf.square(tf.sqrt(norm_squared + 1e-12) - 1.0)


@autograph.as_written
def r1_penalty(discriminator: Callable[[Any], Any],
               real: tf.Tensor) -> tf.Tensor:
  """`|grad C(x)|^2 / 2` on real examples, per example (R1 with gamma=1)."""
  return 0.5 * _per_example_gradient_norm_squared(discriminator, real)


PENALTIES = ("wgan_gp", "r1")
