"""A batch of Acrobot environments written in TensorFlow (in-graph).

`Acrobot` follows gymnasium's `Acrobot-v1` step for step: the same
constants (links of length and mass 1, dt = 0.2, torques -1, 0 or +1), the
"book" dynamics integrated by one fourth-order Runge-Kutta step in float64,
angles wrapped to [-pi, pi] and speeds clipped to 4 pi and 9 pi, termination
when the free end rises above the bar (`-cos(t1) - cos(t1 + t2) > 1`), a
reward of -1 for every step but the terminal one (0), starting states
uniform in [-0.1, 0.1) rounded to float32 as gymnasium rounds them, and a
500-step time limit.

The state is float64, as gymnasium's integration is (float32 would leave
its trajectories within a few steps). Every operation is gymnasium's, in its
order, with one exception: a square (`dtheta**2`, `d2**2`) is NumPy's
`pow(x, 2)` there, which libm rounds away from the exact square in about one
case in 1,250, and `x * x` here. From the same state and action a step then
gives the same float32 observation, reward and flags; the float64 state is
the same or one ulp away. Acrobot is chaotic, so such a one-ulp difference
grows, and two free-running trajectories part after some hundreds of steps.

Being pure TensorFlow, a whole rollout compiles into one `tf.function`
(with or without `jit_compile=True`) together with the policy and update.
"""

import math

import tensorflow as tf

from sonnet_like.core import autograph
from sonnet_like.envs import base
from sonnet_like.envs import in_graph

# gymnasium AcrobotEnv's constants.
DT = 0.2
LINK_LENGTH_1 = 1.0
LINK_MASS_1 = 1.0
LINK_MASS_2 = 1.0
LINK_COM_POS_1 = 0.5
LINK_COM_POS_2 = 0.5
LINK_MOI = 1.0
GRAVITY = 9.8
MAX_VEL_1 = 4 * math.pi
MAX_VEL_2 = 9 * math.pi
RESET_BOUND = 0.1


def _derivatives(theta1, theta2, dtheta1, dtheta2, torque):
  """The time derivatives of the four state variables ("book" dynamics).

  Written as gymnasium's `_dsdt`, so that Python folds the constants and
  TensorFlow applies the rest in the same order.
  """
  m1, m2, l1 = LINK_MASS_1, LINK_MASS_2, LINK_LENGTH_1
  lc1, lc2 = LINK_COM_POS_1, LINK_COM_POS_2
  i1 = i2 = LINK_MOI
  g = GRAVITY
  cos2, sin2 = tf.cos(theta2), tf.sin(theta2)
  d1 = m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * cos2) + i1 + i2
  d2 = m2 * (lc2**2 + l1 * lc2 * cos2) + i2
  phi2 = m2 * lc2 * g * tf.cos(theta1 + theta2 - math.pi / 2.0)
  phi1 = (-m2 * l1 * lc2 * tf.square(dtheta2) * sin2
          - 2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * sin2
          + (m1 * lc1 + m2 * l1) * g * tf.cos(theta1 - math.pi / 2) + phi2)
  ddtheta2 = (torque + d2 / d1 * phi1
              - m2 * l1 * lc2 * tf.square(dtheta1) * sin2 - phi2) / (
                  m2 * lc2**2 + i2 - tf.square(d2) / d1)
  ddtheta1 = -(d2 * ddtheta2 + phi1) / d1
  return [dtheta1, dtheta2, ddtheta1, ddtheta2]


def _runge_kutta(state: list[tf.Tensor], torque: tf.Tensor) -> list[tf.Tensor]:
  """One fourth-order Runge-Kutta step of `DT`, as gymnasium's `rk4`."""
  half = DT / 2.0

  def moved(k, h):
    return [y + h * d for y, d in zip(state, k)]

  k1 = _derivatives(*state, torque)
  k2 = _derivatives(*moved(k1, half), torque)
  k3 = _derivatives(*moved(k2, half), torque)
  k4 = _derivatives(*moved(k3, DT), torque)
  return [y + DT / 6.0 * (a + 2 * b + 2 * c + d)
          for y, a, b, c, d in zip(state, k1, k2, k3, k4)]


