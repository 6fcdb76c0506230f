"""The shared state handling of the environments written in TensorFlow.

`InGraphEnvironment` keeps a batch of physical states in a float64 variable,
counts the steps of every episode, truncates at a time limit, restarts ended
episodes in the same step and checks actions against the action space. A new
in-graph environment writes only what is its own:

- its spaces and time limit, as class attributes: `observation_spec`,
  `action_space`, `state_names` (one name per column of the state),
  `time_limit` (the default `max_episode_steps`) and `label` (the name
  errors and `repr` start with);
- its reset distribution, `_draw_states()` (usually with `_uniform`);
- its dynamics, `_dynamics(state, action) -> (reached, reward, terminated)`;
- its observation of a state, `_observe(state)` (float32 of the state unless
  overridden).

The starting states are made from the generator's raw 64-bit draws, as NumPy
makes `uniform` from its bit generator: `Generator.uniform` draws
differently under XLA than without it, raw bits do not.
"""

import numpy as np
import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import autograph
from sonnet_like.core import utils
from sonnet_like.envs import base


def divide(numerator: tf.Tensor, denominator) -> tf.Tensor:
  """`numerator / denominator`, rounded as NumPy rounds it.

  Inside `tf.function`, grappler turns a division by a constant into a
  multiplication by its reciprocal, which rounds differently and makes the
  trajectories drift away from gymnasium's; it leaves `DivNoNan` alone (use
  it only where the denominator is never 0: it is then a plain division).
  """
  if not isinstance(denominator, tf.Tensor):
    denominator = tf.constant(denominator, numerator.dtype)
  return tf.math.divide_no_nan(numerator, denominator)


def _choices(num_actions: int) -> str:
  """"0 or 1", "0, 1 or 2": the valid actions of `Discrete(num_actions)`."""
  if num_actions == 1:
    return "0"
  return (", ".join(str(a) for a in range(num_actions - 1))
          + f" or {num_actions - 1}")


