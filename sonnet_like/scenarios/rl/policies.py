"""Actor outputs as tensorflow-probability distributions over an action space.

An actor is any module mapping observations `[batch, ...]` to `[batch, d]`:

- `Discrete(n)`: `d = n` logits, the policy is `tfd.Categorical(logits=...)`.
- `Box(low, high)` (one axis of size `k`): `d = k` means. The policy is a
  diagonal `tfd.Normal(mean, exp(log_std))` (wrapped in `tfd.Independent` so
  log-probabilities sum over the action axis) whose log standard deviation is
  a state-independent trainable variable owned by `Policy` (the scenario
  trains it with the actor and checkpoints it), starting at `log_std_init`.
  Sampled actions are kept unclipped for log-probabilities and updates; the
  environment gets them clipped to `[low, high]`.

Greedy actions (for evaluation) are the mode: the arg-max logit, or the mean
clipped to the box. Sampling draws only from the `tf.random.Generator` it is
given (the scenario's checkpointed `rng`), so runs resume exactly.

    >>> import tensorflow as tf, sonnet_like as snt
    >>> policy = Policy("PPO", snt.envs.Discrete(2))
    >>> policy.greedy(tf.constant([[0.0, 1.0], [2.0, 1.0]])).numpy()
    array([1, 0], dtype=int32)
"""

from typing import Any

import numpy as np
import tensorflow as tf
import tensorflow_probability as tfp

from sonnet_like.envs import base

tfd = tfp.distributions

ACTOR_OUTPUT_ERROR = (
    "{owner}: the actor must output [batch, {size}] {what} for {space}, got "
    "{got}. Give the actor's last layer {size} outputs.")

VALUE_OUTPUT_ERROR = (
    "{owner}: the {name} must output [batch] or [batch, 1] values, got "
    "{got}. Give its last layer a single output.")


def describe(space: base.ActionSpace) -> str:
  """A short name of an action space for messages: `Discrete(2)`, `Box(1,)`."""
  if isinstance(space, base.Discrete):
    return f"Discrete({space.num_actions})"
  return f"Box(shape={tuple(space.shape)})"


def _shape_text(shape: tf.TensorShape) -> str:
  dims = ["batch"] + [str(d) for d in shape.as_list()[1:]]
  return f"[{', '.join(dims)}]"


def values_of(owner: str, name: str, outputs: Any) -> tf.Tensor:
  """A value network's outputs as `[batch]`, refusing other shapes."""
  outputs = tf.convert_to_tensor(outputs)
  shape = outputs.shape
  if shape.rank == 2 and shape[1] == 1:
    return tf.cast(outputs[:, 0], tf.float32)
  if shape.rank == 1:
    return tf.cast(outputs, tf.float32)
  raise ValueError(VALUE_OUTPUT_ERROR.format(owner=owner, name=name,
                                             got=_shape_text(shape)))


class Policy(tf.Module):
  """Distributions, sampling and greedy actions for one action space.

  Args:
    owner: Named in error messages (the scenario, e.g. "PPO").
    action_space: `envs.Discrete` or a one-axis `envs.Box`.
    log_std_init: Initial log standard deviation of a Box policy.
  """

  def __init__(self, owner: str, action_space: base.ActionSpace,
               log_std_init: float = 0.0):
    super().__init__(name="policy")
    self.owner, self.action_space = owner, action_space
    if isinstance(action_space, base.Discrete):
      self.size, self.what = action_space.num_actions, "logits"
      self.log_std = None
    elif isinstance(action_space, base.Box):
      if len(action_space.shape) != 1:
        raise ValueError(f"{owner}: Box action spaces must have one axis, got "
                         f"shape {tuple(action_space.shape)}.")
      self.size, self.what = action_space.shape[0], "means"
      self.log_std = tf.Variable(
          np.full(action_space.shape, log_std_init, np.float32),
          name="log_std")
      self._low = tf.constant(action_space.low)
      self._high = tf.constant(action_space.high)
    else:
      raise TypeError(f"{owner}: the action space must be Discrete or Box, "
                      f"got {action_space!r}.")

  @property
  def is_discrete(self) -> bool:
    return self.log_std is None

  def check(self, outputs: Any) -> tf.Tensor:
    """The actor's outputs as float32, refusing a shape that does not fit."""
    outputs = tf.convert_to_tensor(outputs)
    shape = outputs.shape
    if shape.rank != 2 or shape[1] != self.size:
      raise ValueError(ACTOR_OUTPUT_ERROR.format(
          owner=self.owner, size=self.size, what=self.what,
          space=describe(self.action_space), got=_shape_text(shape)))
    return tf.cast(outputs, tf.float32)

  def distribution(self, outputs: Any) -> tfd.Distribution:
    """The policy for a batch of actor outputs."""
    outputs = self.check(outputs)
    if self.is_discrete:
      return tfd.Categorical(logits=outputs)
    scale = tf.exp(self.log_std) * tf.ones_like(outputs)
    return tfd.Independent(tfd.Normal(outputs, scale),
                           reinterpreted_batch_ndims=1)

  def sample(self, outputs: Any, rng: tf.random.Generator) -> tf.Tensor:
    """Samples one action per row from `rng` (unclipped for a Box)."""
    outputs = self.check(outputs)
    # A fresh key from `rng` for stateless ops: `Generator.from_seed(s)` starts
    # at counter s, so generators seeded 0 and 1 (the scenario's and an
    # environment's) give the same numbers one block apart; re-keying keeps
    # the policy's noise independent of an environment's draws.
    seed = rng.make_seeds(1)[:, 0]
    if self.is_discrete:
      # Gumbel-max: argmax(logits + Gumbel noise) ~ Categorical(logits).
      uniform = tf.random.stateless_uniform(tf.shape(outputs), seed,
                                            minval=1e-20, maxval=1.0)
      gumbel = -tf.math.log(-tf.math.log(uniform))
      return tf.argmax(outputs + gumbel, axis=-1, output_type=tf.int32)
    noise = tf.random.stateless_normal(tf.shape(outputs), seed)
    return outputs + tf.exp(self.log_std) * noise

  def to_env(self, actions: tf.Tensor) -> tf.Tensor:
    """What the environment gets: a Box's actions clipped to its bounds."""
    if self.is_discrete:
      return actions
    return tf.clip_by_value(actions, self._low, self._high)

  def greedy(self, outputs: Any) -> tf.Tensor:
    """The most likely action, ready for the environment."""
    outputs = self.check(outputs)
    if self.is_discrete:
      return tf.argmax(outputs, axis=-1, output_type=tf.int32)
    return self.to_env(outputs)
