"""`SAC`: soft actor-critic (Haarnoja et al. 2018) for continuous actions.

    sac = snt.scenarios.SAC(num_env_steps=30_000)
    sac(actor, critic, optimizer, "Pendulum-v1")

One scenario step is one step of all `num_envs` environments (actions
sampled from the tanh-squashed Gaussian policy, or uniform in the box for
the first `learning_starts` transitions) stored in a `ReplayBuffer`, plus
`gradient_steps` updates every `train_every` steps once `learning_starts`
transitions are stored. An update trains twin Q critics towards
`r + gamma * (min(Q1', Q2')(s', a') - alpha * log pi(a'|s'))` (target
critics, Polyak-averaged by `tau` after each update), the actor on
`alpha * log pi(a|s) - min(Q1, Q2)(s, a)` with reparameterised samples, and
the temperature `alpha` towards the target entropy (`-k` for `k` action
dimensions by default). All of it runs inside the compiled step, so with an
in-graph environment and `steps_per_call=K` a call plays and learns for K
steps without Python.
"""

import copy
import math
from typing import Any

import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.envs import base as envs_base
from sonnet_like import export as export_lib
from sonnet_like.scenarios import history as history_lib
from sonnet_like.scenarios.rl import normalization
from sonnet_like.scenarios.rl import off_policy
from sonnet_like.scenarios.rl import policies
from sonnet_like.scenarios.rl import recipes

NOT_BOX_ERROR = (
    "SAC: the environment's actions must be a Box (continuous), got {space}. "
    "Use DQN or PPO for discrete actions.")

COPY_ERROR = (
    "SAC: could not copy the critic for the {what} ({error}). Pass "
    "twin_critic=... (a second instance of the same network) to "
    "sac(actor, critic, optimizer, env, twin_critic=...).")

LOGS = ("loss", "critic_loss", "actor_loss", "alpha_loss", "alpha",
        "entropy", "q_mean")


