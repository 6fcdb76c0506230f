"""Batches of MountainCar environments written in TensorFlow (in-graph).

`MountainCar` follows gymnasium's `MountainCar-v0` and `MountainCarContinuous`
its `MountainCarContinuous-v0`, step for step: the same constants, the same
clipping of speed and position, the same goals (position >= 0.5 with three
actions, >= 0.45 with a force in [-1, 1]; speed >= 0 in both), starting
positions uniform in [-0.6, -0.4) at rest, and time limits of 200 and 999
steps. Both keep the state in a float64 variable and observe it as float32.

The two differ in precision, as gymnasium's do: `MountainCar-v0` computes in
float64 throughout. `MountainCarContinuous-v0` stores its state as float32
after every step, so from the second step of an episode on it computes in
float32 (NumPy's promotion with Python floats, NEP 50); its first step, from
the float64 state its reset makes, computes the speed in float64, and a
force clipped to +-1 enters as a Python float. `MountainCarContinuous`
repeats all of that: a state is "fresh from reset" while `elapsed_steps` is 0.

Being pure TensorFlow, a whole rollout compiles into one `tf.function`
(with or without `jit_compile=True`) together with the policy and update.
"""

import numpy as np
import tensorflow as tf

from sonnet_like.core import autograph
from sonnet_like.envs import base
from sonnet_like.envs import in_graph

# gymnasium's MountainCarEnv and Continuous_MountainCarEnv constants.
MIN_POSITION = -1.2
MAX_POSITION = 0.6
MAX_SPEED = 0.07
GOAL_POSITION = 0.5
CONTINUOUS_GOAL_POSITION = 0.45
FORCE = 0.001
POWER = 0.0015
GRAVITY = 0.0025
RESET_LOW = -0.6
RESET_HIGH = -0.4


class _MountainCar(in_graph.InGraphEnvironment):
  """The state, observation and reset the two MountainCars share."""

  state_names = ("position", "velocity")
  observation_spec = tf.TensorSpec([2], tf.float32)

  @autograph.as_written
  def _draw_states(self) -> tf.Tensor:
    position = self._uniform(RESET_LOW, RESET_HIGH, columns=1)
    return tf.concat([position, tf.zeros_like(position)], axis=1)


