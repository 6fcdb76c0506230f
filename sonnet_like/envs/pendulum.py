"""A batch of Pendulum environments written in TensorFlow (in-graph).

`Pendulum` follows gymnasium's `Pendulum-v1` step for step: the same
constants (g = 10, m = l = 1, dt = 0.05, torque in [-2, 2], speed clipped to
[-8, 8]), the same semi-implicit Euler step in float64, the same cost
`angle_normalize(theta)**2 + 0.1 * theta_dot**2 + 0.001 * torque**2` (the
reward is its negative), starting states uniform in theta in [-pi, pi) and
theta_dot in [-1, 1), no termination and a 200-step time limit. The state is
kept in float64, as gymnasium keeps it; observations
`[cos(theta), sin(theta), theta_dot]` and rewards are float32.

Being pure TensorFlow, a whole rollout compiles into one `tf.function`
(with or without `jit_compile=True`) together with the policy and update.

    >>> import tensorflow as tf
    >>> env = Pendulum(num_envs=2, seed=0)
    >>> env.reset(seed=0).shape
    TensorShape([2, 3])
    >>> env.set_state([[0.0, 0.0], [3.14159, 0.0]])
    >>> env.step(tf.zeros([2, 1])).reward.numpy().round(2)
    array([-0.  , -9.87], dtype=float32)
"""

import math

import numpy as np
import tensorflow as tf

from sonnet_like.core import autograph
from sonnet_like.envs import base
from sonnet_like.envs import in_graph

# gymnasium Pendulum-v1's constants (PendulumEnv.__init__ and reset).
GRAVITY = 10.0
MASS = 1.0
LENGTH = 1.0
DT = 0.05
MAX_SPEED = 8.0
MAX_TORQUE = 2.0
RESET_THETA = math.pi
RESET_THETA_DOT = 1.0


class Pendulum(in_graph.InGraphEnvironment):
  """`num_envs` Pendulum-v1 environments stepped together by TensorFlow ops.

  Observations are `[num_envs, 3]` float32 (cos theta, sin theta, theta
  dot); actions are `[num_envs, 1]` float torques, clipped to [-2, 2] as
  gymnasium clips them. Episodes never terminate; they are truncated after
  `max_episode_steps` steps, 200 by default (the constructor is
  `InGraphEnvironment`'s).
  """

  label = "Pendulum"
  time_limit = 200
  state_names = ("theta", "theta_dot")
  observation_spec = tf.TensorSpec([3], tf.float32)
  action_space = base.Box(np.array([-MAX_TORQUE], np.float32),
                          np.array([MAX_TORQUE], np.float32))

  @autograph.as_written
  def _draw_states(self) -> tf.Tensor:
    high = np.array([RESET_THETA, RESET_THETA_DOT])
    return self._uniform(-high, high)

  @autograph.as_written
  def _observe(self, state: tf.Tensor) -> tf.Tensor:
    theta, theta_dot = tf.unstack(state, axis=1)
    return tf.cast(tf.stack([tf.cos(theta), tf.sin(theta), theta_dot],
                            axis=1), tf.float32)

  @autograph.as_written
  def _dynamics(self, state: tf.Tensor, action: tf.Tensor
                ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """Semi-implicit Euler, as gymnasium's `PendulumEnv.step`."""
    # gymnasium clips the float32 action, then computes with it.
    torque = tf.clip_by_value(action[:, 0], -MAX_TORQUE, MAX_TORQUE)
    theta, theta_dot = tf.unstack(state, axis=1)
    # angle_normalize: ((x + pi) % (2 pi)) - pi, a floored modulo.
    normalized = tf.math.floormod(theta + math.pi, 2 * math.pi) - math.pi
    # 0.001 * u**2 is float32 in gymnasium (a float32 u), added in float64.
    effort = tf.cast(0.001 * tf.square(torque), tf.float64)
    costs = tf.square(normalized) + 0.1 * tf.square(theta_dot) + effort
    # Likewise 3 / (m l^2) * u is a float32 product.
    push = tf.cast(3.0 / (MASS * LENGTH**2) * torque, tf.float64)
    new_theta_dot = theta_dot + (
        3 * GRAVITY / (2 * LENGTH) * tf.sin(theta) + push) * DT
    new_theta_dot = tf.clip_by_value(new_theta_dot, -MAX_SPEED, MAX_SPEED)
    new_theta = theta + new_theta_dot * DT
    reached = tf.stack([new_theta, new_theta_dot], axis=1)
    return reached, -costs, tf.zeros([self.num_envs], tf.bool)
