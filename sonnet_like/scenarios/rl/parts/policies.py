"""Actor outputs as tensorflow-probability distributions over an action space.

An actor is any module mapping observations `[batch, ...]` to `[batch, d]`:

- `Discrete(n)`: `d = n` logits, the policy is `tfd.Categorical(logits=...)`.
- `Box(low, high)` (one axis of size `k`): a diagonal Gaussian over a raw
  action `u`, `tfd.Normal(mean, exp(log_std))` (wrapped in `tfd.Independent`
  so log-probabilities sum over the action axis). Its log standard deviation
  is either
  - state-independent (the default): a trainable variable owned by `Policy`
    (the scenario trains it with the actor and checkpoints it), starting at
    `log_std_init`; the actor outputs `d = k` means; or
  - state-dependent (`state_dependent_std=True`): the actor outputs
    `d = 2k` values, the means then the log standard deviations (plus
    `log_std_init`, clipped to `[LOG_STD_MIN, LOG_STD_MAX]`).

  What the environment gets from `u` (`to_env`): without squashing, `u`
  clipped to `[low, high]`; with `squash=True`, `low + (tanh(u) + 1) / 2 *
  (high - low)`, always inside the bounds. Sampled actions are kept raw for
  log-probabilities and updates.

Log-probabilities and entropies: `distribution(outputs)` is the Gaussian
over `u`, which is all a policy gradient needs (a squashing's Jacobian does
not depend on the policy's parameters, so it cancels in PPO's ratios and
REINFORCE's gradients). `log_prob(outputs, u)` is the density of the action
the environment gets: for a squashed policy the Gaussian's minus `sum(log(
(high - low) / 2 * (1 - tanh(u)**2)))`, as SAC needs. `entropy(outputs, u)`
is exact for a Gaussian (clipping aside) and, for a squashed policy (whose
entropy has no closed form), the one-sample estimate `-log_prob(outputs, u)`
at the given actions.

Generalised state-dependent exploration (gSDE, Raffin et al. 2021;
`sde_sample_freq=k`): instead of fresh noise at every step, each
environment `i` holds a noise matrix `W_i` `[f, k]` drawn from
`N(0, sigma^2)`, `sigma = exp(log_std)` a trained `[f, k]` variable, and
explores with `u = mean + features @ W_i`, where `features` `[batch, f]`
are what the actor saw (the network inputs: observations, normalised if
the scenario normalises them; no gradient flows into them). The
exploration is then smooth in the state and consistent between steps.
The matrices are drawn again every `k` calls of `explore` (counted across
rollouts), from the scenario's `rng`; matrices and count are variables, so
checkpointed. The policy over `u` is the Gaussian with per-action variance
`sum_j features_j^2 * sigma_jk^2` (plus `SDE_EPSILON`), which gives the
log-probabilities and entropies.

Greedy actions (for evaluation) are the mode: the arg-max logit, or the mean
sent through `to_env`. Sampling draws only from the `tf.random.Generator` it
is given (the scenario's checkpointed `rng`), so runs resume exactly; a Box
sample is `mean + std * noise`, differentiable in the actor's outputs (the
reparameterisation SAC uses).

    >>> import tensorflow as tf, sonnet_like as snt
    >>> policy = Policy("PPO", snt.envs.Discrete(2))
    >>> policy.greedy(tf.constant([[0.0, 1.0], [2.0, 1.0]])).numpy()
    array([1, 0], dtype=int32)
    >>> box = snt.envs.Box([-2.0], [2.0])
    >>> squashed = Policy("SAC", box, state_dependent_std=True, squash=True)
    >>> squashed.size   # A mean and a log-std per action.
    2
    >>> squashed.greedy(tf.constant([[0.0, -1.0], [100.0, -1.0]])).numpy()
    array([[0.],
           [2.]], dtype=float32)
"""

import math
from typing import Any, Callable

import numpy as np
import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import generator
from sonnet_like.envs import base


def _distributions() -> Any:
  """`tfp.distributions`, imported on first use: TFP takes seconds to import
  and only the policy-gradient scenarios need it."""
  import tensorflow_probability as tfp  # pylint: disable=g-import-not-at-top
  return tfp.distributions


ACTOR_OUTPUT_ERROR = (
    "{owner}: the actor must output [batch, {size}] {what} for {space}, got "
    "{got}. Give the actor's last layer {size} outputs.")

LOG_STD_MIN, LOG_STD_MAX = -5.0, 2.0

SDE_EPSILON = 1e-6  # Added to gSDE's variances.

