"""`save_policy`: an RL policy as a SavedModel that acts.

Signatures (inputs and outputs by name):

- "serving_default": `observation` `[batch, ...]` -> `action`, the greedy
  action: the arg-max logit (int32) for discrete actions, the mean clipped
  to the box for continuous ones.
- "sample" (unless `sampling=False`): `observation`, `seed` (int64 scalar)
  -> `action` drawn from the policy: Gumbel-max over the logits, or the
  mean plus `exp(log_std)` times normal noise, clipped to the box. The same
  seed and observations give the same actions.

The action space is described as in `snt.envs`: anything with
`num_actions` (`Discrete`) or with `low` and `high` arrays (`Box`, one
axis).

    >>> import tempfile, numpy as np, sonnet_like as snt, tensorflow as tf
    >>> actor = snt.Linear(2, name="actor")
    >>> path = snt.export.save_policy(actor, tempfile.mkdtemp() + "/policy",
    ...                               tf.TensorSpec([4]), snt.envs.Discrete(2))
    >>> act = tf.saved_model.load(path).signatures["serving_default"]
    >>> act(observation=tf.zeros([3, 4]))["action"].numpy()
    array([0, 0, 0], dtype=int32)
"""

import os
from typing import Any, Callable

import numpy as np
import tensorflow as tf

from sonnet_like.export import module as module_lib
from sonnet_like.export import signatures as signatures_lib

ACTION_SPACE_ERROR = (
    "save_policy: action_space must have num_actions (like snt.envs.Discrete)"
    " or low and high arrays with one axis (like snt.envs.Box), got {space!r}.")

ACTOR_OUTPUT_ERROR = (
    "save_policy: the actor must output [batch, {size}] {what}, got shape "
    "{shape}.")


class _Space:
  """The maths of greedy and sampled actions for one action space."""

  def __init__(self, space: Any, log_std: Any):
    self.num_actions = getattr(space, "num_actions", None)
    if self.num_actions is not None:
      self.size, self.what = int(self.num_actions), "logits"
      return
    low, high = getattr(space, "low", None), getattr(space, "high", None)
    if low is None or high is None or np.ndim(low) != 1:
      raise TypeError(ACTION_SPACE_ERROR.format(space=space))
    self.low = tf.constant(np.asarray(low, np.float32))
    self.high = tf.constant(np.asarray(high, np.float32))
    self.size, self.what = int(np.shape(low)[0]), "means"
    self.log_std = log_std

  def check(self, outputs: Any) -> tf.Tensor:
    outputs = tf.convert_to_tensor(outputs)
    if outputs.shape.rank != 2 or outputs.shape[1] != self.size:
      raise ValueError(ACTOR_OUTPUT_ERROR.format(
          size=self.size, what=self.what, shape=outputs.shape))
    return tf.cast(outputs, tf.float32)

  def greedy(self, outputs: tf.Tensor) -> tf.Tensor:
    if self.num_actions is not None:
      return tf.argmax(outputs, axis=-1, output_type=tf.int32)
    return tf.clip_by_value(outputs, self.low, self.high)

  def sample(self, outputs: tf.Tensor, seed: tf.Tensor) -> tf.Tensor:
    key = tf.stack([tf.cast(seed, tf.int64), tf.constant(0, tf.int64)])
    if self.num_actions is not None:
      # Gumbel-max: argmax(logits + Gumbel noise) ~ Categorical(logits).
      uniform = tf.random.stateless_uniform(tf.shape(outputs), key,
                                            minval=1e-20, maxval=1.0)
      gumbel = -tf.math.log(-tf.math.log(uniform))
      return tf.argmax(outputs + gumbel, axis=-1, output_type=tf.int32)
    noise = tf.random.stateless_normal(tf.shape(outputs), key)
    scale = tf.exp(tf.cast(self.log_std, tf.float32))
    return tf.clip_by_value(outputs + scale * noise, self.low, self.high)


def save_policy(actor: Callable[..., Any], directory: str | os.PathLike,
                observation_spec: tf.TensorSpec, action_space: Any, *,
                log_std: Any = None, sampling: bool = True,
                preprocess: Callable[[tf.Tensor], tf.Tensor] | None = None
                ) -> str:
  """Writes a policy's greedy (and sampled) actions; returns the path.

  Args:
    actor: Maps observations `[batch, ...]` to logits `[batch, n]`
      (discrete actions; a Q-network's values work the same for greedy
      actions) or means `[batch, k]` (a box of k actions); called with
      `is_training=False` where it takes it.
    directory: Folder to write; an earlier export there is replaced.
    observation_spec: One observation's spec, without the batch dimension
      (an environment's `observation_spec`).
    action_space: `snt.envs.Discrete(n)` or a one-axis `snt.envs.Box`.
    log_std: The log standard deviation of a box policy (a variable or
      array of k values); needed to sample box actions.
    sampling: Also write the "sample" signature.
    preprocess: Applied to observations before the actor, e.g. the
      observation normalisation the policy trained with.

  Returns:
    `directory` as a string.
  """
  if not callable(actor):
    raise TypeError(f"save_policy: actor must be callable, got {actor!r}.")
  if preprocess is not None and not callable(preprocess):
    raise TypeError(f"save_policy: preprocess must be callable or None, got "
                    f"{preprocess!r}.")
  if not isinstance(observation_spec, tf.TensorSpec):
    raise TypeError(f"save_policy: observation_spec must be a tf.TensorSpec "
                    f"of one observation, got {observation_spec!r}.")
  space = _Space(action_space, log_std)
  if sampling and space.num_actions is None and log_std is None:
    raise ValueError("save_policy: sampling box actions needs log_std=...; "
                     "pass the policy's log standard deviation or "
                     "sampling=False.")
  batch = tf.TensorSpec([None] + observation_spec.shape.as_list(),
                        observation_spec.dtype)

  def outputs_of(observation):
    if preprocess is not None:
      observation = preprocess(observation)
    return space.check(module_lib.call_for_inference(actor, observation))

  def greedy(observation):
    return space.greedy(outputs_of(observation))

  def sample(inputs):
    return space.sample(outputs_of(inputs["observation"]), inputs["seed"])

  signatures = {"serving_default": signatures_lib.Signature(
      greedy, batch, input_name="observation", output_name="action")}
  if sampling:
    signatures["sample"] = signatures_lib.Signature(
        sample, {"observation": batch, "seed": tf.TensorSpec([], tf.int64)},
        batched=False, output_name="action")  # The batch is None already.
  trackables = [m for m in (actor, preprocess) if isinstance(m, tf.Module)]
  return signatures_lib.save(directory, signatures, trackables=trackables,
                             owner="save_policy")
