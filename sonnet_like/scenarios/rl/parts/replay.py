"""`ReplayBuffer`: transitions of a batch of environments, in TF variables.

The buffer is a `tf.Module` whose storage, write position and size are
variables, so it is checkpointed with the run (a restored buffer holds the
same transitions and, from the same generator state, samples the same
batches) and `add`/`sample` can run inside a compiled step.

    >>> import tensorflow as tf
    >>> from sonnet_like.scenarios.rl.parts import replay
    >>> buffer = replay.ReplayBuffer(
    ...     8, tf.TensorSpec([2], tf.float32), tf.TensorSpec([], tf.int32))
    >>> buffer.add(replay.Transition(
    ...     observation=tf.zeros([3, 2]), action=tf.constant([0, 1, 1]),
    ...     reward=tf.ones([3]), next_observation=tf.ones([3, 2]),
    ...     terminated=tf.constant([False, False, True])))
    >>> int(buffer.size), int(buffer.position)
    (3, 3)
    >>> batch = buffer.sample(5, tf.random.Generator.from_seed(0))
    >>> batch.observation.shape.as_list()
    [5, 2]
"""

from typing import NamedTuple

import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import autograph
from sonnet_like.scenarios.compiled import carried

SHAPE_ERROR = (
    "ReplayBuffer: {field} must have shape [num_envs, {shape}] ({dtype}), got "
    "shape {got_shape} ({got_dtype}). Pass one transition per environment, "
    "with the leading axis over environments.")


class Transition(NamedTuple):
  """One step of a batch of environments (leading axis: environments).

  Attributes:
    observation: Where the step started.
    action: The action taken.
    reward: float32 rewards.
    next_observation: Where the step ended, before any reset (an environment's
      `final_observation`).
    terminated: bool; True when the episode reached a terminal state (no
      bootstrapping from `next_observation`). A time-limit truncation is not
      a termination.
  """
  observation: tf.Tensor
  action: tf.Tensor
  reward: tf.Tensor
  next_observation: tf.Tensor
  terminated: tf.Tensor


def _check_spec(name: str, spec) -> tf.TensorSpec:
  if not isinstance(spec, tf.TensorSpec) or not spec.shape.is_fully_defined():
    raise TypeError(f"ReplayBuffer: {name} must be a tf.TensorSpec with a "
                    f"fully defined shape, got {spec!r}.")
  return spec


class ReplayBuffer(tf.Module):
  """A ring buffer of `capacity` transitions, sampled uniformly.

  `add` writes one transition per environment at the write position and
  moves it on, wrapping around (the oldest transitions are overwritten once
  the buffer is full). `sample` draws uniformly, with replacement, among the
  stored transitions.

  Args:
    capacity: How many transitions the buffer holds.
    observation_spec: One environment's observation (shape and dtype).
    action_spec: One environment's action.
  """

  def __init__(self, capacity: int, observation_spec: tf.TensorSpec,
               action_spec: tf.TensorSpec, name: str = "replay_buffer"):
    super().__init__(name=name)
    arguments.check_positive_int("ReplayBuffer", "capacity", capacity)
    self.capacity = capacity
    self.observation_spec = _check_spec("observation_spec", observation_spec)
    self.action_spec = _check_spec("action_spec", action_spec)
    self.specs = Transition(
        observation=observation_spec, action=action_spec,
        reward=tf.TensorSpec([], tf.float32),
        next_observation=observation_spec,
        terminated=tf.TensorSpec([], tf.bool))
    with self.name_scope:
      # Written and read by rows (in a population, not copied each step).
      self.storage = Transition(*[
          carried.by_rows(tf.Variable(
              tf.zeros([capacity] + spec.shape.as_list(), spec.dtype),
              trainable=False, name=field))
          for field, spec in zip(Transition._fields, self.specs)])
      self.position = tf.Variable(0, dtype=tf.int64, trainable=False,
                                  name="position")
      self.size = tf.Variable(0, dtype=tf.int64, trainable=False, name="size")

  @autograph.as_written
  def _check(self, transition: Transition) -> tuple[Transition, int]:
    if not isinstance(transition, Transition):
      raise TypeError(f"ReplayBuffer: add takes a Transition, got "
                      f"{type(transition).__name__}.")
    num_envs = None
    checked = []
    for field, spec, value in zip(Transition._fields, self.specs, transition):
      value = tf.convert_to_tensor(value)
      shape = value.shape
      if (value.dtype != spec.dtype or shape.rank != spec.shape.rank + 1 or
          shape[1:] != spec.shape or shape[0] is None or
          (num_envs is not None and shape[0] != num_envs)):
        raise ValueError(SHAPE_ERROR.format(
            field=field, shape=", ".join(str(d) for d in spec.shape),
            dtype=spec.dtype.name, got_shape=shape.as_list(),
            got_dtype=value.dtype.name).replace(", ]", "]"))
      num_envs = shape[0]
      checked.append(value)
    if num_envs > self.capacity:
      raise ValueError(f"ReplayBuffer: capacity ({self.capacity}) must be at "
                       f"least num_envs, got a batch of {num_envs} "
                       "transitions.")
    return Transition(*checked), num_envs

  @autograph.as_written
  def add(self, transition: Transition) -> None:
    """Stores one transition per environment (eager or traced).

    Args:
      transition: A `Transition` whose fields have a leading axis of size
        `num_envs` (at most `capacity`) and the buffer's shapes and dtypes.
    """
    transition, num_envs = self._check(transition)
    index = (self.position + tf.range(num_envs, dtype=tf.int64)) % (
        self.capacity)
    # int32 indices: `tf.vectorized_map` (a population) cannot vectorise a
    # scatter with int64 ones.
    index = tf.cast(index, tf.int32)
    for variable, value in zip(self.storage, transition):
      carried.scatter(variable, index, value)
    self.position.assign((self.position + num_envs) % self.capacity)
    self.size.assign(tf.minimum(self.size + num_envs, self.capacity))

  @autograph.as_written
  def sample(self, batch_size: int, rng: tf.random.Generator) -> Transition:
    """`batch_size` stored transitions drawn uniformly, with replacement.

    Args:
      batch_size: How many transitions to draw.
      rng: The generator to draw from (a checkpointed one for exact resume).

    Returns:
      A `Transition` of tensors with leading axis `batch_size`. Sampling an
      empty buffer is an error (eagerly) or returns zeros (traced; callers
      check `size` first).
    """
    arguments.check_positive_int("ReplayBuffer", "batch_size", batch_size)
    if tf.executing_eagerly() and int(self.size) == 0:
      raise ValueError("ReplayBuffer: sample called on an empty buffer; add "
                       "transitions first.")
    high = tf.maximum(self.size, 1)
    index = rng.uniform([batch_size], minval=0, maxval=high, dtype=tf.int64)
    return Transition(*[carried.gather(variable, index)
                        for variable in self.storage])
