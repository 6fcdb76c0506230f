"""A batch of CartPole environments written in TensorFlow (in-graph).

`CartPole` follows gymnasium's `CartPole-v1` step for step: the same
constants, the same explicit Euler integration in float64, the same
termination thresholds (|x| > 2.4, |theta| > 12 degrees), a reward of 1 for
every step including the last, starting states uniform in [-0.05, 0.05) and
a 500-step time limit. Its physical state is kept in float64, as gymnasium
keeps it, and observations are float32, as gymnasium returns them.

Being pure TensorFlow, a whole rollout compiles into one `tf.function`
(with or without `jit_compile=True`) together with the policy and update.
"""

import math

import tensorflow as tf

from sonnet_like.core import autograph
from sonnet_like.envs import base
from sonnet_like.envs import in_graph

# gymnasium CartPole-v1's physical constants (CartPoleEnv.__init__).
GRAVITY = 9.8
MASS_CART = 1.0
MASS_POLE = 0.1
TOTAL_MASS = MASS_POLE + MASS_CART
HALF_LENGTH = 0.5
POLE_MASS_LENGTH = MASS_POLE * HALF_LENGTH
FORCE_MAG = 10.0
TAU = 0.02
THETA_THRESHOLD = 12 * 2 * math.pi / 360
X_THRESHOLD = 2.4
RESET_BOUND = 0.05

_divide = in_graph.divide


class CartPole(in_graph.InGraphEnvironment):
  """`num_envs` CartPole-v1 environments stepped together by TensorFlow ops.

  Observations are `[num_envs, 4]` float32 (cart position, cart velocity,
  pole angle, pole angular velocity); actions are `[num_envs]` integers, 0
  (push left) or 1 (push right). Out-of-range actions raise an error naming
  CartPole: a `ValueError` when stepping eagerly, an `InvalidArgumentError`
  from a `tf.debugging` assertion inside `tf.function`. Under XLA
  (`jit_compile=True`) the assertion is compiled away and any action other
  than 1 acts as 0. Episodes are truncated after `max_episode_steps` steps,
  500 by default; the constructor is `InGraphEnvironment`'s.

  >>> env = CartPole(num_envs=3, seed=1)
  >>> env.reset(seed=1).shape
  TensorShape([3, 4])
  >>> timestep = env.step(tf.constant([0, 1, 1]))
  >>> timestep.reward.numpy()
  array([1., 1., 1.], dtype=float32)
  """

  label = "CartPole"
  time_limit = 500
  state_names = ("x", "x_dot", "theta", "theta_dot")
  observation_spec = tf.TensorSpec([4], tf.float32)
  action_space = base.Discrete(2)

  @autograph.as_written
  def _draw_states(self) -> tf.Tensor:
    return self._uniform(-RESET_BOUND, RESET_BOUND, columns=4)

  @autograph.as_written
  def _dynamics(self, state: tf.Tensor, action: tf.Tensor
                ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """Explicit Euler, as gymnasium's `CartPoleEnv.step`."""
    x, x_dot, theta, theta_dot = tf.unstack(state, axis=1)
    force = tf.where(tf.equal(action, 1), tf.constant(FORCE_MAG, tf.float64),
                     tf.constant(-FORCE_MAG, tf.float64))
    cos = tf.cos(theta)
    sin = tf.sin(theta)
    temp = _divide(force + POLE_MASS_LENGTH * tf.square(theta_dot) * sin,
                   TOTAL_MASS)
    theta_acc = _divide(GRAVITY * sin - cos * temp, HALF_LENGTH * (
        4.0 / 3.0 - _divide(MASS_POLE * tf.square(cos), TOTAL_MASS)))
    x_acc = temp - _divide(POLE_MASS_LENGTH * theta_acc * cos, TOTAL_MASS)
    x = x + TAU * x_dot
    x_dot = x_dot + TAU * x_acc
    theta = theta + TAU * theta_dot
    theta_dot = theta_dot + TAU * theta_acc
    reached = tf.stack([x, x_dot, theta, theta_dot], axis=1)

    terminated = tf.logical_or(
        tf.logical_or(x < -X_THRESHOLD, x > X_THRESHOLD),
        tf.logical_or(theta < -THETA_THRESHOLD, theta > THETA_THRESHOLD))
    return reached, tf.ones([self.num_envs], tf.float32), terminated
