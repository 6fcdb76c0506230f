"""Collecting a rollout: `length` steps of a batch of environments.

`collect` is traced into the scenario's compiled step: a `tf.while_loop`
steps the environment with actions sampled from the current policy and
writes every step into `TensorArray`s, updating `EpisodeStats` on the way.
The result is time-major, `[T, num_envs, ...]`. With an in-graph
environment the loop is pure TensorFlow (XLA-compilable); a gymnasium one is
stepped through `tf.numpy_function` from the same loop.

    >>> import tensorflow as tf, sonnet_like as snt
    >>> from sonnet_like.scenarios.rl.parts import episodes
    >>> from sonnet_like.scenarios.rl.parts import policies
    >>> env = snt.envs.Guess(num_envs=2)
    >>> _ = env.reset(seed=0)
    >>> policy = policies.Policy("PPO", env.action_space)
    >>> actor = lambda obs: 20 * tf.concat([-obs, obs], axis=1)  # right
    >>> batch = collect(env, actor, policy, episodes.EpisodeStats(2),
    ...                 tf.random.Generator.from_seed(0), length=5)
    >>> batch.rewards.shape, float(tf.reduce_mean(batch.rewards)) > 0.8
    (TensorShape([5, 2]), True)
"""

from typing import Any, Callable, NamedTuple

import tensorflow as tf

from sonnet_like.core import autograph
from sonnet_like.envs import base
from sonnet_like.scenarios.compiled import carried
from sonnet_like.scenarios.rl.parts import episodes
from sonnet_like.scenarios.rl.parts import policies


class Rollout(NamedTuple):
  """What `collect` returns; every field time-major `[T, num_envs, ...]`.

  Attributes:
    observations: The observations the steps started from.
    actions: The sampled actions (unclipped for a Box).
    log_probs: Their log-probabilities under the policy that sampled them.
    rewards: float32 rewards.
    terminated: bool.
    truncated: bool.
    final_observations: What each step reached before any reset.
    last_observation: `[num_envs, ...]`, the observation after the last step.
  """
  observations: tf.Tensor
  actions: tf.Tensor
  log_probs: tf.Tensor
  rewards: tf.Tensor
  terminated: tf.Tensor
  truncated: tf.Tensor
  final_observations: tf.Tensor
  last_observation: tf.Tensor


def _flatten_one(x: tf.Tensor) -> tf.Tensor:
  shape = tf.shape(x)
  return tf.reshape(x, tf.concat([[shape[0] * shape[1]], shape[2:]], 0))


def flatten(x: Any) -> Any:
  """`[T, num_envs, ...]` -> `[T * num_envs, ...]`, for a tensor or for
  every tensor of a nest (a tuple of them: one call for a whole batch)."""
  return tf.nest.map_structure(_flatten_one, x)


def collect(env: base.Environment, actor: Callable[[tf.Tensor], Any],
            policy: policies.Policy, stats: episodes.EpisodeStats,
            rng: tf.random.Generator, length: int,
            owner: str | None = None,
            features: Callable[[tf.Tensor], Any] | None = None,
            check_steps: bool = True) -> Rollout:
  """Steps `env` `length` times with actions sampled from `actor`.

  Args:
    env: The environments, continuing from their current state.
    actor: Observations `[num_envs, ...]` -> the policy's parameters.
    policy: Turns the actor's outputs into distributions and actions.
    stats: Updated with every step.
    rng: The only source of randomness (the scenario's checkpointed one).
    length: Steps per environment (a Python int).
    owner: The scenario collecting, named in shape errors.
    features: For a gSDE policy: observations -> the features its noise
      multiplies (the actor's inputs).
    check_steps: Check the shapes of every observation and step
      (`base.checked`); False where `base.check_shapes` found them all
      known when traced, which checked them once for every step.

  Returns:
    A `Rollout`.
  """
  spec = env.observation_spec
  action_spec = env.action_space.spec
  n = env.num_envs

  def array(dtype, shape):
    return tf.TensorArray(dtype, size=length, element_shape=[n] + shape)

  arrays = (array(spec.dtype, spec.shape.as_list()),
            array(tf.int32 if policy.is_discrete else tf.float32,
                  action_spec.shape.as_list()),
            array(tf.float32, []), array(tf.float32, []),
            array(tf.bool, []), array(tf.bool, []),
            array(spec.dtype, spec.shape.as_list()))

  # A user's environment may branch on tensors: AutoGraph rewrites it.
  step, observe = (autograph.as_user_code(env.step),
                   autograph.as_user_code(env.observation))

  def body(t, observation, arrays):
    action, log_prob, env_action = policy.explore(
        actor(observation), rng,
        None if features is None else features(observation))
    timestep = step(env_action)
    if check_steps:
      timestep = base.checked_timestep(env, timestep, owner)
    stats.update(timestep)
    values = (observation, action, log_prob,
              tf.cast(timestep.reward, tf.float32), timestep.terminated,
              timestep.truncated, timestep.final_observation)
    arrays = tuple(a.write(t, tf.ensure_shape(v, a.element_shape))
                   for a, v in zip(arrays, values))
    next_observation = tf.ensure_shape(
        tf.cast(timestep.observation, spec.dtype), observation.shape)
    return t + 1, next_observation, arrays

  first = observe()
  if check_steps:
    first = base.checked(env, first, "observation", "observation()", owner)
  first = tf.cast(first, spec.dtype)
  # In a population the loop carries the member's environment, statistics
  # and generator (`control_flow`); alone it is `tf.while_loop`.
  _, last, arrays = carried.while_loop(
      lambda t, *_: t < length, body, (tf.constant(0), first, arrays),
      maximum_iterations=length)
  stacked = [a.stack() for a in arrays]
  return Rollout(*stacked, last_observation=last)
