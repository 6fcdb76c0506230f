"""Running observation statistics and reward scaling, inside the graph.

Both keep their statistics in variables, so they are updated inside the
compiled step, checkpointed with the run (a resumed run normalises exactly
as an uninterrupted one) and exported with the policy.

- `ObservationNormalizer`: `(obs - mean) / sqrt(var + epsilon)`, clipped to
  `[-clip, clip]`, with the mean and variance of every observation seen so
  far (merged batch by batch, Chan et al.'s parallel update). The scenario
  calls it wherever the networks see observations (collecting, updating,
  evaluating, acting, the export's `preprocess`).
- `RewardScaler`: divides rewards by the running standard deviation of
  each environment's discounted return `R_t = gamma * R_{t-1} + r_t` (reset
  when an episode ends), clipped to `[-clip, clip]`: the scaling of
  Stable-Baselines3's `VecNormalize`. It changes only what the update
  learns from; episode returns are logged unscaled.

    >>> import tensorflow as tf
    >>> normalizer = ObservationNormalizer([2])
    >>> normalizer.update(tf.constant([[0.0, 10.0], [2.0, 30.0]]))
    >>> normalizer.mean.numpy(), normalizer.variance.numpy()
    (array([ 1., 20.]), array([  1., 100.]))
    >>> normalizer(tf.constant([[1.0, 40.0]])).numpy().round(3)
    array([[0., 2.]], dtype=float32)
"""

from typing import Sequence

import tensorflow as tf

from sonnet_like.core import arguments


class RunningMeanStd(tf.Module):
  """Mean and variance of everything `update` has seen (float64).

  Args:
    shape: One sample's shape.
    name: Module name.
  """

  def __init__(self, shape: Sequence[int], name: str = "running_mean_std"):
    super().__init__(name=name)
    shape = list(shape)
    with self.name_scope:
      self.count = tf.Variable(tf.zeros([], tf.float64), trainable=False,
                               name="count")
      self.mean = tf.Variable(tf.zeros(shape, tf.float64), trainable=False,
                              name="mean")
      self.variance = tf.Variable(tf.ones(shape, tf.float64), trainable=False,
                                  name="variance")

  def update(self, batch: tf.Tensor) -> None:
    """Merges a batch `[n, *shape]` into the statistics (eager or traced)."""
    batch = tf.cast(batch, tf.float64)
    n = tf.cast(tf.shape(batch)[0], tf.float64)
    batch_mean = tf.reduce_mean(batch, axis=0)
    batch_variance = tf.reduce_mean(tf.square(batch - batch_mean), axis=0)
    total = self.count + n
    delta = batch_mean - self.mean
    mean = self.mean + delta * n / total
    # Before the first batch the variance is a placeholder (1), not data.
    old = tf.where(self.count > 0, self.variance * self.count, 0.0)
    m2 = old + batch_variance * n + tf.square(delta) * self.count * n / total
    self.mean.assign(mean)
    self.variance.assign(m2 / total)
    self.count.assign(total)


class ObservationNormalizer(RunningMeanStd):
  """Standardises observations with running statistics (see module doc).

  Args:
    shape: One observation's shape (an environment's
      `observation_spec.shape`).
    clip: Normalised observations are clipped to `[-clip, clip]`.
    epsilon: Added to the variance.
    name: Module name.
  """

  def __init__(self, shape: Sequence[int], clip: float = 10.0,
               epsilon: float = 1e-8, name: str = "observation_normalizer"):
    super().__init__(shape, name=name)
    arguments.check_positive_number("ObservationNormalizer", "clip", clip)
    arguments.check_positive_number("ObservationNormalizer", "epsilon",
                                    epsilon)
    self.clip, self.epsilon = float(clip), float(epsilon)

  def __call__(self, observation: tf.Tensor) -> tf.Tensor:
    """Normalised float32 observations `[batch, *shape]`."""
    observation = tf.cast(observation, tf.float32)
    mean = tf.cast(self.mean, tf.float32)
    scale = tf.cast(tf.sqrt(self.variance + self.epsilon), tf.float32)
    return tf.clip_by_value((observation - mean) / scale, -self.clip,
                            self.clip)


class RewardScaler(tf.Module):
  """Scales rewards by the running std of discounted returns (module doc).

  Args:
    num_envs: Environments in the batch (one running return each).
    gamma: The discount of the running returns (the scenario's).
    clip: Scaled rewards are clipped to `[-clip, clip]`.
    epsilon: Added to the variance.
    name: Module name.
  """

  def __init__(self, num_envs: int, gamma: float, clip: float = 10.0,
               epsilon: float = 1e-8, name: str = "reward_scaler"):
    super().__init__(name=name)
    arguments.check_positive_int("RewardScaler", "num_envs", num_envs)
    arguments.check_non_negative("RewardScaler", "gamma", gamma, upper=1.0)
    arguments.check_positive_number("RewardScaler", "clip", clip)
    self.gamma, self.clip, self.epsilon = float(gamma), float(clip), float(
        epsilon)
    with self.name_scope:
      self.returns = tf.Variable(tf.zeros([num_envs], tf.float64),
                                 trainable=False, name="returns")
      self.statistics = RunningMeanStd([], name="return_statistics")

  def __call__(self, rewards: tf.Tensor, done: tf.Tensor) -> tf.Tensor:
    """Scales a rollout's rewards `[T, num_envs]` and updates the statistics
    with its running returns first (`done` `[T, num_envs]` ends them)."""
    rewards = tf.cast(rewards, tf.float64)

    # The running return includes the step's reward, then resets after it.
    carry = self.returns.read_value()
    ta = tf.TensorArray(tf.float64, size=tf.shape(rewards)[0])

    def body(t, carry, ta):
      value = carry * self.gamma + rewards[t]
      ta = ta.write(t, value)
      return t + 1, tf.where(done[t], tf.zeros_like(value), value), ta

    _, carry, ta = tf.while_loop(lambda t, *_: t < tf.shape(rewards)[0],
                                 body, (tf.constant(0), carry, ta))
    self.returns.assign(carry)
    self.statistics.update(tf.reshape(ta.stack(), [-1]))
    scale = tf.sqrt(self.statistics.variance + self.epsilon)
    return tf.cast(tf.clip_by_value(rewards / scale, -self.clip, self.clip),
                   tf.float32)