def _shift_while(x: tf.Tensor, out, shift: float) -> tf.Tensor:
  """Adds `shift` to every element of `x` while `out(element)` holds."""
  # A bound on the turns keeps an infinite angle from looping forever.
  x, = tf.while_loop(lambda v: tf.reduce_any(out(v)),
                     lambda v: [tf.where(out(v), v + shift, v)], [x],
                     maximum_iterations=64)
  return x


def _wrap(x: tf.Tensor) -> tf.Tensor:
  """gymnasium's `wrap(x, -pi, pi)`: subtracts, then adds, 2 pi while out."""
  turn = math.pi - -math.pi   # x - turn rounds as x + (-turn).
  x = _shift_while(x, lambda v: v > math.pi, -turn)
  return _shift_while(x, lambda v: v < -math.pi, turn)


class Acrobot(in_graph.InGraphEnvironment):
  """`num_envs` Acrobot-v1 environments stepped together by TensorFlow ops.

  Observations are `[num_envs, 6]` float32 (cos t1, sin t1, cos t2, sin t2,
  dt1, dt2); actions are `[num_envs]` integers, 0, 1 or 2 (torque -1, 0 or
  +1 on the joint between the links). Out-of-range actions raise an error
  naming Acrobot (a `ValueError` eagerly, an `InvalidArgumentError` inside
  `tf.function`); under XLA the check is compiled away and they are clamped
  to 0 or 2. See the module docstring for how equal to gymnasium it is.
  Episodes are truncated after `max_episode_steps` steps, 500 by default;
  the constructor is `InGraphEnvironment`'s.

  The first link up and the second along it end the episode (reward 0):

  >>> env = Acrobot(num_envs=2, seed=0)
  >>> env.set_state([[3.1416, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
  >>> env.step(tf.constant([1, 1])).reward.numpy()
  array([ 0., -1.], dtype=float32)
  """

  label = "Acrobot"
  time_limit = 500
  state_names = ("theta1", "theta2", "dtheta1", "dtheta2")
  observation_spec = tf.TensorSpec([6], tf.float32)
  action_space = base.Discrete(3)

  @autograph.as_written
  def _draw_states(self) -> tf.Tensor:
    # gymnasium draws float64 and keeps the float32 rounding.
    start = self._uniform(-RESET_BOUND, RESET_BOUND, columns=4)
    return tf.cast(tf.cast(start, tf.float32), tf.float64)

  @autograph.as_written
  def _observe(self, state: tf.Tensor) -> tf.Tensor:
    theta1, theta2, dtheta1, dtheta2 = tf.unstack(state, axis=1)
    return tf.cast(tf.stack([tf.cos(theta1), tf.sin(theta1), tf.cos(theta2),
                             tf.sin(theta2), dtheta1, dtheta2], axis=1),
                   tf.float32)

  @autograph.as_written
  def _dynamics(self, state: tf.Tensor, action: tf.Tensor
                ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """As gymnasium's `AcrobotEnv.step`, in float64."""
    torque = tf.cast(tf.clip_by_value(action, 0, 2) - 1, tf.float64)
    theta1, theta2, dtheta1, dtheta2 = _runge_kutta(
        tf.unstack(state, axis=1), torque)
    reached = tf.stack([
        _wrap(theta1), _wrap(theta2),
        tf.clip_by_value(dtheta1, -MAX_VEL_1, MAX_VEL_1),
        tf.clip_by_value(dtheta2, -MAX_VEL_2, MAX_VEL_2)], axis=1)
    theta1, theta2 = reached[:, 0], reached[:, 1]
    terminated = -tf.cos(theta1) - tf.cos(theta2 + theta1) > 1.0
    reward = tf.where(terminated, tf.constant(0.0, tf.float32),
                      tf.constant(-1.0, tf.float32))
    return reached, reward, terminated
