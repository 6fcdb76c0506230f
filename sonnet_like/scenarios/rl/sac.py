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
from sonnet_like.scenarios import engine
from sonnet_like.scenarios import history as history_lib
from sonnet_like.scenarios.rl import environments
from sonnet_like.scenarios.rl import episodes
from sonnet_like.scenarios.rl import normalization
from sonnet_like.scenarios.rl import policies
from sonnet_like.scenarios.rl import recipes
from sonnet_like.scenarios.rl import replay

NOT_BOX_ERROR = (
    "SAC: the environment's actions must be a Box (continuous), got {space}. "
    "Use DQN or PPO for discrete actions.")

COPY_ERROR = (
    "SAC: could not copy the critic for the {what} ({error}). Pass "
    "twin_critic=... (a second instance of the same network) to "
    "sac(actor, critic, optimizer, env, twin_critic=...).")

LOGS = ("loss", "critic_loss", "actor_loss", "alpha_loss", "alpha",
        "entropy", "q_mean")


class SAC(engine.Scenario):
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
    num_env_steps: Transitions to collect in total (rounded up to whole
      steps of all environments).
    num_envs: Environments stepped together; None takes the environment's
      own count (1 for a gymnasium id or factory).
    buffer_size: Replay buffer capacity, in transitions.
    batch_size: Transitions per gradient update.
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

  def __init__(self, num_env_steps: int, *, num_envs: int | None = None,
               buffer_size: int = 100_000, batch_size: int = 256,
               learning_starts: int = 1_000, train_every: int = 1,
               gradient_steps: int = 1, tau: float = 0.005,
               gamma: float = 0.99, alpha: float | str = "auto",
               alpha_init: float = 1.0, target_entropy: float | None = None,
               normalize_observations: bool = False,
               eval_episodes: int = 10, **kwargs):
    check = arguments.check_positive_int
    check("SAC", "num_env_steps", num_env_steps)
    check("SAC", "num_envs", num_envs, optional=True)
    check("SAC", "buffer_size", buffer_size)
    check("SAC", "batch_size", batch_size)
    check("SAC", "train_every", train_every)
    check("SAC", "gradient_steps", gradient_steps)
    check("SAC", "eval_episodes", eval_episodes)
    arguments.check_non_negative_int("SAC", "learning_starts", learning_starts)
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
    super().__init__(-(-num_env_steps // (num_envs or 1)), **kwargs)
    environments.check_strategy("SAC", self.strategy)
    self.num_env_steps, self.num_envs = num_env_steps, num_envs
    self.buffer_size, self.batch_size = buffer_size, batch_size
    self.learning_starts, self.train_every = learning_starts, train_every
    self.gradient_steps, self.tau = gradient_steps, float(tau)
    self.gamma, self.alpha = float(gamma), alpha
    self.alpha_init, self.target_entropy = float(alpha_init), target_entropy
    self.normalize_observations = normalize_observations
    self.eval_episodes = eval_episodes
    self.normalizer: normalization.ObservationNormalizer | None = None
    self._evaluation: environments.GreedyEvaluation | None = None

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
      if not callable(module) or not hasattr(type(module),
                                             "trainable_variables"):
        raise TypeError(f"SAC: {name} must be a module (snt.Module, "
                        f"tf.Module) that can be called, got {module!r}.")
    self.traced_step.check_optimizer(optimizer)
    self.env = environments.make_env("SAC", env, self.num_envs, self.seed)
    space = self.env.action_space
    if not isinstance(space, envs_base.Box):
      raise ValueError(NOT_BOX_ERROR.format(space=policies.describe(space)))
    if self.buffer_size < self.env.num_envs:
      raise ValueError(f"SAC: buffer_size must be at least num_envs "
                       f"({self.env.num_envs}), got {self.buffer_size}.")
    self.eval_env = environments.make_eval_env(
        "SAC", env, self.env, eval_env, eval_episodes=self.eval_episodes,
        eval_every=self.eval_every, seed=self.seed + 1)
    self.num_steps = -(-self.num_env_steps // self.env.num_envs)
    self.policy = policies.Policy("SAC", space, state_dependent_std=True,
                                  squash=True)
    self.actor, self.critic, self.optimizer = actor, critic, optimizer
    if twin_critic is None:
      try:
        twin_critic = copy.deepcopy(critic)
      except Exception as error:  # pylint: disable=broad-except
        raise TypeError(COPY_ERROR.format(what="twin critic",
                                          error=error)) from error
    self.twin_critic = twin_critic
    self._evaluation = None
    return self.run()

  # ---- Engine interface. ----

  def models(self):
    return {"actor": self.actor, "critic": self.critic,
            "twin_critic": self.twin_critic}

  def trackables(self):
    named = dict(self.models(), target_critic=self.target_critic,
                 target_twin_critic=self.target_twin_critic,
                 optimizer=self.optimizer, replay_buffer=self.buffer,
                 env=self.env, episode_stats=self.stats,
                 sac_state=self._state)
    if self.normalizer is not None:
      named["observation_normalizer"] = self.normalizer
    return named

  def build(self):
    env = self.env
    env.reset(seed=self.seed)
    envs_base.check_shapes(env, "SAC")
    spec, space = env.observation_spec, env.action_space
    example = tf.zeros([1] + spec.shape.as_list(), spec.dtype)
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
    for target, online in self._target_pairs():
      if [v.shape for v in target] != [v.shape for v in online]:
        raise ValueError("SAC: the twin critic must have the same variables "
                         "(shapes, in order) as the critic.")
      for t, o in zip(target, online):
        t.assign(o)
    self.buffer = replay.ReplayBuffer(self.buffer_size, spec, space.spec)
    self.stats = episodes.EpisodeStats(env.num_envs)
    self._state = tf.Module(name="sac_state")
    alpha = self.alpha_init if self.alpha == "auto" else float(self.alpha)
    self._state.log_alpha = tf.Variable(math.log(alpha), name="log_alpha")
    for name in LOGS:
      setattr(self._state, name, tf.Variable(0.0, trainable=False, name=name))
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
    spec = self.env.observation_spec
    observation = tf.convert_to_tensor(observation, spec.dtype)
    single = observation.shape.rank == spec.shape.rank
    if single:
      observation = observation[None]
    outputs = self.actor(self.normalize(observation))
    action = (self.policy.greedy(outputs) if greedy else
              self.policy.to_env(self.policy.sample(outputs, self.rng)))
    return action[0] if single else action

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
      grads += self.traced_step.gradients(tape, alpha_loss, [self._state.log_alpha])
      variables.append(self._state.log_alpha)
    del tape
    loss = critic_loss + actor_loss + alpha_loss
    finite = self.traced_step.apply_update(self.optimizer, grads, variables,
                                      loss=loss)
    for target, online in self._target_pairs():
      for t, o in zip(target, online):
        t.assign(self.tau * o + (1.0 - self.tau) * t)
    values = dict(loss=loss, critic_loss=critic_loss, actor_loss=actor_loss,
                  alpha_loss=alpha_loss, alpha=alpha,
                  entropy=-tf.reduce_mean(log_probs),
                  q_mean=tf.reduce_mean(q1))
    for name, value in values.items():
      variable = getattr(self._state, name)
      variable.assign(tf.where(finite, value, variable))

  def train_step(self):
    env = self.env
    step = self.step_variable + 1  # This step's number, 1-based.
    observation = envs_base.checked(env, env.observation(), "observation",
                                    "observation()", "SAC")
    exploring = self.step_variable * env.num_envs < self.learning_starts
    shape = [env.num_envs] + list(env.action_space.shape)
    random = self.rng.uniform(shape, -1.0, 1.0)
    sampled, _ = self._sample(self.normalize(observation))
    unit = tf.where(exploring, random, sampled)
    action = self._center + self._half * unit
    timestep = envs_base.checked_timestep(env, env.step(action), "SAC")
    self.stats.update(timestep)
    self.buffer.add(replay.Transition(
        observation=observation, action=action,
        reward=tf.cast(timestep.reward, tf.float32),
        next_observation=timestep.final_observation,
        terminated=tf.cast(timestep.terminated, tf.bool)))
    if self.normalizer is not None:
      self.normalizer.update(observation)

    def learn():
      for _ in range(self.gradient_steps):
        self.update()
      return tf.constant(True)

    learning = tf.logical_and(
        step * env.num_envs >= self.learning_starts,
        tf.equal(step % self.train_every, 0))
    tf.cond(learning, learn, lambda: tf.constant(False))
    logs = {name: getattr(self._state, name).read_value() for name in LOGS}
    logs.update(self.stats.logs())
    return logs

  def evaluate_now(self):
    if self.eval_env is None:
      return None
    if self._evaluation is None:
      self._evaluation = environments.GreedyEvaluation(
          self.eval_env, lambda obs: self.policy.greedy(
              self.actor(self.normalize(obs))), self.eval_episodes)
    return self._evaluation(seed=self.seed + 1 + self.step)

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
