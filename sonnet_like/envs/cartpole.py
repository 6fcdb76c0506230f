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

import numpy as np
import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import utils
from sonnet_like.envs import base

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


def _divide(numerator: tf.Tensor, denominator) -> tf.Tensor:
  """`numerator / denominator`, rounded as NumPy rounds it.

  Inside `tf.function`, grappler turns a division by a constant into a
  multiplication by its reciprocal, which rounds differently and makes the
  trajectories drift away from gymnasium's; it leaves `DivNoNan` alone (the
  denominators here are never 0, so it is a plain division).
  """
  if not isinstance(denominator, tf.Tensor):
    denominator = tf.constant(denominator, numerator.dtype)
  return tf.math.divide_no_nan(numerator, denominator)


class CartPole(base.Environment):
  """`num_envs` CartPole-v1 environments stepped together by TensorFlow ops.

  Observations are `[num_envs, 4]` float32 (cart position, cart velocity,
  pole angle, pole angular velocity); actions are `[num_envs]` integers, 0
  (push left) or 1 (push right). Out-of-range actions raise an error naming
  CartPole: a `ValueError` when stepping eagerly, an `InvalidArgumentError`
  from a `tf.debugging` assertion inside `tf.function`. Under XLA
  (`jit_compile=True`) the assertion is compiled away and any action other
  than 1 acts as 0.

  The state (`state`, float64 `[num_envs, 4]`; `elapsed_steps`, int32
  `[num_envs]`) and the random generator (`rng`) are variables, so
  checkpointing the environment resumes it exactly.

  >>> env = CartPole(num_envs=3, seed=1)
  >>> env.reset(seed=1).shape
  TensorShape([3, 4])
  >>> timestep = env.step(tf.constant([0, 1, 1]))
  >>> timestep.reward.numpy()
  array([1., 1., 1.], dtype=float32)

  Args:
    num_envs: How many environments are stepped together.
    seed: Seeds the generator that draws starting states.
    max_episode_steps: Episodes are truncated after this many steps (a step
      that both terminates and reaches the limit counts as terminated).
    name: Module name.
  """

  def __init__(self, num_envs: int, seed: int = 0,
               max_episode_steps: int = 500, name: str = "cartpole"):
    super().__init__(name=name)
    arguments.check_positive_int("CartPole", "num_envs", num_envs)
    arguments.check_positive_int("CartPole", "max_episode_steps",
                                 max_episode_steps)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
      raise ValueError(f"CartPole: seed must be an int, got {seed!r}.")
    self.num_envs = int(num_envs)
    self.max_episode_steps = int(max_episode_steps)
    self.observation_spec = tf.TensorSpec([4], tf.float32)
    self.action_space = base.Discrete(2)
    self.in_graph = True
    with self.name_scope:
      self.rng = utils.seeded_generator(int(seed))
      self.state = tf.Variable(self._draw_states(), trainable=False,
                               name="state")
      self.elapsed_steps = tf.Variable(tf.zeros([self.num_envs], tf.int32),
                                       trainable=False, name="elapsed_steps")

  def __repr__(self) -> str:
    return (f"CartPole(num_envs={self.num_envs}, "
            f"max_episode_steps={self.max_episode_steps})")

  def _draw_states(self) -> tf.Tensor:
    # Raw Philox bits turned into floats by hand: the generator's own
    # `uniform` gives different numbers under XLA than without it.
    bits = self.rng.uniform_full_int([self.num_envs, 4], dtype=tf.uint64)
    unit = tf.cast(tf.bitwise.right_shift(bits, tf.constant(11, tf.uint64)),
                   tf.float64) * 2.0**-53
    return -RESET_BOUND + (2 * RESET_BOUND) * unit

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

  def observation(self) -> tf.Tensor:
    return tf.cast(self.state, tf.float32)

  def set_state(self, states, elapsed_steps=None) -> None:
    """Puts every environment in a given physical state.

    Args:
      states: `[num_envs, 4]` (x, x_dot, theta, theta_dot), kept as float64.
      elapsed_steps: `[num_envs]` steps already taken in the current
        episodes (counts towards the time limit); None sets 0.
    """
    states = tf.cast(states, tf.float64)
    if not states.shape.is_compatible_with([self.num_envs, 4]):
      raise ValueError(f"CartPole: states must have shape [{self.num_envs}, "
                       f"4], got {states.shape}.")
    if elapsed_steps is None:
      elapsed_steps = tf.zeros([self.num_envs], tf.int32)
    elapsed_steps = tf.cast(elapsed_steps, tf.int32)
    if not elapsed_steps.shape.is_compatible_with([self.num_envs]):
      raise ValueError(f"CartPole: elapsed_steps must have shape "
                       f"[{self.num_envs}], got {elapsed_steps.shape}.")
    self.state.assign(states)
    self.elapsed_steps.assign(elapsed_steps)

  def _checked_action(self, action) -> tf.Tensor:
    action = tf.convert_to_tensor(action)
    if not action.dtype.is_integer:
      raise TypeError(f"CartPole: action must be an integer tensor, got "
                      f"dtype {action.dtype.name}.")
    if not action.shape.is_compatible_with([self.num_envs]):
      raise ValueError(f"CartPole: action must have shape [{self.num_envs}],"
                       f" got {action.shape}.")
    if tf.executing_eagerly():
      values = action.numpy()
      bad = values[(values < 0) | (values >= 2)]
      if bad.size:
        raise ValueError(f"CartPole: actions must be 0 or 1, got "
                         f"{bad.tolist()[:5]}.")
      return tf.cast(action, tf.int32)
    message = "CartPole: actions must be 0 or 1."
    zero, two = tf.cast(0, action.dtype), tf.cast(2, action.dtype)
    checks = [tf.debugging.assert_greater_equal(action, zero, message=message),
              tf.debugging.assert_less(action, two, message=message)]
    with tf.control_dependencies(checks):
      return tf.cast(tf.identity(action), tf.int32)

  def step(self, action: tf.Tensor) -> base.TimeStep:
    """Steps every environment; ended episodes restart in the same step."""
    action = self._checked_action(action)
    x, x_dot, theta, theta_dot = tf.unstack(self.state, axis=1)
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
    elapsed = self.elapsed_steps + 1
    truncated = tf.logical_and(elapsed >= self.max_episode_steps,
                               tf.logical_not(terminated))
    done = tf.logical_or(terminated, truncated)
    fresh = self._draw_states()
    self.state.assign(tf.where(done[:, None], fresh, reached))
    self.elapsed_steps.assign(tf.where(done, tf.zeros_like(elapsed), elapsed))
    return base.TimeStep(
        observation=self.observation(),
        reward=tf.ones([self.num_envs], tf.float32),
        terminated=terminated,
        truncated=truncated,
        final_observation=tf.cast(reached, tf.float32))
