"""`OnPolicy`: what REINFORCE and PPO share on top of the engine.

One engine step is one rollout of `rollout_length` steps of `num_envs`
environments plus the update(s) made from it, all inside one compiled call,
so `num_steps = ceil(num_env_steps / (num_envs * rollout_length))` and
`eval_every`, `save_every`, `log_every` and `steps_per_call` count such
iterations. The policy (an actor module and a `policies.Policy`) and a value
module are trained by one optimizer on the sum of the losses.

Environments are made and checked as `rl.environments` says (reset with the
scenario's seed). Evaluation plays the greedy policy for `eval_episodes`
whole episodes in `eval_env`.

The checkpoint holds the actor, the value module, the optimizer, the policy's
log-std (Box actions with a state-independent std), the episode statistics,
the observation and reward statistics (PPO's `normalize_observations`,
`scale_rewards`) and, for an in-graph environment, its state: a killed run
resumes exactly. A gymnasium
environment's state lives in Python and is not checkpointed (a resumed run
starts new episodes there).

RL scenarios run under the default strategy only: a multi-replica strategy
would need one batch of environments per replica.
"""

import math
from typing import Any, Callable, NamedTuple

import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import autograph
from sonnet_like import export as export_lib
from sonnet_like.envs import base
from sonnet_like.scenarios import engine
from sonnet_like.scenarios.rl.parts import environments
from sonnet_like.scenarios.rl.parts import episodes
from sonnet_like.scenarios.rl.parts import normalization
from sonnet_like.scenarios.rl.parts import policies
from sonnet_like.scenarios.rl.parts import rollout
from sonnet_like.scenarios.rl.parts import shared_torso


class Experience(NamedTuple):
  """One rollout ready for the updates, with what the critic says of it
  (`OnPolicy.experience`).

  Attributes:
    rollout: The `rollout.Rollout`, time-major `[T, num_envs, ...]`.
    inputs: `[T * num_envs, ...]`, its observations as the networks see
      them (normalised, if asked), flattened.
    actions: `[T * num_envs, ...]`, its actions, flattened.
    log_probs: `[T * num_envs]`, their log-probabilities, flattened.
    values: `[T, num_envs]` values of the observations.
    final_values: `[T, num_envs]` values of the final observations.
    last_value: `[num_envs]` value of the observation after the last step.
  """
  rollout: rollout.Rollout
  inputs: tf.Tensor
  actions: tf.Tensor
  log_probs: tf.Tensor
  values: tf.Tensor
  final_values: tf.Tensor
  last_value: tf.Tensor


