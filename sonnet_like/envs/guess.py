"""`Guess`: a tiny in-graph environment that an RL setup learns in seconds.

Each step shows a random sign x in {-1, +1}. Action 1 pays 1 when x > 0 and
action 0 pays 1 when x < 0, so a random policy earns half of the best return.
Use it to check that a new agent, network or scenario setting learns at all
before spending minutes on a real task.

With `continuous=True` the action is a number in [-1, 1] that should match
the sign: it pays `1 - (action - x)^2 / 4`, so 1 for the sign itself, 0.75
for 0 (the best a policy that ignores x can do) and about 0.67 on average
for uniformly random actions.

    >>> import sonnet_like as snt, tensorflow as tf
    >>> env = snt.envs.Guess(num_envs=3, length=4)
    >>> obs = env.reset(seed=0)
    >>> step = env.step(tf.cast(obs[:, 0] > 0, tf.int32))   # always right
    >>> step.reward.numpy().tolist()
    [1.0, 1.0, 1.0]
"""

import numpy as np
import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import utils
from sonnet_like.envs import base


class Guess(base.Environment):
  """A batch of `num_envs` sign-guessing games of `length` steps each.

  Args:
    num_envs: Games played side by side.
    length: Steps per episode; the best return is `length`, a random policy's
      `length / 2`.
    seed: Seed of the signs.
    terminate: End episodes as terminated (no bootstrap) instead of
      truncated (bootstrapped from `final_observation`).
    continuous: Actions are numbers in [-1, 1] (a `Box`), paid by how close
      they come to the sign, instead of 0 or 1.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> env = snt.envs.Guess(num_envs=2, continuous=True)
      >>> obs = env.reset(seed=0)
      >>> env.step(obs).reward.numpy().tolist()   # the sign itself
      [1.0, 1.0]
      >>> env.step(tf.zeros([2, 1])).reward.numpy().tolist()
      [0.75, 0.75]
  """

  def __init__(self, num_envs: int = 4, length: int = 5, seed: int = 0,
               terminate: bool = False, continuous: bool = False):
    super().__init__(name="guess")
    arguments.check_positive_int("Guess", "num_envs", num_envs)
    arguments.check_positive_int("Guess", "length", length)
    self.num_envs, self.length, self.terminate = num_envs, length, terminate
    self.observation_spec = tf.TensorSpec([1], tf.float32)
    self.continuous = continuous
    self.action_space = (base.Box(-np.ones(1), np.ones(1)) if continuous
                         else base.Discrete(2))
    self.in_graph = True
    self.rng = utils.seeded_generator(seed)
    self.sign = tf.Variable(tf.ones([num_envs, 1]), trainable=False)
    self.t = tf.Variable(tf.zeros([num_envs], tf.int32), trainable=False)

  def _draw(self) -> tf.Tensor:
    return tf.where(self.rng.uniform([self.num_envs, 1]) < 0.5, -1.0, 1.0)

  def reset(self, seed: int | None = None) -> tf.Tensor:
    if seed is not None:
      utils.reseed(self.rng, seed)
    self.sign.assign(self._draw())
    self.t.assign(tf.zeros_like(self.t))
    return self.sign.read_value()

  def observation(self) -> tf.Tensor:
    return self.sign.read_value()

  def step(self, action: tf.Tensor) -> base.TimeStep:
    if self.continuous:
      action = tf.clip_by_value(tf.reshape(tf.cast(action, tf.float32),
                                           [self.num_envs]), -1.0, 1.0)
      reward = 1.0 - tf.square(action - self.sign[:, 0]) / 4.0
    else:
      right = tf.where(self.sign[:, 0] > 0, 1, 0)
      reward = tf.cast(tf.equal(tf.cast(action, tf.int32), right), tf.float32)
    t = self.t + 1
    ended = t >= self.length
    final = self._draw()
    self.t.assign(tf.where(ended, 0, t))
    self.sign.assign(final)
    no = tf.zeros_like(ended)
    return base.TimeStep(final, reward, ended if self.terminate else no,
                         no if self.terminate else ended, final)
