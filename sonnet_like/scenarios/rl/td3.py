"""`TD3`: twin delayed deep deterministic policy gradient (Fujimoto et al.
2018) for continuous actions.

    td3 = snt.scenarios.TD3(num_env_steps=20_000)
    td3(actor, critic, optimizer, "Pendulum-v1")

One scenario step is one step of all `num_envs` environments (the
deterministic actor's action plus exploration noise, or uniform in the box
for the first `learning_starts` transitions) stored in a `ReplayBuffer`,
plus `gradient_steps` updates every `train_every` steps once
`learning_starts` transitions are stored. An update trains twin Q critics
towards `r + gamma * min(Q1', Q2')(s', a')`, where `a'` is the target
actor's action plus clipped Gaussian noise (target policy smoothing); every
`policy_delay`-th update also trains the actor on `-Q1(s, actor(s))` and
moves the target actor and target critics by `tau` (delayed policy
updates). The machinery it shares with SAC (twin critics, target critics,
normalisation, export) is `rl.twin_critics`.
"""

import copy
from typing import Any

import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import autograph
from sonnet_like.envs import base as envs_base
from sonnet_like.scenarios.compiled import carried
from sonnet_like.scenarios.run_folder import history as history_lib
from sonnet_like.scenarios.rl.parts import policies
from sonnet_like.scenarios.rl import recipes
from sonnet_like.scenarios.rl import twin_critics

LOGS = ("loss", "critic_loss", "actor_loss", "q_mean")

NOISE_TYPES = ("gaussian", "ornstein_uhlenbeck")

OPTIMIZER_COPY_ERROR = (
    "TD3: could not make the actor's optimizer from `optimizer` ({error}). "
    "Pass actor_optimizer=... (a second, unused optimizer) to "
    "td3(actor, critic, optimizer, env, actor_optimizer=...).")


def fresh_copy(optimizer: Any) -> Any:
  """A new optimizer configured as `optimizer`, with no state of its own:
  a Keras optimizer is made again from its config, another is deep-copied
  (before it has slots)."""
  try:
    if hasattr(optimizer, "get_config") and hasattr(optimizer, "from_config"):
      return type(optimizer).from_config(optimizer.get_config())
    return copy.deepcopy(optimizer)
  except Exception as error:  # pylint: disable=broad-except
    raise TypeError(OPTIMIZER_COPY_ERROR.format(error=error)) from error