def _moved(position: tf.Tensor, velocity: tf.Tensor, goal: float
           ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
  """Clips the new velocity, moves, stops at the left wall; in their dtype.

  Returns the new position, velocity and whether the goal is reached.
  """
  dtype = position.dtype
  velocity = tf.clip_by_value(velocity, tf.constant(-MAX_SPEED, dtype),
                              tf.constant(MAX_SPEED, dtype))
  position = tf.clip_by_value(position + velocity,
                              tf.constant(MIN_POSITION, dtype),
                              tf.constant(MAX_POSITION, dtype))
  zero = tf.zeros_like(velocity)
  at_wall = tf.logical_and(tf.equal(position, tf.constant(MIN_POSITION, dtype)),
                           velocity < zero)
  velocity = tf.where(at_wall, zero, velocity)
  reached = tf.logical_and(position >= tf.constant(goal, dtype),
                           velocity >= zero)
  return position, velocity, reached


class MountainCar(_MountainCar):
  """`num_envs` MountainCar-v0 environments stepped together by TF ops.

  Observations are `[num_envs, 2]` float32 (position, velocity); actions are
  `[num_envs]` integers: 0 (push left), 1 (no push), 2 (push right). The
  reward is -1 for every step; an episode terminates at position >= 0.5 with
  velocity >= 0. Out-of-range actions raise an error naming MountainCar
  (a `ValueError` eagerly, an `InvalidArgumentError` inside `tf.function`);
  under XLA the check is compiled away and they are clamped to 0 or 2.
  Episodes are truncated after `max_episode_steps` steps, 200 by default;
  the constructor is `InGraphEnvironment`'s.

  >>> env = MountainCar(num_envs=2, seed=0)
  >>> env.set_state([[0.49, 0.05], [-0.5, 0.0]])
  >>> timestep = env.step(tf.constant([2, 1]))
  >>> timestep.terminated.numpy(), timestep.reward.numpy()
  (array([ True, False]), array([-1., -1.], dtype=float32))
  """

  label = "MountainCar"
  time_limit = 200
  action_space = base.Discrete(3)

  @autograph.as_written
  def _dynamics(self, state: tf.Tensor, action: tf.Tensor
                ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """As gymnasium's `MountainCarEnv.step`, in float64."""
    position, velocity = tf.unstack(state, axis=1)
    push = tf.cast(tf.clip_by_value(action, 0, 2) - 1, tf.float64) * FORCE
    velocity = velocity + (push + tf.cos(3 * position) * (-GRAVITY))
    position, velocity, terminated = _moved(position, velocity,
                                            GOAL_POSITION)
    reached = tf.stack([position, velocity], axis=1)
    return reached, -tf.ones([self.num_envs], tf.float32), terminated


class MountainCarContinuous(_MountainCar):
  """`num_envs` MountainCarContinuous-v0 environments stepped by TF ops.

  Observations are `[num_envs, 2]` float32 (position, velocity); actions are
  `[num_envs, 1]` float forces, clipped to [-1, 1] for the dynamics. The
  reward is `-0.1 * action**2` of the unclipped action, plus 100 on the step
  that reaches position >= 0.45 with velocity >= 0 (which terminates the
  episode). See the module docstring for the float32 and float64 steps.

  Its float64 `state` holds float32 values after a step, as gymnasium's.
  Episodes are truncated after `max_episode_steps` steps, 999 by default
  (the constructor is `InGraphEnvironment`'s).
  """

  label = "MountainCarContinuous"
  time_limit = 999
  action_space = base.Box(np.array([-1.0], np.float32),
                          np.array([1.0], np.float32))

  @autograph.as_written
  def _dynamics(self, state: tf.Tensor, action: tf.Tensor
                ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """As gymnasium's `Continuous_MountainCarEnv.step`, in its precisions."""
    force = action[:, 0]
    fresh = tf.equal(self.elapsed_steps, 0)
    wide = self._moved_in(tf.float64, state, force)
    narrow = self._moved_in(tf.float32, state, force)
    position, velocity = (tf.where(fresh, w, tf.cast(n, tf.float64))
                          for w, n in zip(wide[:2], narrow[:2]))
    terminated = tf.where(fresh, wide[2], narrow[2])
    # gymnasium stores the state as float32 after every step.
    reached = tf.cast(tf.cast(tf.stack([position, velocity], axis=1),
                              tf.float32), tf.float64)
    # math.pow(action, 2) * 0.1 in float64, of the unclipped action.
    effort = tf.square(tf.cast(force, tf.float64)) * 0.1
    bonus = tf.where(terminated, tf.constant(100.0, tf.float64),
                     tf.constant(0.0, tf.float64))
    return reached, bonus - effort, terminated

  @staticmethod
  def _moved_in(dtype: tf.DType, state: tf.Tensor, force: tf.Tensor
                ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """One step computed as gymnasium does from a state of `dtype`."""
    position, velocity = tf.unstack(tf.cast(state, dtype), axis=1)
    # 0.0025 * math.cos(3 * position): a Python float (float64).
    slope = GRAVITY * tf.cos(tf.cast(3 * position, tf.float64))
    # An unclipped float32 force stays float32: force * power - slope.
    inside = tf.cast(force * np.float32(POWER) - tf.cast(slope, tf.float32),
                     dtype)
    # A clipped one is the Python float +-1.0: all float64, then `dtype`.
    clipped = tf.cast(tf.clip_by_value(tf.cast(force, tf.float64), -1.0, 1.0)
                      * POWER - slope, dtype)
    outside = tf.logical_or(force < -1.0, force > 1.0)
    velocity = velocity + tf.where(outside, clipped, inside)
    return _moved(position, velocity, CONTINUOUS_GOAL_POSITION)
