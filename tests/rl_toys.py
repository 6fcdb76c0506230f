"""Tiny in-graph environments for the RL tests (learnable in seconds)."""

import tensorflow as tf

from sonnet_like.core import utils
from sonnet_like import envs


class Guess(envs.Environment):
  """Each step shows a random sign x in {-1, +1}; action 1 pays 1 when x > 0,
  action 0 pays 1 when x < 0. Episodes last `length` steps (truncated), so a
  random policy returns length / 2 and the best one `length`.
  """

  def __init__(self, num_envs: int = 4, length: int = 5, seed: int = 0,
               terminate: bool = False):
    super().__init__(name="guess")
    self.num_envs, self.length, self.terminate = num_envs, length, terminate
    self.observation_spec = tf.TensorSpec([1], tf.float32)
    self.action_space = envs.Discrete(2)
    self.in_graph = True
    self.rng = utils.seeded_generator(seed)
    self.sign = tf.Variable(tf.ones([num_envs, 1]), trainable=False)
    self.t = tf.Variable(tf.zeros([num_envs], tf.int32), trainable=False)

  def _draw(self):
    return tf.where(self.rng.uniform([self.num_envs, 1]) < 0.5, -1.0, 1.0)

  def reset(self, seed=None):
    if seed is not None:
      utils.reseed(self.rng, seed)
    self.sign.assign(self._draw())
    self.t.assign(tf.zeros_like(self.t))
    return self.sign.read_value()

  def observation(self):
    return self.sign.read_value()

  def step(self, action):
    right = tf.where(self.sign[:, 0] > 0, 1, 0)
    reward = tf.cast(tf.equal(tf.cast(action, tf.int32), right), tf.float32)
    t = self.t + 1
    ended = t >= self.length
    final = self._draw()
    self.t.assign(tf.where(ended, 0, t))
    self.sign.assign(final)
    no = tf.zeros_like(ended)
    return envs.TimeStep(final, reward, ended if self.terminate else no,
                         no if self.terminate else ended, final)