class OnPolicy(engine.Scenario):
  """Base class of REINFORCE and PPO (see the module docstring).

  Args:
    num_env_steps: Environment steps to train for (rounded up to whole
      rollouts).
    num_envs: Environments stepped together.
    rollout_length: Steps per environment and rollout.
    eval_episodes: Episodes per greedy evaluation.
    log_std_init: Initial log standard deviation of a Box policy.
    state_dependent_std: A Box policy's log-stds are outputs of the actor
      (which then outputs `2k` values: means, then log-stds) rather than a
      trained variable (see `policies.Policy`).
    squash: A Box policy's actions are `tanh`-squashed into the bounds
      rather than clipped.
    sde_sample_freq: None (fresh Gaussian noise every step), or explore a
      Box policy with gSDE (`policies`' module docstring): noise linear in
      the actor's inputs, its matrices drawn again every this many steps.
      The policy's log-std is then a `[observation size, k]` variable.
    log_every: Record logs every this many rollouts.
    **kwargs: Loop settings of `Scenario` (eval_every, save_every, save_dir,
      steps_per_call, jit_compile, on_nonfinite, clip_norm, seed, hooks,
      progress, ...), counted in rollouts.
  """

  actor_name, critic_name = "actor", "critic"
  # Set by subclasses that offer them (PPO).
  normalize_observations, scale_rewards, gamma = False, False, 0.99

  def __init__(self, num_env_steps: int, *, num_envs: int,
               rollout_length: int, eval_episodes: int = 100,
               log_std_init: float = 0.0, state_dependent_std: bool = False,
               squash: bool = False, sde_sample_freq: int | None = None,
               log_every: int = 10, **kwargs):
    owner = type(self).__name__
    arguments.check_positive_int(owner, "num_env_steps", num_env_steps)
    arguments.check_positive_int(owner, "num_envs", num_envs)
    arguments.check_positive_int(owner, "rollout_length", rollout_length)
    arguments.check_positive_int(owner, "eval_episodes", eval_episodes)
    if isinstance(log_std_init, bool) or not isinstance(
        log_std_init, (int, float)) or not math.isfinite(log_std_init):
      raise ValueError(f"{owner}: log_std_init must be a finite number, got "
                       f"{log_std_init!r}.")
    if sde_sample_freq is not None:
      arguments.check_positive_int(owner, "sde_sample_freq", sde_sample_freq)
    for name, value in (("state_dependent_std", state_dependent_std),
                        ("squash", squash)):
      if not isinstance(value, bool):
        raise ValueError(f"{owner}: {name} must be a bool, got {value!r}.")
    steps = -(-num_env_steps // (num_envs * rollout_length))
    super().__init__(steps, log_every=log_every, **kwargs)
    environments.check_strategy(owner, self.strategy)
    self.num_env_steps, self.num_envs = num_env_steps, num_envs
    self.rollout_length, self.eval_episodes = rollout_length, eval_episodes
    self.log_std_init = float(log_std_init)
    self.state_dependent_std, self.squash = state_dependent_std, squash
    self.sde_sample_freq = sde_sample_freq
    self.normalizer: normalization.ObservationNormalizer | None = None
    self.reward_scaler: normalization.RewardScaler | None = None
    self._evaluation: environments.GreedyEvaluation | None = None

  def _setup(self, actor: Any, critic: Any, optimizer: Any, env: Any,
             eval_env: Any) -> None:
    """Checks and stores the call's arguments; makes the environments."""
    owner = type(self).__name__
    for name, module in ((self.actor_name, actor), (self.critic_name, critic)):
      arguments.check_module(owner, name, module)
    self.check_optimizer(optimizer)
    self.actor, self.critic, self.optimizer = actor, critic, optimizer
    self.env = environments.make_env(owner, env, self.num_envs, self.seed)
    self.eval_env = environments.make_eval_env(
        owner, env, self.env, eval_env, eval_episodes=self.eval_episodes,
        eval_every=self.eval_every, seed=self.seed + 1)
    spec = self.env.observation_spec
    if self.sde_sample_freq is not None and spec.shape.rank != 1:
      raise ValueError(f"{owner}: gSDE (sde_sample_freq) takes observations "
                       f"with one axis as its features, got shape "
                       f"{spec.shape.as_list()}.")
    self.policy = policies.Policy(
        owner, self.env.action_space, self.log_std_init,
        state_dependent_std=self.state_dependent_std, squash=self.squash,
        sde_sample_freq=self.sde_sample_freq,
        sde_features=spec.shape[0] if spec.shape.rank == 1 else 0,
        sde_batch=self.num_envs, build=False)  # Its variables: `build`.
    self.normalizer = (normalization.ObservationNormalizer(
        self.env.observation_spec.shape) if self.normalize_observations
                       else None)
    self.reward_scaler = (normalization.RewardScaler(
        self.env.num_envs, self.gamma) if self.scale_rewards else None)
    self.stats = episodes.EpisodeStats(self.num_envs)
    self._evaluation = None
    self._variables: list[tf.Variable] = []
    self._check_steps = True  # Until `build` finds every shape static.

  # ---- Engine interface. ----

  def models(self):
    named = {self.actor_name: self.actor, self.critic_name: self.critic}
    if self.policy.has_log_std:
      named["log_std"] = self.policy
    return named

  def trackables(self):
    # The environment too (a gymnasium one holds no variables): each copy
    # of a run (a population's member) has its own.
    named = dict(self.models(), optimizer=self.optimizer, env=self.env,
                 episode_stats=self.stats)
    if self.normalizer is not None:
      named["observation_normalizer"] = self.normalizer
    if self.reward_scaler is not None:
      named["reward_scaler"] = self.reward_scaler
    return named

  def build(self):
    observation = self.env.reset(seed=self.seed)
    self._check_steps = not base.check_shapes(self.env, type(self).__name__)
    self.policy.build()
    self.policy.check(self.actor_outputs(observation))
    self.critic_values(observation)
    self._variables = self.trainable_variables()
    self.build_optimizer(self.optimizer, self._variables)

  def evaluate_now(self):
    if self.eval_env is None:
      return None
    if self._evaluation is None:
      self._evaluation = environments.GreedyEvaluation(
          self.eval_env, lambda obs: self.policy.greedy(
              self.actor_outputs(obs)), self.eval_episodes)
    return self._evaluation(seed=self.seed + 1 + self.step)

  # ---- Shared parts of the train steps. ----

  # The networks as the step calls them (as `self.forward` does: in
  # float32 the modules themselves), rewritten by AutoGraph where a user's
  # module needs it (the step runs as written). Looked up at each use, so
  # that a population's members and templates each call their own.

  @property
  def call_actor(self) -> Callable[[tf.Tensor], Any]:
    return autograph.user_call(self.in_precision(self.actor))

  @property
  def call_critic(self) -> Callable[[tf.Tensor], Any]:
    return autograph.user_call(self.in_precision(self.critic))

  def trainable_variables(self) -> list[tf.Variable]:
    """The actor's, the value module's and the policy's, each once."""
    seen, out = set(), []
    for module in (self.actor, self.critic, self.policy):
      for variable in module.trainable_variables:
        if variable.ref() not in seen:
          seen.add(variable.ref())
          out.append(variable)
    return out

  def normalize(self, observations: tf.Tensor) -> tf.Tensor:
    """Observations as the networks see them (normalised, if asked)."""
    if self.normalizer is None:
      return observations
    return self.normalizer(observations)

  def actor_outputs(self, observations: tf.Tensor) -> tf.Tensor:
    """The actor on raw `[batch, ...]` observations (normalised first)."""
    return self.call_actor(self.normalize(observations))

  def critic_values(self, observations: tf.Tensor) -> tf.Tensor:
    """The value module on raw `[batch, ...]` observations, as `[batch]`."""
    values = self.call_critic(self.normalize(observations))
    return policies.values_of(type(self).__name__, self.critic_name, values)

  def values_of_inputs(self, inputs: tf.Tensor) -> tf.Tensor:
    """Traced: the critic's values of network inputs (normalised
    observations) as float32 `[batch]` (`build` checked its outputs are
    `[batch]` or `[batch, 1]`)."""
    return tf.cast(tf.reshape(self.call_critic(inputs), [-1]), tf.float32)

  def actor_and_values(self, inputs: tf.Tensor) -> tuple[Any, tf.Tensor]:
    """Traced: the actor's outputs and the critic's values (float32
    `[batch]`) on the same network inputs, in the step's precision; a
    torso both networks begin with runs once (`parts.shared_torso`)."""
    parts = shared_torso.split(self.actor, self.critic)
    if parts is None:
      return self.call_actor(inputs), self.values_of_inputs(inputs)

    def both(x):
      return shared_torso.run(parts, x)
    outputs, values = autograph.user_call(self.in_precision(self.actor, both))(
        inputs)
    return outputs, tf.cast(tf.reshape(values, [-1]), tf.float32)

  def act(self, observation: Any, greedy: bool = True) -> tf.Tensor:
    """Actions of the trained policy, ready for the environment.

    Args:
      observation: One observation (`observation_spec.shape`) or a batch
        `[batch, ...]`, raw as the environment gives it (normalisation, if
        the run uses it, is applied here).
      greedy: The most likely action; False samples from the policy (with
        the scenario's generator, so it moves the run's random state).

    Returns:
      One action or a batch, as the environment takes them.
    """
    return self.policy.act(self.actor_outputs, observation,
                           self.env.observation_spec, greedy, self.rng,
                           features=self.normalize)

  @property
  def variables_to_train(self) -> list[tf.Variable]:
    """`trainable_variables()` as `build` listed them (inside the traced
    step a plain read)."""
    return self._variables

  def experience(self) -> Experience:
    """One rollout with the current policy, then the critic's values of its
    observations, final observations and last observation in one call."""
    actor = self.call_actor if self.normalizer is None else self.actor_outputs
    batch = rollout.collect(
        self.env, actor, self.policy, self.stats, self.rng,
        self.rollout_length, owner=type(self).__name__,
        features=self.normalize if self.policy.uses_sde else None,
        check_steps=self._check_steps)
    size = self.rollout_length * self.num_envs

    def flat(x):  # [T, num_envs, ...] -> [T * num_envs, ...]; static.
      return tf.reshape(x, [size] + x.shape[2:].as_list())

    every = tf.concat([flat(batch.observations),
                       flat(batch.final_observations),
                       batch.last_observation], axis=0)
    every = self.normalize(every)
    values = self.values_of_inputs(every)
    shape = [self.rollout_length, self.num_envs]
    return Experience(batch, every[:size], flat(batch.actions),
                      flat(batch.log_probs), tf.reshape(values[:size], shape),
                      tf.reshape(values[size:2 * size], shape),
                      values[2 * size:])

  # ---- Export (end of run with export_dir=...). ----

  def export(self, directory: str) -> str:
    """Writes the policy (`snt.export.save_policy`); returns the path.

    "serving_default": `observation` -> greedy `action`; "sample":
    `observation`, `seed` -> sampled `action` (clipped for a Box), except
    for a Box policy with a state-dependent std or squashing, which is
    exported greedy only. Observation normalisation is part of both.
    """
    if self.policy.exports_sampling:
      actor, log_std, sampling = self.actor, self.policy.log_std, True
    else:
      actor = policies.GreedyActor(self.actor, self.policy)
      log_std, sampling = None, False
    return export_lib.save_policy(
        actor, directory, self.env.observation_spec,
        self.policy.action_space, log_std=log_std, sampling=sampling,
        preprocess=self.normalizer)
