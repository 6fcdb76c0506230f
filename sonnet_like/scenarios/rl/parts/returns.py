"""Discounted returns and generalised advantage estimates over a rollout.

Every tensor is time-major, `[T, num_envs]`. An environment's episode can
end inside the rollout in two ways (see `envs.TimeStep`):

- `terminated[t]`: a terminal state was reached, whose value is 0: nothing is
  bootstrapped.
- `truncated[t]`: the episode was cut short (a time limit) in a state that
  has a value: bootstrap from `final_values[t]`, the value of the
  `final_observation` the step reached (the next observation is already the
  first one of a new episode).

An episode still running at the end of the rollout is bootstrapped from
`last_value`, the value of the observation after the last step.

    >>> import tensorflow as tf
    >>> rewards = tf.ones([3, 1])
    >>> no = tf.zeros([3, 1], tf.bool)
    >>> ended = tf.constant([[False], [True], [False]])
    >>> discounted_returns(rewards, ended, no, gamma=0.5).numpy()[:, 0]
    array([1.5, 1. , 1. ], dtype=float32)
"""

import tensorflow as tf

from sonnet_like.core import autograph


@autograph.as_written
def _next_values(values, terminated, truncated, final_values, last_value):
  """V(s_{t+1}) of the episode each step belongs to; 0 after a terminal."""
  rewards_shape = tf.shape(terminated)
  if last_value is None:
    last_value = tf.zeros(rewards_shape[1:])
  if final_values is None:
    final_values = tf.zeros(rewards_shape)
  following = tf.concat([values[1:], last_value[tf.newaxis]], axis=0)
  following = tf.where(truncated, final_values, following)
  return tf.where(terminated, tf.zeros_like(following), following)


@autograph.as_written
def _check(rewards, *others):
  rank = rewards.shape.rank
  if rank is not None and rank < 1:
    raise ValueError(f"returns: rewards must be [T, ...] (time-major), got "
                     f"shape {rewards.shape}.")
  for other in others:
    if other is not None and not rewards.shape.is_compatible_with(
        other.shape):
      raise ValueError(f"returns: every input must have the rewards' shape "
                       f"{rewards.shape}, got {other.shape}.")


def discounted_returns(rewards: tf.Tensor, terminated: tf.Tensor,
                       truncated: tf.Tensor, gamma: float,
                       final_values: tf.Tensor | None = None,
                       last_value: tf.Tensor | None = None) -> tf.Tensor:
  """Discounted returns-to-go within each episode of a rollout.

  `G_t = r_t + gamma * G_{t+1}`, where an ended episode's tail is replaced by
  0 (terminated), `final_values[t]` (truncated) or, past the rollout end,
  `last_value` (0 where not given: plain Monte-Carlo returns).

  Args:
    rewards: `[T, num_envs]` rewards.
    terminated: `[T, num_envs]` bool.
    truncated: `[T, num_envs]` bool.
    gamma: Discount factor.
    final_values: `[T, num_envs]` values of the final observations (used
      where `truncated`), or None for 0.
    last_value: `[num_envs]` value after the last step, or None for 0.

  Returns:
    `[T, num_envs]` float32 returns.
  """
  rewards = tf.convert_to_tensor(rewards, tf.float32)
  terminated = tf.convert_to_tensor(terminated, tf.bool)
  truncated = tf.convert_to_tensor(truncated, tf.bool)
  _check(rewards, terminated, truncated, final_values)
  if last_value is None:
    last_value = tf.zeros(tf.shape(rewards)[1:])
  if final_values is None:
    final_values = tf.zeros_like(rewards)
  tail = tf.where(truncated, tf.cast(final_values, tf.float32), 0.0)
  done = tf.logical_or(terminated, truncated)

  def back(following, inputs):
    reward, ended, ended_tail = inputs
    return reward + gamma * tf.where(ended, ended_tail, following)

  return tf.scan(back, (rewards, done, tail),
                 initializer=tf.cast(last_value, tf.float32), reverse=True)


@autograph.as_written
def gae(rewards: tf.Tensor, values: tf.Tensor, terminated: tf.Tensor,
        truncated: tf.Tensor, gamma: float, lam: float,
        final_values: tf.Tensor | None = None,
        last_value: tf.Tensor | None = None) -> tf.Tensor:
  """Generalised advantage estimates (Schulman et al. 2016).

  `delta_t = r_t + gamma * V(s_{t+1}) - V(s_t)` with `V(s_{t+1})` as in the
  module docstring, and `A_t = delta_t + gamma * lam * A_{t+1}` within an
  episode (the sum restarts where an episode ends).

  Args:
    rewards: `[T, num_envs]` rewards.
    values: `[T, num_envs]` values of the observations the steps started
      from.
    terminated: `[T, num_envs]` bool.
    truncated: `[T, num_envs]` bool.
    gamma: Discount factor.
    lam: The GAE lambda (0: one-step TD errors, 1: Monte-Carlo advantages).
    final_values: `[T, num_envs]` values of the final observations (used
      where `truncated`), or None for 0.
    last_value: `[num_envs]` value after the last step, or None for 0.

  Returns:
    `[T, num_envs]` float32 advantages; add `values` for the value targets.
  """
  rewards = tf.convert_to_tensor(rewards, tf.float32)
  values = tf.convert_to_tensor(values, tf.float32)
  terminated = tf.convert_to_tensor(terminated, tf.bool)
  truncated = tf.convert_to_tensor(truncated, tf.bool)
  _check(rewards, values, terminated, truncated, final_values)
  if final_values is not None:
    final_values = tf.cast(final_values, tf.float32)
  if last_value is not None:
    last_value = tf.cast(last_value, tf.float32)
  following = _next_values(values, terminated, truncated, final_values,
                           last_value)
  deltas = rewards + gamma * following - values
  keep = gamma * lam * (1.0 - tf.cast(
      tf.logical_or(terminated, truncated), tf.float32))

  def back(later, inputs):
    delta, factor = inputs
    return delta + factor * later

  return tf.scan(back, (deltas, keep), initializer=tf.zeros_like(values[0]),
                 reverse=True)
