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

from sonnet_like.core import arguments
from sonnet_like.core import utils
from sonnet_like.envs import base

# gymnasium Pendulum-v1's constants (PendulumEnv.__init__ and reset).
GRAVITY = 10.0
MASS = 1.0
LENGTH = 1.0
DT = 0.05
MAX_SPEED = 8.0
MAX_TORQUE = 2.0
RESET_THETA = math.pi
RESET_THETA_DOT = 1.0


class Pendulum(base.Environment):
  """`num_envs` Pendulum-v1 environments stepped together by TensorFlow ops.

  Observations are `[num_envs, 3]` float32 (cos theta, sin theta, theta
  dot); actions are `[num_envs, 1]` float torques, clipped to [-2, 2] as
  gymnasium clips them. Episodes never terminate; they are truncated after
  `max_episode_steps` steps.

  The state (`state`, float64 `[num_envs, 2]`: theta, theta dot;
  `elapsed_steps`, int32 `[num_envs]`) and the random generator (`rng`) are
  variables, so checkpointing the environment resumes it exactly.

  Args:
    num_envs: How many environments are stepped together.
    seed: Seeds the generator that draws starting states.
    max_episode_steps: Episodes are truncated after this many steps.
    name: Module name.
  """

  def __init__(self, num_envs: int, seed: int = 0,
               max_episode_steps: int = 200, name: str = "pendulum"):
    super().__init__(name=name)
    arguments.check_positive_int("Pendulum", "num_envs", num_envs)
    arguments.check_positive_int("Pendulum", "max_episode_steps",
                                 max_episode_steps)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
      raise ValueError(f"Pendulum: seed must be an int, got {seed!r}.")
    self.num_envs = int(num_envs)
    self.max_episode_steps = int(max_episode_steps)
    self.observation_spec = tf.TensorSpec([3], tf.float32)
    self.action_space = base.Box(np.array([-MAX_TORQUE], np.float32),
                                 np.array([MAX_TORQUE], np.float32))
    self.in_graph = True
    with self.name_scope:
      self.rng = utils.seeded_generator(int(seed))
      self.state = tf.Variable(self._draw_states(), trainable=False,
                               name="state")
      self.elapsed_steps = tf.Variable(tf.zeros([self.num_envs], tf.int32),
                                       trainable=False, name="elapsed_steps")

  def __repr__(self) -> str:
    return (f"Pendulum(num_envs={self.num_envs}, "
            f"max_episode_steps={self.max_episode_steps})")

  def _draw_states(self) -> tf.Tensor:
    # Raw Philox bits turned into floats by hand, as CartPole does: the
    # generator's own `uniform` differs under XLA.
    bits = self.rng.uniform_full_int([self.num_envs, 2], dtype=tf.uint64)
    unit = tf.cast(tf.bitwise.right_shift(bits, tf.constant(11, tf.uint64)),
                   tf.float64) * 2.0**-53
    high = tf.constant([RESET_THETA, RESET_THETA_DOT], tf.float64)
    return -high + 2.0 * high * unit

  def reset(self, seed: int | None = None) -> tf.Tensor:
    """Draws new starting states for every environment; returns them.

    Args:
      seed: Reseeds the environment's generator first; None continues it.
    """
    if seed is not None:
      utils.reseed(self.rng, seed)
    self.state.assign(self._draw_states())
    self.elapsed_steps.assign(tf.zeros_like(self.elapsed_steps))
    return self.observation()

  @staticmethod
  def _observe(state: tf.Tensor) -> tf.Tensor:
    theta, theta_dot = tf.unstack(state, axis=1)
    return tf.cast(tf.stack([tf.cos(theta), tf.sin(theta), theta_dot],
                            axis=1), tf.float32)

  def observation(self) -> tf.Tensor:
    return self._observe(self.state)

  def set_state(self, states, elapsed_steps=None) -> None:
    """Puts every environment in a given physical state.

    Args:
      states: `[num_envs, 2]` (theta, theta dot), kept as float64.
      elapsed_steps: `[num_envs]` steps already taken in the current
        episodes (counts towards the time limit); None sets 0.
    """
    states = tf.cast(states, tf.float64)
    if not states.shape.is_compatible_with([self.num_envs, 2]):
      raise ValueError(f"Pendulum: states must have shape [{self.num_envs}, "
                       f"2], got {states.shape}.")
    if elapsed_steps is None:
      elapsed_steps = tf.zeros([self.num_envs], tf.int32)
    elapsed_steps = tf.cast(elapsed_steps, tf.int32)
    if not elapsed_steps.shape.is_compatible_with([self.num_envs]):
      raise ValueError(f"Pendulum: elapsed_steps must have shape "
                       f"[{self.num_envs}], got {elapsed_steps.shape}.")
    self.state.assign(states)
    self.elapsed_steps.assign(elapsed_steps)

  def _checked_action(self, action) -> tf.Tensor:
    action = tf.convert_to_tensor(action)
    if not action.dtype.is_floating:
      raise TypeError(f"Pendulum: action must be a float tensor, got dtype "
                      f"{action.dtype.name}.")
    if not action.shape.is_compatible_with([self.num_envs, 1]):
      raise ValueError(f"Pendulum: action must have shape [{self.num_envs}, "
                       f"1], got {action.shape}.")
    # gymnasium clips the float32 action, then computes with it.
    return tf.clip_by_value(tf.cast(action[:, 0], tf.float32), -MAX_TORQUE,
                            MAX_TORQUE)

  def step(self, action: tf.Tensor) -> base.TimeStep:
    """Steps every environment; ended episodes restart in the same step."""
    torque = self._checked_action(action)
    theta, theta_dot = tf.unstack(self.state, axis=1)
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

    terminated = tf.zeros([self.num_envs], tf.bool)
    elapsed = self.elapsed_steps + 1
    truncated = elapsed >= self.max_episode_steps
    fresh = self._draw_states()
    self.state.assign(tf.where(truncated[:, None], fresh, reached))
    self.elapsed_steps.assign(tf.where(truncated, tf.zeros_like(elapsed),
                                       elapsed))
    return base.TimeStep(
        observation=self.observation(),
        reward=tf.cast(-costs, tf.float32),
        terminated=terminated,
        truncated=truncated,
        final_observation=self._observe(reached))