SDE_FEATURES_ERROR = (
    "{owner}: gSDE exploration needs the actor's inputs as features, "
    "[batch, {size}], got {got}. Pass features= (the observations the actor "
    "saw).")

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
    log_std_init: Initial log standard deviation of a Box policy (added to
      the actor's log-std outputs when they are state-dependent).
    state_dependent_std: A Box policy's log standard deviations come from
      the actor (`2k` outputs) instead of a variable.
    squash: A Box policy's actions go through `tanh`, scaled to the bounds.
    sde_sample_freq: None, or gSDE exploration (see the module docstring)
      whose noise matrices are drawn again every this many `explore` calls.
    sde_features: gSDE: the size `f` of the features (the actor's inputs,
      one axis).
    sde_batch: gSDE: how many environments explore, each with its matrix.
    build: Make the variables (`log_std`, gSDE's noise) now; False leaves
      them to `build()` (a scenario's build, so that each member of a
      population makes its own).
  """

  def __init__(self, owner: str, action_space: base.ActionSpace,
               log_std_init: float = 0.0, *,
               state_dependent_std: bool = False, squash: bool = False,
               sde_sample_freq: int | None = None, sde_features: int = 0,
               sde_batch: int = 0, build: bool = True):
    super().__init__(name="policy")
    self.owner, self.action_space = owner, action_space
    for name, value in (("state_dependent_std", state_dependent_std),
                        ("squash", squash)):
      if not isinstance(value, bool):
        raise ValueError(f"{owner}: {name} must be a bool, got {value!r}.")
    if sde_sample_freq is not None:
      arguments.check_positive_int(owner, "sde_sample_freq", sde_sample_freq)
      arguments.check_positive_int(owner, "sde_features", sde_features)
      arguments.check_positive_int(owner, "sde_batch", sde_batch)
    self.log_std = None
    self._log_std_shape, self._sde_batch = None, sde_batch
    self.state_dependent_std, self.squash = state_dependent_std, squash
    self.sde_sample_freq = sde_sample_freq
    self.log_std_init = float(log_std_init)
    if isinstance(action_space, base.Discrete):
      if state_dependent_std or squash:
        raise ValueError(f"{owner}: state_dependent_std and squash are for "
                         f"Box actions, got {describe(action_space)}.")
      if sde_sample_freq is not None:
        raise ValueError(f"{owner}: gSDE (sde_sample_freq) is for Box "
                         f"actions, got {describe(action_space)}.")
      self.size, self.what = action_space.num_actions, "logits"
    elif isinstance(action_space, base.Box):
      if len(action_space.shape) != 1:
        raise ValueError(f"{owner}: Box action spaces must have one axis, got "
                         f"shape {tuple(action_space.shape)}.")
      self.num_actions = action_space.shape[0]
      if state_dependent_std and sde_sample_freq is not None:
        raise ValueError(f"{owner}: state_dependent_std and gSDE "
                         "(sde_sample_freq) are two kinds of state-dependent "
                         "noise; choose one.")
      if sde_sample_freq is not None:
        self.size, self.what = self.num_actions, "means"
        self._log_std_shape = [sde_features, self.num_actions]
      elif state_dependent_std:
        self.size = 2 * self.num_actions
        self.what = "means then log standard deviations"
      else:
        self.size, self.what = self.num_actions, "means"
        self._log_std_shape = list(action_space.shape)
      self._low = tf.constant(action_space.low)
      self._high = tf.constant(action_space.high)
      self._center = (self._low + self._high) / 2
      self._half = (self._high - self._low) / 2
    else:
      raise TypeError(f"{owner}: the action space must be Discrete or Box, "
                      f"got {action_space!r}.")
    self._discrete = isinstance(action_space, base.Discrete)
    if build:
      self.build()

  @property
  def has_log_std(self) -> bool:
    """Whether this policy trains a `log_std` (made by `build`)."""
    return self._log_std_shape is not None

  def build(self) -> None:
    """Makes `log_std` (and gSDE's noise matrices) if this policy has them
    and they are not made yet. A scenario whose policy is made with
    `build=False` calls it from its own `build()`, so that a population's
    members each make their own."""
    if self._log_std_shape is None or self.log_std is not None:
      return
    shape = self._log_std_shape
    self.log_std = tf.Variable(np.full(shape, self.log_std_init, np.float32),
                               name="log_std")
    if self.uses_sde:
      self.sde_noise = tf.Variable(
          np.zeros([self._sde_batch] + shape, np.float32), trainable=False,
          name="sde_noise")
      self.sde_steps = tf.Variable(0, dtype=tf.int64, trainable=False,
                                   name="sde_steps")

  @property
  def is_discrete(self) -> bool:
    return self._discrete

  @property
  def uses_sde(self) -> bool:
    """Whether this policy explores with gSDE (`sde_sample_freq`)."""
    return self.sde_sample_freq is not None

  @property
  def exports_sampling(self) -> bool:
    """Whether `snt.export.save_policy`'s "sample" signature (mean plus
    `exp(log_std)` noise, clipped) draws from this policy."""
    return self.is_discrete or not (self.state_dependent_std or self.squash
                                    or self.uses_sde)

  def check(self, outputs: Any) -> tf.Tensor:
    """The actor's outputs as float32, refusing a shape that does not fit."""
    outputs = tf.convert_to_tensor(outputs)
    shape = outputs.shape
    if shape.rank != 2 or shape[1] != self.size:
      raise ValueError(ACTOR_OUTPUT_ERROR.format(
          owner=self.owner, size=self.size, what=self.what,
          space=describe(self.action_space), got=_shape_text(shape)))
    return tf.cast(outputs, tf.float32)

  def _features(self, features: Any) -> tf.Tensor:
    """gSDE's features as float32 `[batch, f]`, without gradient."""
    f = self.log_std.shape[0]
    shape = None if features is None else tf.convert_to_tensor(
        features).shape
    if shape is None or shape.rank != 2 or shape[1] != f:
      raise ValueError(SDE_FEATURES_ERROR.format(
          owner=self.owner, size=f,
          got="None" if shape is None else _shape_text(shape)))
    return tf.stop_gradient(tf.cast(features, tf.float32))

  def mean_and_log_std(self, outputs: Any, features: Any = None
                       ) -> tuple[tf.Tensor, tf.Tensor]:
    """A Box policy's Gaussian over raw actions, `[batch, k]` each
    (gSDE needs the `features` its noise multiplies)."""
    outputs = self.check(outputs)
    if self.uses_sde:
      variance = tf.matmul(tf.square(self._features(features)),
                           tf.exp(2.0 * self.log_std))
      return outputs, 0.5 * tf.math.log(variance + SDE_EPSILON)
    if not self.state_dependent_std:
      return outputs, self.log_std * tf.ones_like(outputs)
    mean, log_std = tf.split(outputs, 2, axis=1)
    log_std = tf.clip_by_value(log_std + self.log_std_init, LOG_STD_MIN,
                               LOG_STD_MAX)
    return mean, log_std

  def distribution(self, outputs: Any, features: Any = None) -> Any:
    """The policy for a batch of actor outputs (over raw actions; gSDE
    needs the `features`)."""
    if self.is_discrete:
      return _distributions().Categorical(logits=self.check(outputs))
    mean, log_std = self.mean_and_log_std(outputs, features)
    tfd = _distributions()
    return tfd.Independent(tfd.Normal(mean, tf.exp(log_std)),
                           reinterpreted_batch_ndims=1)

  def log_prob(self, outputs: Any, actions: tf.Tensor, features: Any = None
               ) -> tf.Tensor:
    """`[batch]` log-density of what the environment gets from `actions`
    (raw actions, as `sample` returns them)."""
    log_prob = self.distribution(outputs, features).log_prob(actions)
    if self.is_discrete or not self.squash:
      return log_prob
    # log(1 - tanh(u)^2) = 2 (log 2 - u - softplus(-2u)), stable for large u.
    log_jacobian = tf.math.log(self._half) + 2.0 * (
        math.log(2.0) - actions - tf.nn.softplus(-2.0 * actions))
    return log_prob - tf.reduce_sum(log_jacobian, axis=-1)

  def entropy(self, outputs: Any, actions: tf.Tensor | None = None,
              features: Any = None) -> tf.Tensor:
    """`[batch]` entropies: exact, or `-log_prob(outputs, actions)` for a
    squashed policy (which needs `actions`, e.g. the ones sampled)."""
    if self.is_discrete or not self.squash:
      return self.distribution(outputs, features).entropy()
    if actions is None:
      raise ValueError(f"{self.owner}: a squashed policy's entropy is "
                       "estimated at sampled actions; pass actions=...")
    return -self.log_prob(outputs, actions, features)

  def sample(self, outputs: Any, rng: tf.random.Generator,
             features: Any = None) -> tf.Tensor:
    """Samples one raw action per row from `rng` (see `to_env`); with gSDE
    fresh noise of the same distribution (`explore` uses the matrices)."""
    outputs = self.check(outputs)
    # A fresh key from `rng` for stateless ops: `Generator.from_seed(s)` starts
    # at counter s, so generators seeded 0 and 1 (the scenario's and an
    # environment's) give the same numbers one block apart; re-keying keeps
    # the policy's noise independent of an environment's draws.
    seed = rng.make_seeds(1)[:, 0]
    if self.is_discrete:
      # Gumbel-max: argmax(logits + Gumbel noise) ~ Categorical(logits).
      # TensorFlow's ops, once per member in a population (`generator`).
      uniform = generator.stateless_uniform(tf.shape(outputs), seed,
                                            minval=1e-20, maxval=1.0)
      gumbel = -tf.math.log(-tf.math.log(uniform))
      return tf.argmax(outputs + gumbel, axis=-1, output_type=tf.int32)
    mean, log_std = self.mean_and_log_std(outputs, features)
    noise = generator.stateless_normal(tf.shape(mean), seed)
    return mean + tf.exp(log_std) * noise

  def skip_sample(self, rng: tf.random.Generator) -> None:
    """Moves `rng` as `sample` without gSDE does, drawing nothing."""
    rng.skip(1)  # `sample`'s `rng.make_seeds(1)` reads one int64.

  def _sde_sample(self, outputs: Any, rng: tf.random.Generator,
                  features: Any) -> tf.Tensor:
    """gSDE: `mean + features @ W_i`, the matrices drawn again first when
    `sde_steps` is a multiple of `sde_sample_freq`."""
    outputs, features = self.check(outputs), self._features(features)
    seed = rng.make_seeds(1)[:, 0]  # Every call: the rng moves evenly.
    fresh = tf.equal(self.sde_steps % self.sde_sample_freq, 0)
    noise = tf.where(fresh, generator.stateless_normal(
        tf.shape(self.sde_noise), seed) * tf.exp(self.log_std)[None],
                     self.sde_noise)
    with tf.control_dependencies([self.sde_noise.assign(noise),
                                  self.sde_steps.assign_add(1)]):
      return outputs + tf.einsum("bf,bfk->bk", features, noise)

  def explore(self, outputs: Any, rng: tf.random.Generator,
              features: Any = None
              ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
    """What a rollout step needs, in one call: a raw action sampled from
    `rng` (`sample`, or gSDE's matrices), its log-probability under
    `distribution(outputs)` and the action for the environment
    (`to_env`)."""
    if self.uses_sde:
      action = self._sde_sample(outputs, rng, features)
    else:
      action = self.sample(outputs, rng)
    log_prob = self.distribution(outputs, features).log_prob(action)
    return action, log_prob, self.to_env(action)

  def evaluate(self, outputs: Any, actions: tf.Tensor, features: Any = None
               ) -> tuple[tf.Tensor, tf.Tensor]:
    """What a policy-gradient update needs, in one call: `[batch]`
    log-probabilities of the raw `actions` under `distribution(outputs)`
    and `[batch]` entropies (`entropy(outputs, actions)`)."""
    log_prob = self.distribution(outputs, features).log_prob(actions)
    return log_prob, self.entropy(outputs, actions, features)

  def to_env(self, actions: tf.Tensor) -> tf.Tensor:
    """What the environment gets: a Box's raw actions clipped to its bounds,
    or squashed into them."""
    if self.is_discrete:
      return actions
    if self.squash:
      return self._center + self._half * tf.tanh(actions)
    return tf.clip_by_value(actions, self._low, self._high)

  def greedy(self, outputs: Any) -> tf.Tensor:
    """The most likely action, ready for the environment."""
    if self.is_discrete:
      return tf.argmax(self.check(outputs), axis=-1, output_type=tf.int32)
    outputs = self.check(outputs)
    if self.state_dependent_std:
      outputs = tf.split(outputs, 2, axis=1)[0]
    return self.to_env(outputs)  # The mean.

  def act(self, actor: Callable[[tf.Tensor], Any], observation: Any,
          spec: tf.TensorSpec, greedy: bool = True,
          rng: tf.random.Generator | None = None,
          features: Callable[[tf.Tensor], Any] | None = None) -> tf.Tensor:
    """Actions for the environment from raw observations.

    Args:
      actor: A batch of observations -> this policy's outputs.
      observation: One observation (`spec.shape`) or a batch `[batch, ...]`.
      spec: The environment's observation spec.
      greedy: The most likely action; False samples from `rng`.
      rng: The generator to sample from.
      features: gSDE: a batch of observations -> the features (see
        `sample`).

    Returns:
      One action or a batch, as the environment takes them.
    """
    observation = tf.convert_to_tensor(observation, spec.dtype)
    single = observation.shape.rank == spec.shape.rank
    if single:
      observation = observation[None]
    outputs = actor(observation)
    if greedy:
      action = self.greedy(outputs)
    else:
      action = self.to_env(self.sample(
          outputs, rng, None if features is None else features(observation)))
    return action[0] if single else action


class GreedyActor(tf.Module):
  """An actor whose outputs are its policy's greedy actions, for
  `snt.export.save_policy` with policies it cannot sample from itself
  (state-dependent std, squashing): already inside the box, so the export's
  clipping leaves them as they are."""

  def __init__(self, actor: Any, policy: Policy):
    super().__init__(name="greedy_actor")
    self.actor, self.policy = actor, policy

  def __call__(self, observation: tf.Tensor) -> tf.Tensor:
    return self.policy.greedy(self.actor(observation))
