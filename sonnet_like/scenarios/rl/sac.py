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

import math
from typing import Any

import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import autograph
from sonnet_like.scenarios.rl.parts import policies
from sonnet_like.scenarios.rl import recipes
from sonnet_like.scenarios.rl import twin_critics

LOGS = ("loss", "critic_loss", "actor_loss", "alpha_loss", "alpha",
        "entropy", "q_mean")


class SAC(twin_critics.TwinCritics):
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

  Documented recipes: `SAC.recipe("Pendulum-v1")` and
  `SAC.recipe("MountainCarContinuous-v0")` (gSDE; see `rl.recipes`). Act
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
    sde_sample_freq: None (a fresh Gaussian sample at every step, the
      actor's `2k` outputs giving means and log-stds), or explore with gSDE
      (`policies`' module docstring; as Stable-Baselines3's `use_sde`): the
      actor outputs `k` means, the noise is linear in the actor's inputs
      (the observations, normalised if asked) with a trained `[observation
      size, k]` log-std, and each environment's noise matrix is drawn
      again every this many scenario steps (held in between, so an
      exploring push lasts; checkpointed). The updates sample with fresh
      noise of the same distribution.
    log_std_init: Initial log standard deviation: with gSDE of the noise
      matrices' entries, else added to the actor's log-std outputs.
    eval_episodes: Episodes per greedy evaluation.
    **kwargs: `learning_rate_schedule` (None, "linear": every optimizer's
      rate falls to 0 over the run, or a `schedules.Schedule`; see
      `OffPolicy`) and the loop settings of `Scenario` (steps_per_call,
      eval_every, save_every, save_dir, jit_compile, on_nonfinite,
      clip_norm, seed, hooks, progress, ...).
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
               sde_sample_freq: int | None = None, log_std_init: float = 0.0,
               eval_episodes: int = 10, **kwargs):
    super().__init__(num_env_steps, num_envs=num_envs,
                     buffer_size=buffer_size, batch_size=batch_size,
                     learning_starts=learning_starts, train_every=train_every,
                     gradient_steps=gradient_steps, tau=tau, gamma=gamma,
                     normalize_observations=normalize_observations,
                     eval_episodes=eval_episodes, **kwargs)
    if alpha != "auto":
      arguments.check_positive_number("SAC", "alpha", alpha)
    arguments.check_positive_number("SAC", "alpha_init", alpha_init)
    twin_critics.check_finite_or_none("SAC", "target_entropy",
                                      target_entropy)
    if sde_sample_freq is not None:
      arguments.check_positive_int("SAC", "sde_sample_freq", sde_sample_freq)
    if isinstance(log_std_init, bool) or not isinstance(
        log_std_init, (int, float)) or not math.isfinite(log_std_init):
      raise ValueError(f"SAC: log_std_init must be a finite number, got "
                       f"{log_std_init!r}.")
    self.sde_sample_freq, self.log_std_init = sde_sample_freq, log_std_init
    self.alpha = alpha
    self.alpha_init, self.target_entropy = float(alpha_init), target_entropy

  @classmethod
  def recipe(cls, task: str) -> recipes.Recipe:
    """The documented settings for `task` (see `rl.recipes.SAC_RECIPES`)."""
    return recipes.find(cls, recipes.SAC_RECIPES, task)

  # ---- `TwinCritics` hooks. ----

  def make_policy(self):
    if self.sde_sample_freq is None:
      return policies.Policy("SAC", self.env.action_space,
                             self.log_std_init, state_dependent_std=True,
                             squash=True)
    spec = self.env.observation_spec
    if spec.shape.rank != 1:
      raise ValueError(f"SAC: gSDE (sde_sample_freq) takes observations "
                       f"with one axis as its features, got shape "
                       f"{spec.shape.as_list()}.")
    return policies.Policy("SAC", self.env.action_space, self.log_std_init,
                           squash=True, sde_sample_freq=self.sde_sample_freq,
                           sde_features=spec.shape[0],
                           sde_batch=self.env.num_envs)

  def extra_learners(self):
    # gSDE: the trained log-std, the held noise matrices and their count.
    return {"policy": self.policy} if self.policy.uses_sde else {}

  @autograph.as_written
  def actor_variables(self) -> list[tf.Variable]:
    """What the actor's loss trains: the actor's and the policy's (gSDE's
    log-std) variables."""
    return (list(self.actor.trainable_variables) +
            list(self.policy.trainable_variables))

  def build_state(self) -> dict[str, tf.Variable]:
    space = self.env.action_space
    self._entropy_target = float(-space.shape[0] if self.target_entropy is None
                                 else self.target_entropy)
    alpha = self.alpha_init if self.alpha == "auto" else float(self.alpha)
    return {"log_alpha": tf.Variable(math.log(alpha), name="log_alpha")}

  def _trained_variables(self) -> list[tf.Variable]:
    super()._trained_variables()  # Refuses shared variables.
    # In `update`'s order: the actor's, the critics', the temperature.
    variables = self.actor_variables() + self.critic_variables()
    if self.alpha == "auto":
      variables.append(self._state.log_alpha)
    return variables

  # ---- Networks. ----

  @autograph.as_written
  def _sample(self, observations):
    """Reparameterised actions in [-1, 1] and their log-probabilities."""
    outputs = self.forward(self.actor, observations)
    features = observations if self.policy.uses_sde else None
    raw = self.policy.sample(outputs, self.rng, features)
    return tf.tanh(raw), self.policy.log_prob(outputs, raw, features)

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
                           self.rng, self.normalize if self.policy.uses_sde
                           else None)

  # ---- The traced step. ----

  @autograph.as_written
  def update(self) -> None:
    """One gradient step of the critics, the actor and the temperature."""
    batch = self.buffer.sample(self.batch_size, self.rng)
    observations = self.normalize(batch.observation)
    next_observations = self.normalize(batch.next_observation)
    actions = self.env_to_unit(batch.action)
    alpha = tf.exp(self._state.log_alpha)
    next_actions, next_log_probs = self._sample(next_observations)
    next_q = self.target_q(next_observations, next_actions)
    targets = tf.stop_gradient(batch.reward + self.gamma * (
        1.0 - tf.cast(batch.terminated, tf.float32)) * (
            next_q - alpha * next_log_probs))
    actor_variables = self.actor_variables()
    critic_variables = self.critic_variables()
    with tf.GradientTape(persistent=True) as tape:
      critic_loss, q1 = self.critic_loss(observations, actions, targets)
      new_actions, log_probs = self._sample(observations)
      new_q = tf.minimum(self._q(self.critic, observations, new_actions),
                         self._q(self.twin_critic, observations, new_actions))
      actor_loss = tf.reduce_mean(tf.stop_gradient(alpha) * log_probs - new_q)
      alpha_loss = -tf.reduce_mean(self._state.log_alpha * tf.stop_gradient(
          log_probs + self._entropy_target))
    grads = (self.gradients(tape, actor_loss, actor_variables) +
             self.gradients(tape, critic_loss, critic_variables))
    variables = actor_variables + critic_variables
    if self.alpha == "auto":
      grads += self.gradients(tape, alpha_loss,
                              [self._state.log_alpha])
      variables.append(self._state.log_alpha)
    del tape
    loss = critic_loss + actor_loss + alpha_loss
    finite = self.apply_update(self.optimizer, grads, variables,
                               loss=loss)
    self.move_targets(self.target_pairs(), self.tau)
    self.record(finite, loss=loss, critic_loss=critic_loss,
                actor_loss=actor_loss, alpha_loss=alpha_loss, alpha=alpha,
                entropy=-tf.reduce_mean(log_probs), q_mean=tf.reduce_mean(q1))

  # ---- The traced step (`OffPolicy.train_step`). ----

  @autograph.as_written
  def explore(self, observation):
    """Uniform in the box for the first `learning_starts` transitions, then
    sampled from the policy (with gSDE: from the held noise matrices)."""
    if not self.policy.uses_sde:  # Normalised on the policy's side only.
      return self.unit_to_env(self.random_or(
          lambda: self._sample(self.normalize(observation))[0],
          lambda: self.policy.skip_sample(self.rng)))
    # gSDE's held noise moves every step: both sides are computed.
    random = self.random_unit_actions()
    observation = self.normalize(observation)
    raw, _, _ = self.policy.explore(
        self.forward(self.actor, observation), self.rng, observation)
    return self.unit_to_env(tf.where(self.still_random(), random,
                                     tf.tanh(raw)))