class InGraphEnvironment(base.Environment):
  """A batch of environments whose state and dynamics are TensorFlow ops.

  See the module docstring for what a subclass provides. The state
  (`state`, float64 `[num_envs, len(state_names)]`; `elapsed_steps`, int32
  `[num_envs]`) and the random generator (`rng`) are variables, so
  checkpointing the environment resumes it exactly.

  Discrete actions out of range raise an error naming the environment: a
  `ValueError` when stepping eagerly, an `InvalidArgumentError` from a
  `tf.debugging` assertion inside `tf.function`. Under XLA
  (`jit_compile=True`) the assertion is compiled away and what such an
  action does is up to the dynamics. Box actions reach the dynamics as
  float32 `[num_envs, *shape]`, unclipped.

  Args:
    num_envs: How many environments are stepped together.
    seed: Seeds the generator (`rng`) that draws starting states.
    max_episode_steps: Episodes are truncated after this many steps (a step
      that both terminates and reaches the limit counts as terminated); None
      takes the class's `time_limit` (gymnasium's).
    name: Module name; None takes the label in lower case.
  """

  label: str
  state_names: tuple[str, ...]
  time_limit: int
  in_graph = True

  def __init__(self, num_envs: int, seed: int = 0,
               max_episode_steps: int | None = None, name: str | None = None):
    if max_episode_steps is None:
      max_episode_steps = self.time_limit
    super().__init__(name=self.label.lower() if name is None else name)
    arguments.check_positive_int(self.label, "num_envs", num_envs)
    arguments.check_positive_int(self.label, "max_episode_steps",
                                 max_episode_steps)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
      raise ValueError(f"{self.label}: seed must be an int, got {seed!r}.")
    self.num_envs = int(num_envs)
    self.max_episode_steps = int(max_episode_steps)
    with self.name_scope:
      self.rng = utils.seeded_generator(int(seed))
      self.state = tf.Variable(self._draw_states(), trainable=False,
                               name="state")
      self.elapsed_steps = tf.Variable(tf.zeros([self.num_envs], tf.int32),
                                       trainable=False, name="elapsed_steps")

  def __repr__(self) -> str:
    return (f"{self.label}(num_envs={self.num_envs}, "
            f"max_episode_steps={self.max_episode_steps})")

  # What a subclass provides.

  def _draw_states(self) -> tf.Tensor:
    """Starting states, float64 `[num_envs, len(state_names)]`."""
    raise NotImplementedError(f"{self.label} must implement _draw_states().")

  def _dynamics(self, state: tf.Tensor, action: tf.Tensor
                ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """One step from `state` (float64) with the checked `action`.

    Returns:
      The state reached (float64, before any reset), the rewards (cast to
      float32 by `step`) and whether each episode terminated (bool).
    """
    raise NotImplementedError(f"{self.label} must implement _dynamics().")

  @autograph.as_written
  def _observe(self, state: tf.Tensor) -> tf.Tensor:
    """The observations of `state`; float32 of the state itself by default."""
    return tf.cast(state, tf.float32)

  # Shared by every in-graph environment.

  @autograph.as_written
  def _uniform(self, low, high, columns: int | None = None) -> tf.Tensor:
    """float64 `[num_envs, columns]` uniform in `[low, high)`, as NumPy draws.

    `low + (high - low) * u`, with `u` the top 53 bits of a raw 64-bit draw
    times 2**-53 (NumPy's `random()`). `low` and `high` are scalars or one
    value per column; `columns` defaults to their length.
    """
    low = np.asarray(low, np.float64)
    high = np.asarray(high, np.float64)
    if columns is None:
      columns = low.size
    bits = self.rng.uniform_full_int([self.num_envs, columns], dtype=tf.uint64)
    unit = tf.cast(tf.bitwise.right_shift(bits, tf.constant(11, tf.uint64)),
                   tf.float64) * 2.0**-53
    return tf.constant(low) + tf.constant(high - low) * unit

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

  @autograph.as_written
  def observation(self) -> tf.Tensor:
    return autograph.as_user_code(self._observe)(self.state)

  def set_state(self, states, elapsed_steps=None) -> None:
    """Puts every environment in a given physical state.

    Args:
      states: `[num_envs, len(state_names)]` (the columns `state_names`),
        kept as float64.
      elapsed_steps: `[num_envs]` steps already taken in the current
        episodes (counts towards the time limit); None sets 0.
    """
    size = len(self.state_names)
    states = tf.cast(states, tf.float64)
    if not states.shape.is_compatible_with([self.num_envs, size]):
      raise ValueError(f"{self.label}: states must have shape "
                       f"[{self.num_envs}, {size}], got {states.shape}.")
    if elapsed_steps is None:
      elapsed_steps = tf.zeros([self.num_envs], tf.int32)
    elapsed_steps = tf.cast(elapsed_steps, tf.int32)
    if not elapsed_steps.shape.is_compatible_with([self.num_envs]):
      raise ValueError(f"{self.label}: elapsed_steps must have shape "
                       f"[{self.num_envs}], got {elapsed_steps.shape}.")
    self.state.assign(states)
    self.elapsed_steps.assign(elapsed_steps)

  @autograph.as_written
  def _checked_action(self, action) -> tf.Tensor:
    """int32 `[num_envs]` (Discrete) or float32 `[num_envs, *shape]` (Box)."""
    action = tf.convert_to_tensor(action)
    discrete = isinstance(self.action_space, base.Discrete)
    if discrete and not action.dtype.is_integer:
      raise TypeError(f"{self.label}: action must be an integer tensor, got "
                      f"dtype {action.dtype.name}.")
    if not discrete and not action.dtype.is_floating:
      raise TypeError(f"{self.label}: action must be a float tensor, got "
                      f"dtype {action.dtype.name}.")
    shape = [self.num_envs] + ([] if discrete else
                               list(self.action_space.shape))
    if not action.shape.is_compatible_with(shape):
      raise ValueError(f"{self.label}: action must have shape "
                       f"[{', '.join(map(str, shape))}], got {action.shape}.")
    if not discrete:
      return tf.cast(action, tf.float32)
    return self._checked_range(action, self.action_space.num_actions)

  def _checked_range(self, action: tf.Tensor, num_actions: int) -> tf.Tensor:
    message = f"{self.label}: actions must be {_choices(num_actions)}"
    if tf.executing_eagerly():
      values = action.numpy()
      bad = values[(values < 0) | (values >= num_actions)]
      if bad.size:
        raise ValueError(f"{message}, got {bad.tolist()[:5]}.")
      return tf.cast(action, tf.int32)
    low = tf.cast(0, action.dtype)
    high = tf.cast(num_actions, action.dtype)
    checks = [
        tf.debugging.assert_greater_equal(action, low, message=message + "."),
        tf.debugging.assert_less(action, high, message=message + ".")]
    with tf.control_dependencies(checks):
      return tf.cast(tf.identity(action), tf.int32)

  @autograph.as_written
  def step(self, action: tf.Tensor) -> base.TimeStep:
    """Steps every environment; ended episodes restart in the same step.
    (A subclass's `_dynamics`, `_draw_states` and `_observe` may branch on
    tensors: AutoGraph rewrites them unless they are `as_written`.)"""
    user = autograph.as_user_code
    action = self._checked_action(action)
    reached, reward, terminated = user(self._dynamics)(self.state, action)
    elapsed = self.elapsed_steps + 1
    truncated = tf.logical_and(elapsed >= self.max_episode_steps,
                               tf.logical_not(terminated))
    done = tf.logical_or(terminated, truncated)
    fresh = user(self._draw_states)()
    self.state.assign(tf.where(done[:, None], fresh, reached))
    self.elapsed_steps.assign(tf.where(done, tf.zeros_like(elapsed), elapsed))
    return base.TimeStep(
        observation=self.observation(),
        reward=tf.cast(reward, tf.float32),
        terminated=terminated,
        truncated=truncated,
        final_observation=user(self._observe)(reached))

