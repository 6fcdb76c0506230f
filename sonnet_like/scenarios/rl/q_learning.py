"""Q-learning maths shared by value-based scenarios: targets and losses."""

import tensorflow as tf

from sonnet_like.core import autograph

LOSSES = ("huber", "mse")


@autograph.as_written
def td_targets(reward: tf.Tensor, terminated: tf.Tensor,
               next_q_target: tf.Tensor, gamma: float,
               next_q_online: tf.Tensor | None = None) -> tf.Tensor:
  """One-step Q-learning targets.

  `reward + gamma * (1 - terminated) * next_q_target[a*]`, where `a*` is the
  greedy action of `next_q_online` (double DQN, van Hasselt et al. 2016) or,
  when it is None, of `next_q_target` (the max, as in Mnih et al. 2015).

  Args:
    reward: `[batch]` rewards.
    terminated: `[batch]` bool; no bootstrapping where True.
    next_q_target: `[batch, actions]` target-network values at the next
      observation.
    gamma: The discount.
    next_q_online: `[batch, actions]` online-network values there, for double
      DQN; None for plain DQN.

  Returns:
    `[batch]` float32 targets (no gradient flows through them).
  """
  chooser = next_q_target if next_q_online is None else next_q_online
  best = tf.argmax(chooser, axis=-1, output_type=tf.int32)
  bootstrap = tf.gather(next_q_target, best, axis=1, batch_dims=1)
  keep = 1.0 - tf.cast(terminated, tf.float32)
  targets = tf.cast(reward, tf.float32) + gamma * keep * tf.cast(
      bootstrap, tf.float32)
  return tf.stop_gradient(targets)


@autograph.as_written
def huber(error: tf.Tensor) -> tf.Tensor:
  """Huber loss of `error` with threshold 1 (smooth L1), elementwise."""
  magnitude = tf.abs(error)
  return tf.where(magnitude <= 1.0, 0.5 * tf.square(error), magnitude - 0.5)