class TD3(twin_critics.TwinCritics):
  """Trains a deterministic actor and twin Q critics with TD3.

  Networks: the actor maps observations `[batch, ...]` to `[batch, k]`
  (one output per action dimension, squashed by `tanh` into the action
  box); the critic maps `concat([observation, action], -1)` (observation
  flattened to one axis; the action rescaled from the box to [-1, 1]) to
  Q-values `[batch]` or `[batch, 1]`. The twin critic is a deep copy of
  `critic` made before it is built (so it starts from other weights), or
  `twin_critic=...`; the target actor and target critics are copies.
  `optimizer` updates the critics at every update, `actor_optimizer` (by
  default a new optimizer configured as `optimizer`) the actor at every
  `policy_delay`-th; each update is under the NaN guard.

  Noise is in the [-1, 1] scale of the box's half-widths (0.1 moves a
  Pendulum torque by 0.2): `exploration_noise="gaussian"` adds independent
  normal noise of `noise_std` to each action, `"ornstein_uhlenbeck"` adds
  an Ornstein-Uhlenbeck process per environment (`x += ou_theta * -x *
  ou_dt + noise_std * sqrt(ou_dt) * N(0, 1)`, reset to 0 where an episode
  ends: temporally correlated noise, which helps where exploring needs
  sustained pushes, as in MountainCarContinuous). Played actions are
  clipped to the box.

  Counting: as for `SAC` (`num_env_steps`, `learning_starts`,
  `buffer_size` count transitions; the other intervals count scenario
  steps). The replay buffer, target networks, update count, noise state,
  environment state (in-graph environments), observation statistics,
  episode statistics, optimizer and generator are all in the checkpoint.

  Logs: "loss" and "critic_loss" (the critics' loss of the latest update),
  "actor_loss" (of the latest actor update), "q_mean", and the
  `EpisodeStats` logs. Evaluation: the actor without noise over
  `eval_episodes` episodes.

      >>> import numpy as np, sonnet_like as snt
      >>> td3 = snt.scenarios.TD3(num_env_steps=300, learning_starts=100,
      ...                         batch_size=32, eval_every=None,
      ...                         progress=False)
      >>> actor = snt.nets.MLP([16, 1], name="actor")
      >>> critic = snt.nets.MLP([16, 1], name="critic")
      >>> history = td3(actor, critic, snt.optimizers.Adam(1e-3),
      ...               snt.envs.Pendulum(num_envs=1))
      >>> action = td3.act(np.array([1.0, 0.0, 0.0], np.float32))
      >>> action.shape, bool(abs(float(action[0])) <= 2.0)
      (TensorShape([1]), True)

  Args:
    num_env_steps, num_envs, buffer_size, batch_size: As for `DQN`.
    learning_starts: Transitions collected with uniform random actions
      before the first update.
    train_every: Scenario steps between rounds of updates.
    gradient_steps: Updates per round.
    tau: Polyak weight of the targets' move towards the online networks.
    gamma: Discount.
    policy_delay: Critic updates per actor (and target) update.
    target_noise: Standard deviation of the target policy smoothing noise.
    target_noise_clip: The smoothing noise is clipped to +-this.
    exploration_noise: "gaussian" or "ornstein_uhlenbeck".
    noise_std: Scale of the exploration noise.
    ou_theta, ou_dt: The Ornstein-Uhlenbeck process' mean reversion and
      time step.
    normalize_observations: Standardise observations with running
      statistics (updated with every step's observations).
    eval_episodes: Episodes per greedy evaluation.
    **kwargs: `learning_rate_schedule` (None, "linear": every optimizer's
      rate falls to 0 over the run, or a `schedules.Schedule`; see
      `OffPolicy`) and the loop settings of `Scenario` (steps_per_call,
      eval_every, save_every, save_dir, jit_compile, on_nonfinite,
      clip_norm, seed, hooks, progress, ...).
  """

  logged = LOGS
  state_name = "td3_state"

  def __init__(self, num_env_steps: int, *, num_envs: int | None = None,
               buffer_size: int = 100_000, batch_size: int = 256,
               learning_starts: int = 1_000, train_every: int = 1,
               gradient_steps: int = 1, tau: float = 0.005,
               gamma: float = 0.99, policy_delay: int = 2,
               target_noise: float = 0.2, target_noise_clip: float = 0.5,
               exploration_noise: str = "gaussian", noise_std: float = 0.1,
               ou_theta: float = 0.15, ou_dt: float = 0.01,
               normalize_observations: bool = False,
               eval_episodes: int = 10, **kwargs):
    super().__init__(num_env_steps, num_envs=num_envs,
                     buffer_size=buffer_size, batch_size=batch_size,
                     learning_starts=learning_starts, train_every=train_every,
                     gradient_steps=gradient_steps, tau=tau, gamma=gamma,
                     normalize_observations=normalize_observations,
                     eval_episodes=eval_episodes, **kwargs)
    arguments.check_positive_int("TD3", "policy_delay", policy_delay)
    for name, value in (("target_noise", target_noise),
                        ("target_noise_clip", target_noise_clip),
                        ("noise_std", noise_std)):
      arguments.check_non_negative("TD3", name, value)
    arguments.check_positive_number("TD3", "ou_theta", ou_theta)
    arguments.check_positive_number("TD3", "ou_dt", ou_dt)
    if exploration_noise not in NOISE_TYPES:
      raise ValueError(f"TD3: exploration_noise must be one of "
                       f"{list(NOISE_TYPES)}, got {exploration_noise!r}.")
    self.policy_delay = policy_delay
    self.target_noise = float(target_noise)
    self.target_noise_clip = float(target_noise_clip)
    self.exploration_noise, self.noise_std = exploration_noise, float(noise_std)
    self.ou_theta, self.ou_dt = float(ou_theta), float(ou_dt)

  @classmethod
  def recipe(cls, task: str) -> recipes.Recipe:
    """The documented settings for `task` (see `rl.recipes.TD3_RECIPES`)."""
    return recipes.find(cls, recipes.TD3_RECIPES, task)

  def __call__(self, actor: Any, critic: Any, optimizer: Any, env: Any,
               eval_env: Any = None, twin_critic: Any = None,
               actor_optimizer: Any = None) -> history_lib.History:
    """Trains (or resumes training) and returns the `History`.

    Args:
      actor: Observations -> `[batch, k]` (squashed by tanh into the box).
      critic: `concat([observation, action], -1)` -> Q-values.
      optimizer: A Keras or sonnet_like optimizer; it updates both critics.
      env: An `snt.envs.Environment`, or anything `snt.envs.make` accepts.
      eval_env: Where evaluation plays (never the training environment);
        by default a copy of `env` with another seed when `env` is an id or
        a factory.
      twin_critic: The second critic; by default a copy of `critic`.
      actor_optimizer: Updates the actor; by default a new optimizer
        configured as `optimizer` (its own slots and step count).
    """
    self.check_optimizer(optimizer)
    if actor_optimizer is None:
      actor_optimizer = fresh_copy(optimizer)
    self.check_optimizer(actor_optimizer, "actor_optimizer")
    self.actor_optimizer = actor_optimizer
    self.target_actor = None  # Made by `build`.
    return super().__call__(actor, critic, optimizer, env, eval_env,
                            twin_critic)

  # ---- `TwinCritics` hooks. ----

  def make_policy(self):
    # Squashed means: `greedy` is center + half * tanh(actor output).
    return policies.Policy("TD3", self.env.action_space, squash=True)

  def build_state(self) -> dict[str, tf.Variable]:
    shape = [self.env.num_envs] + list(self.env.action_space.shape)
    return {"updates": tf.Variable(0, dtype=tf.int64, trainable=False,
                                   name="updates"),
            "noise": tf.Variable(tf.zeros(shape), trainable=False,
                                 name="noise")}

  def build_targets(self):
    self.target_actor = self.copy(self.actor, "actor", "target actor")

  def extra_learners(self):
    return {"target_actor": self.target_actor,
            "actor_optimizer": self.actor_optimizer}

  def build_optimizers(self):
    self._trained_variables()  # Refuses shared variables.
    self.build_optimizer(self.optimizer, self.critic_variables())
    self.build_optimizer(self.actor_optimizer,
                         list(self.actor.trainable_variables))

  @autograph.as_written
  def target_pairs(self):
    return super().target_pairs() + (
        (list(self.target_actor.trainable_variables),
         list(self.actor.trainable_variables)),)

  # ---- Networks. ----

  @autograph.as_written
  def _actions(self, actor: Any, observations: tf.Tensor) -> tf.Tensor:
    """The deterministic actions of `actor`, in [-1, 1]."""
    return tf.tanh(self.policy.check(self.forward(actor, observations)))

  def act(self, observation: Any) -> tf.Tensor:
    """The actor's action(s) without noise, ready for the environment.

    Args:
      observation: One observation or a batch `[batch, ...]`, raw as the
        environment gives it.
    """
    return self.greedy_act(observation)

  # ---- The traced step. ----

  @autograph.as_written
  def update(self) -> None:
    """One critic update, plus the actor's and the targets' every
    `policy_delay` updates."""
    batch = self.buffer.sample(self.batch_size, self.rng)
    observations = self.normalize(batch.observation)
    next_observations = self.normalize(batch.next_observation)
    actions = self.env_to_unit(batch.action)
    noise = tf.clip_by_value(
        self.target_noise * self.rng.normal(tf.shape(actions)),
        -self.target_noise_clip, self.target_noise_clip)
    next_actions = tf.clip_by_value(
        self._actions(self.target_actor, next_observations) + noise, -1.0, 1.0)
    next_q = self.target_q(next_observations, next_actions)
    targets = tf.stop_gradient(batch.reward + self.gamma * (
        1.0 - tf.cast(batch.terminated, tf.float32)) * next_q)
    critic_variables = self.critic_variables()
    with tf.GradientTape() as tape:
      critic_loss, q1 = self.critic_loss(observations, actions, targets)
    finite = self.minimize(tape, critic_loss, critic_variables,
                           self.optimizer)
    self.record(finite, loss=critic_loss, critic_loss=critic_loss,
                q_mean=tf.reduce_mean(q1))
    updates = self._state.updates.assign_add(1)

    def update_actor():
      actor_variables = list(self.actor.trainable_variables)
      with tf.GradientTape() as actor_tape:
        actor_loss = -tf.reduce_mean(self._q(
            self.critic, observations, self._actions(self.actor,
                                                     observations)))
      actor_finite = self.minimize(
          actor_tape, actor_loss, actor_variables, self.actor_optimizer)
      self.move_targets(self.target_pairs(), self.tau)
      self.record(actor_finite, actor_loss=actor_loss)
      return tf.constant(True)

    # `updates` is each member's own in a population (`per_member`).
    carried.cond(tf.equal(updates % self.policy_delay, 0), update_actor,
                      lambda: tf.constant(False), varying=True)

  # ---- The traced step (`OffPolicy.train_step`). ----

  @autograph.as_written
  def explore(self, observation):
    """Uniform in the box for the first `learning_starts` transitions, then
    the actor's action plus exploration noise, clipped to the box."""
    def noise_drawn():  # Every step, the warm-up's too: the noise moves.
      noise = self._state.noise
      if self.exploration_noise == "gaussian":
        drawn = self.noise_std * self.rng.normal(tf.shape(noise))
      else:
        drawn = noise + self.ou_theta * -noise * self.ou_dt + (
            self.noise_std * self.ou_dt ** 0.5 *
            self.rng.normal(tf.shape(noise)))
      noise.assign(drawn)
      return drawn

    def acted():
      drawn = noise_drawn()
      return tf.clip_by_value(
          self._actions(self.actor, self.normalize(observation)) + drawn,
          -1.0, 1.0)

    return self.unit_to_env(self.random_or(acted, noise_drawn))

  @autograph.as_written
  def stepped(self, timestep: envs_base.TimeStep) -> None:
    if self.exploration_noise == "ornstein_uhlenbeck":
      ended = tf.logical_or(tf.cast(timestep.terminated, tf.bool),
                            tf.cast(timestep.truncated, tf.bool))
      noise = self._state.noise
      noise.assign(tf.where(ended[:, None], tf.zeros_like(noise), noise))