class SAC(off_policy.OffPolicy):
  """Trains a squashed Gaussian actor and twin Q critics with SAC.

  Networks: the actor maps observations `[batch, ...]` to `[batch, 2k]`
  (means, then log standard deviations, of a Gaussian that is
  tanh-squashed into the action box: `policies.Policy` with
  `state_dependent_std=True, squash=True`); the critic maps
  `concat([observation, action], -1)` (observation flattened to one axis;
  the action rescaled from the box to [-1, 1]) to Q-values `[batch]` or
  `[batch, 1]`. The twin critic is a deep copy of `critic` made before it
  is built (so it starts from other weights), or `twin_critic=...`; the
  target critics are copies of both. One optimizer updates the actor, both
  critics and the temperature in one `apply_update` (one NaN guard); the
  actor and the critics must not share variables.

  Counting: `num_env_steps`, `learning_starts` and `buffer_size` count
  transitions (a scenario step adds `num_envs` of them); `train_every`,
  `eval_every`, `save_every`, `log_every` and `steps_per_call` count
  scenario steps. The replay buffer, target critics, temperature,
  environment state (in-graph environments), observation statistics,
  episode statistics, optimizer and generator are all in the checkpoint.

  Logs: "loss" (the sum of the three losses), "critic_loss", "actor_loss",
  "alpha_loss", "alpha", "entropy" (`-log pi` of the sampled actions) and
  "q_mean" of the latest update, and the `EpisodeStats` logs. Evaluation:
  the greedy policy (the squashed mean) over `eval_episodes` episodes.

  A documented recipe: `SAC.recipe("Pendulum-v1")` (see `rl.recipes`). Act
  with a trained policy through `sac.act(observation)`:

      >>> import numpy as np, sonnet_like as snt
      >>> recipe = snt.scenarios.SAC.recipe("Pendulum-v1")
      >>> sac = recipe.scenario(num_env_steps=300, learning_starts=100,
      ...                       batch_size=32, eval_every=None,
      ...                       progress=False)
      >>> actor, critic = recipe.networks(hidden=(16,))
      >>> history = sac(actor, critic, recipe.optimizer(),
      ...               snt.envs.Pendulum(num_envs=1))
      >>> action = sac.act(np.array([1.0, 0.0, 0.0], np.float32))
      >>> action.shape, bool(abs(float(action[0])) <= 2.0)
      (TensorShape([1]), True)

  Args:
    num_env_steps, num_envs, buffer_size, batch_size: As for `DQN`.
    learning_starts: Transitions collected with uniform random actions
      before the first update.
    train_every: Scenario steps between rounds of updates.
    gradient_steps: Updates per round.
    tau: Polyak weight of the target critics' move towards the critics.
    gamma: Discount.
    alpha: "auto" (learn the temperature towards `target_entropy`) or a
      fixed positive temperature.
    alpha_init: Starting temperature with `alpha="auto"`.
    target_entropy: The entropy the temperature aims at; None for `-k`.
    normalize_observations: Standardise observations with running
      statistics (`normalization.ObservationNormalizer`, updated with every
      step's observations; replayed ones are normalised with the current
      statistics).
    eval_episodes: Episodes per greedy evaluation.
    **kwargs: Loop settings of `Scenario` (steps_per_call, eval_every,
      save_every, save_dir, jit_compile, on_nonfinite, clip_norm, seed,
      hooks, progress, ...).
  """

  logged = LOGS
  state_name = "sac_state"

  def __init__(self, num_env_steps: int, *, num_envs: int | None = None,
               buffer_size: int = 100_000, batch_size: int = 256,
               learning_starts: int = 1_000, train_every: int = 1,
               gradient_steps: int = 1, tau: float = 0.005,
               gamma: float = 0.99, alpha: float | str = "auto",
               alpha_init: float = 1.0, target_entropy: float | None = None,
               normalize_observations: bool = False,
               eval_episodes: int = 10, **kwargs):
    super().__init__(num_env_steps, num_envs=num_envs,
                     buffer_size=buffer_size, batch_size=batch_size,
                     learning_starts=learning_starts, train_every=train_every,
                     eval_episodes=eval_episodes, **kwargs)
    arguments.check_positive_int("SAC", "gradient_steps", gradient_steps)
    arguments.check_positive_number("SAC", "tau", tau, upper=1.0)
    arguments.check_non_negative("SAC", "gamma", gamma, upper=1.0)
    if alpha != "auto":
      arguments.check_positive_number("SAC", "alpha", alpha)
    arguments.check_positive_number("SAC", "alpha_init", alpha_init)
    if target_entropy is not None and (
        isinstance(target_entropy, bool) or
        not isinstance(target_entropy, (int, float)) or
        not math.isfinite(target_entropy)):
      raise ValueError(f"SAC: target_entropy must be a finite number or "
                       f"None, got {target_entropy!r}.")
    if not isinstance(normalize_observations, bool):
      raise ValueError(f"SAC: normalize_observations must be a bool, got "
                       f"{normalize_observations!r}.")
    self.gradient_steps, self.tau = gradient_steps, float(tau)
    self.gamma, self.alpha = float(gamma), alpha
    self.alpha_init, self.target_entropy = float(alpha_init), target_entropy
    self.normalize_observations = normalize_observations
    self.normalizer: normalization.ObservationNormalizer | None = None

  @classmethod
  def recipe(cls, task: str) -> recipes.Recipe:
    """The documented settings for `task` (see `rl.recipes.SAC_RECIPES`)."""
    return recipes.find(cls, recipes.SAC_RECIPES, task)

  def __call__(self, actor: Any, critic: Any, optimizer: Any, env: Any,
               eval_env: Any = None, twin_critic: Any = None
               ) -> history_lib.History:
    """Trains (or resumes training) and returns the `History`.

    Args:
      actor: Observations -> `[batch, 2k]` means and log-stds.
      critic: `concat([observation, action], -1)` -> Q-values.
      optimizer: A Keras or sonnet_like optimizer; it updates the actor,
        both critics and the temperature.
      env: An `snt.envs.Environment`, or anything `snt.envs.make` accepts.
      eval_env: Where evaluation plays (never the training environment);
        by default a copy of `env` with another seed when `env` is an id or
        a factory.
      twin_critic: The second critic; by default a copy of `critic`.
    """
    for name, module in (("actor", actor), ("critic", critic)):
      arguments.check_module("SAC", name, module)
    self._setup(optimizer, env, eval_env)
    self.policy = policies.Policy("SAC", self.env.action_space,
                                  state_dependent_std=True, squash=True)
    self.actor, self.critic, self.optimizer = actor, critic, optimizer
    if twin_critic is None:
      try:
        twin_critic = copy.deepcopy(critic)
      except Exception as error:  # pylint: disable=broad-except
        raise TypeError(COPY_ERROR.format(what="twin critic",
                                          error=error)) from error
    self.twin_critic = twin_critic
    self._log_alpha = None  # Made by the first build of this call.
    return self.run()

  # ---- Engine interface. ----

  def models(self):
    return {"actor": self.actor, "critic": self.critic,
            "twin_critic": self.twin_critic}

  def learners(self):
    return dict(self.models(), target_critic=self.target_critic,
                target_twin_critic=self.target_twin_critic,
                optimizer=self.optimizer)

  def trackables(self):
    named = super().trackables()
    if self.normalizer is not None:
      named["observation_normalizer"] = self.normalizer
    return named

  def check_action_space(self, space):
    if not isinstance(space, envs_base.Box):
      raise ValueError(NOT_BOX_ERROR.format(space=policies.describe(space)))

  def build(self):
    spec, space = self.env.observation_spec, self.env.action_space
    example = self._reset()
    self.normalizer = (normalization.ObservationNormalizer(spec.shape)
                       if self.normalize_observations else None)
    self.policy.check(self.actor(self.normalize(example)))
    action = tf.zeros([1] + list(space.shape), tf.float32)
    for name in ("critic", "twin_critic"):
      self._q(getattr(self, name), example, action, name)
    try:
      self.target_critic = copy.deepcopy(self.critic)
      self.target_twin_critic = copy.deepcopy(self.twin_critic)
    except Exception as error:  # pylint: disable=broad-except
      raise TypeError(COPY_ERROR.format(what="target critics",
                                        error=error)) from error
    self.start_targets(self._target_pairs(),
                       "SAC: the twin critic must have the same variables "
                       "(shapes, in order) as the critic.")
    alpha = self.alpha_init if self.alpha == "auto" else float(self.alpha)
    log_alpha = self._log_alpha
    if log_alpha is None:  # One for every run() of a call (a dry run's two).
      log_alpha = self._log_alpha = tf.Variable(0.0, name="log_alpha")
    log_alpha.assign(math.log(alpha))
    self._build_replay(log_alpha=log_alpha)
    self._center = tf.constant((space.low + space.high) / 2)
    self._half = tf.constant((space.high - space.low) / 2)
    self._entropy_target = float(-space.shape[0] if self.target_entropy is None
                                 else self.target_entropy)
    self.build_optimizer(self.optimizer, self._trained_variables())

  def _target_pairs(self):
    return ((list(self.target_critic.trainable_variables),
             list(self.critic.trainable_variables)),
            (list(self.target_twin_critic.trainable_variables),
             list(self.twin_critic.trainable_variables)))

  def _trained_variables(self) -> list[tf.Variable]:
    variables = (list(self.actor.trainable_variables) +
                 list(self.critic.trainable_variables) +
                 list(self.twin_critic.trainable_variables))
    if len({v.ref() for v in variables}) != len(variables):
      raise ValueError("SAC: the actor, the critic and the twin critic must "
                       "not share variables (each is trained on its own "
                       "loss).")
    if self.alpha == "auto":
      variables.append(self._state.log_alpha)
    return variables

  # ---- Networks. ----

  def normalize(self, observations: tf.Tensor) -> tf.Tensor:
    """Observations as the networks see them (normalised, if asked)."""
    if self.normalizer is None:
      return observations
    return self.normalizer(observations)

  def _q(self, critic, observations, unit_actions, name="critic"):
    """Q-values `[batch]` of normalised observations and [-1, 1] actions."""
    flat = tf.reshape(tf.cast(observations, tf.float32),
                      [tf.shape(observations)[0], -1])
    return policies.values_of("SAC", name, self.traced_step.forward(
        critic, tf.concat([flat, unit_actions], axis=-1)))

  def _sample(self, observations):
    """Reparameterised actions in [-1, 1] and their log-probabilities."""
    outputs = self.traced_step.forward(self.actor, observations)
    raw = self.policy.sample(outputs, self.rng)
    return tf.tanh(raw), self.policy.log_prob(outputs, raw)

  def act(self, observation: Any, greedy: bool = True) -> tf.Tensor:
    """Actions of the trained policy, ready for the environment.

    Args:
      observation: One observation or a batch `[batch, ...]`, raw as the
        environment gives it.
      greedy: The squashed mean; False samples (with the scenario's
        generator, so it moves the run's random state).
    """
    return self.policy.act(lambda x: self.actor(self.normalize(x)),
                           observation, self.env.observation_spec, greedy,
                           self.rng)

  # ---- The traced step. ----

  def update(self) -> None:
    """One gradient step of the critics, the actor and the temperature."""
    batch = self.buffer.sample(self.batch_size, self.rng)
    observations = self.normalize(batch.observation)
    next_observations = self.normalize(batch.next_observation)
    actions = (batch.action - self._center) / self._half
    alpha = tf.exp(self._state.log_alpha)
    next_actions, next_log_probs = self._sample(next_observations)
    next_q = tf.minimum(
        self._q(self.target_critic, next_observations, next_actions),
        self._q(self.target_twin_critic, next_observations, next_actions))
    targets = tf.stop_gradient(batch.reward + self.gamma * (
        1.0 - tf.cast(batch.terminated, tf.float32)) * (
            next_q - alpha * next_log_probs))
    actor_variables = list(self.actor.trainable_variables)
    critic_variables = (list(self.critic.trainable_variables) +
                        list(self.twin_critic.trainable_variables))
    with tf.GradientTape(persistent=True) as tape:
      q1 = self._q(self.critic, observations, actions)
      q2 = self._q(self.twin_critic, observations, actions)
      critic_loss = 0.5 * (tf.reduce_mean(tf.square(q1 - targets)) +
                           tf.reduce_mean(tf.square(q2 - targets)))
      new_actions, log_probs = self._sample(observations)
      new_q = tf.minimum(self._q(self.critic, observations, new_actions),
                         self._q(self.twin_critic, observations, new_actions))
      actor_loss = tf.reduce_mean(tf.stop_gradient(alpha) * log_probs - new_q)
      alpha_loss = -tf.reduce_mean(self._state.log_alpha * tf.stop_gradient(
          log_probs + self._entropy_target))
    grads = (self.traced_step.gradients(tape, actor_loss, actor_variables) +
             self.traced_step.gradients(tape, critic_loss, critic_variables))
    variables = actor_variables + critic_variables
    if self.alpha == "auto":
      grads += self.traced_step.gradients(tape, alpha_loss,
                                          [self._state.log_alpha])
      variables.append(self._state.log_alpha)
    del tape
    loss = critic_loss + actor_loss + alpha_loss
    finite = self.traced_step.apply_update(self.optimizer, grads, variables,
                                           loss=loss)
    self.move_targets(self._target_pairs(), self.tau)
    self.record(finite, loss=loss, critic_loss=critic_loss,
                actor_loss=actor_loss, alpha_loss=alpha_loss, alpha=alpha,
                entropy=-tf.reduce_mean(log_probs), q_mean=tf.reduce_mean(q1))

  # ---- The traced step (`OffPolicy.train_step`). ----

  def explore(self, observation):
    """Uniform in the box for the first `learning_starts` transitions, then
    sampled from the policy."""
    exploring = self.step_variable * self.env.num_envs < self.learning_starts
    shape = [self.env.num_envs] + list(self.env.action_space.shape)
    random = self.rng.uniform(shape, -1.0, 1.0)
    sampled, _ = self._sample(self.normalize(observation))
    return self._center + self._half * tf.where(exploring, random, sampled)

  def observed(self, observation):
    if self.normalizer is not None:
      self.normalizer.update(observation)

  def learn(self):
    for _ in range(self.gradient_steps):
      self.update()

  def greedy(self, observation):
    return self.policy.greedy(self.actor(self.normalize(observation)))

  # ---- Export (end of run with export_dir=...). ----

  def export(self, directory: str) -> str:
    """Writes the greedy policy (`snt.export.save_policy`); the path.

    "serving_default": `observation` -> the squashed mean action, with the
    observation normalisation (if any) applied first.
    """
    return export_lib.save_policy(
        policies.GreedyActor(self.actor, self.policy), directory,
        self.env.observation_spec, self.env.action_space, sampling=False,
        preprocess=self.normalizer)
