"""`TwinCritics`: what SAC and TD3 share on top of `OffPolicy`.

Both train an actor for a continuous action box and two Q critics of
`concat([observation, action], -1)` (the observation flattened to one axis,
the action rescaled from the box to [-1, 1]) with one optimizer, bootstrap
from target critics moved by `tau`, and may standardise observations with
running statistics. Shared here: the argument checks of those settings,
`__call__`'s checks and the twin critic's copy, the networks' build and
checks, the target critics, the checkpointed trackables, the rounds of
`gradient_steps` updates, greedy evaluation, `act` and the export of the
greedy policy. A subclass gives `make_policy()` (its `policies.Policy`),
`build_state()` (its own checkpointed variables), `update()` (one traced
gradient step) and `explore(observation)`; TD3 also adds a target actor
and an actor optimizer (`build_targets`, `extra_learners`,
`build_optimizers`).
"""

import copy
import math
from typing import Any, Callable

import tensorflow as tf

from sonnet_like import export as export_lib
from sonnet_like.core import arguments
from sonnet_like.core import autograph
from sonnet_like.envs import base as envs_base
from sonnet_like.scenarios.compiled import carried
from sonnet_like.scenarios.run_folder import history as history_lib
from sonnet_like.scenarios.rl.parts import normalization
from sonnet_like.scenarios.rl import off_policy
from sonnet_like.scenarios.rl.parts import policies

NOT_BOX_ERROR = (
    "{owner}: the environment's actions must be a Box (continuous), got "
    "{space}. Use DQN or PPO for discrete actions.")

COPY_ERROR = (
    "{owner}: could not copy the {network} for the {what} ({error}). Pass "
    "{argument}=... (a second instance of the same network) to "
    "{call}(actor, critic, optimizer, env, {argument}=...).")

UNCOPYABLE_ERROR = (
    "{owner}: could not copy the {network} for the {what} ({error}). The "
    "{network} must support copy.deepcopy before it is built (snt modules "
    "do).")


class TwinCritics(off_policy.OffPolicy):
  """Base class of SAC and TD3 (see the module docstring).

  Args:
    num_env_steps, num_envs, buffer_size, batch_size, learning_starts,
      train_every, eval_episodes: As documented in `SAC` and `TD3`.
    gradient_steps: Updates per round.
    tau: Polyak weight of the targets' move towards the online networks.
    gamma: Discount.
    normalize_observations: Standardise observations with running
      statistics.
    **kwargs: Loop settings of `Scenario`.
  """

  def __init__(self, num_env_steps: int, *, num_envs: int | None,
               buffer_size: int, batch_size: int, learning_starts: int,
               train_every: int, gradient_steps: int, tau: float,
               gamma: float, normalize_observations: bool,
               eval_episodes: int, **kwargs):
    super().__init__(num_env_steps, num_envs=num_envs,
                     buffer_size=buffer_size, batch_size=batch_size,
                     learning_starts=learning_starts, train_every=train_every,
                     eval_episodes=eval_episodes, **kwargs)
    owner = type(self).__name__
    arguments.check_positive_int(owner, "gradient_steps", gradient_steps)
    arguments.check_positive_number(owner, "tau", tau, upper=1.0)
    arguments.check_non_negative(owner, "gamma", gamma, upper=1.0)
    if not isinstance(normalize_observations, bool):
      raise ValueError(f"{owner}: normalize_observations must be a bool, got "
                       f"{normalize_observations!r}.")
    self.gradient_steps, self.tau = gradient_steps, float(tau)
    self.gamma = float(gamma)
    self.normalize_observations = normalize_observations
    self.normalizer: normalization.ObservationNormalizer | None = None
    self._own_state: dict[str, tf.Variable] | None = None
    self._own_initial: dict[str, Any] = {}

  # ---- What a subclass provides (besides `update` and `explore`). ----

  def make_policy(self) -> policies.Policy:
    """The policy over `self.env.action_space` (in `__call__`)."""
    raise NotImplementedError

  def build_state(self) -> dict[str, tf.Variable]:
    """The subclass's own checkpointed variables (in `build`)."""
    return {}

  def extra_learners(self) -> dict[str, Any]:
    """Checkpointed networks and optimizers besides the models, the target
    critics and `optimizer`, by name."""
    return {}

  def update(self) -> None:
    """Traced: one gradient step from a batch of the replay buffer."""
    raise NotImplementedError

  # ---- `__call__`. ----

  def __call__(self, actor: Any, critic: Any, optimizer: Any, env: Any,
               eval_env: Any = None, twin_critic: Any = None
               ) -> history_lib.History:
    """Trains (or resumes training) and returns the `History`.

    Args:
      actor: Observations -> the policy's outputs (see the class).
      critic: `concat([observation, action], -1)` -> Q-values.
      optimizer: A Keras or sonnet_like optimizer; it updates the actor
        and both critics (and SAC's temperature).
      env: An `snt.envs.Environment`, or anything `snt.envs.make` accepts.
      eval_env: Where evaluation plays (never the training environment);
        by default a copy of `env` with another seed when `env` is an id or
        a factory.
      twin_critic: The second critic; by default a copy of `critic`.
    """
    owner = type(self).__name__
    for name, module in (("actor", actor), ("critic", critic)):
      arguments.check_module(owner, name, module)
    self._setup(optimizer, env, eval_env)
    self.policy = self.make_policy()
    self.actor, self.critic, self.optimizer = actor, critic, optimizer
    if twin_critic is None:
      twin_critic = self.copy(critic, "critic", "twin critic", "twin_critic")
    self.twin_critic = twin_critic
    self._own_state = None  # `build_state`'s, made by the first build.
    # Made by `build`; None until then (trackables() is listed before).
    self.target_critic = self.target_twin_critic = None
    return self.run()

  def copy(self, network: Any, name: str, what: str,
           argument: str | None = None) -> Any:
    """A deep copy of `network`, or a TypeError that says what to pass
    (`argument`, the `__call__` argument that would replace the copy)."""
    try:
      return copy.deepcopy(network)
    except Exception as error:  # pylint: disable=broad-except
      owner = type(self).__name__
      if argument is None:
        raise TypeError(UNCOPYABLE_ERROR.format(
            owner=owner, network=name, what=what, error=error)) from error
      raise TypeError(COPY_ERROR.format(
          owner=owner, network=name, what=what, error=error,
          argument=argument, call=owner.lower())) from error

  # ---- Engine interface. ----

  def models(self):
    return {"actor": self.actor, "critic": self.critic,
            "twin_critic": self.twin_critic}

  def learners(self):
    return dict(self.models(), target_critic=self.target_critic,
                target_twin_critic=self.target_twin_critic,
                **self.extra_learners(), optimizer=self.optimizer)

  def trackables(self):
    named = super().trackables()
    if self.normalizer is not None:
      named["observation_normalizer"] = self.normalizer
    return named

  def check_action_space(self, space):
    if not isinstance(space, envs_base.Box):
      raise ValueError(NOT_BOX_ERROR.format(
          owner=type(self).__name__, space=policies.describe(space)))

  def build(self):
    owner = type(self).__name__
    spec, space = self.env.observation_spec, self.env.action_space
    example = self._reset()
    self.normalizer = (normalization.ObservationNormalizer(spec.shape)
                       if self.normalize_observations else None)
    self.policy.check(self.actor(self.normalize(example)))
    action = tf.zeros([1] + list(space.shape), tf.float32)
    for name in ("critic", "twin_critic"):
      self._q(getattr(self, name), example, action, name)
    self.target_critic = self.copy(self.critic, "critic", "target critics",
                                   "twin_critic")
    self.target_twin_critic = self.copy(self.twin_critic, "critic",
                                        "target critics", "twin_critic")
    self.build_targets()
    self.start_targets(self.target_pairs(),
                       f"{owner}: the twin critic must have the same "
                       f"variables (shapes, in order) as the critic.")
    self._build_replay(**self._state_of_this_call())
    self._center = tf.constant((space.low + space.high) / 2)
    self._half = tf.constant((space.high - space.low) / 2)
    self.build_optimizers()

  def _state_of_this_call(self) -> dict[str, tf.Variable]:
    """`build_state()` once per `__call__`, its first values put back at
    every later build: an optimizer built with a trained one (SAC's
    log_alpha) keeps it for a second `run()` (a dry run's resume)."""
    if self._own_state is None or self.runner.builds_per_run > 1:
      # A runner that builds several copies: each build makes its own.
      self._own_state = self.build_state()
      self._own_initial = {name: variable.numpy()
                           for name, variable in self._own_state.items()}
    for name, variable in self._own_state.items():
      variable.assign(self._own_initial[name])
    return self._own_state

  def build_optimizers(self) -> None:
    """Creates the optimizer's slots (in `build`)."""
    self.build_optimizer(self.optimizer, self._trained_variables())

  def build_targets(self) -> None:
    """Makes the subclass's own target networks (before they are
    started)."""

  @autograph.as_written
  def target_pairs(self) -> tuple[tuple[list[tf.Variable],
                                        list[tf.Variable]], ...]:
    """(target, online) variable lists of the target critics."""
    return ((list(self.target_critic.trainable_variables),
             list(self.critic.trainable_variables)),
            (list(self.target_twin_critic.trainable_variables),
             list(self.twin_critic.trainable_variables)))

  @autograph.as_written
  def critic_variables(self) -> list[tf.Variable]:
    return (list(self.critic.trainable_variables) +
            list(self.twin_critic.trainable_variables))

  def _trained_variables(self) -> list[tf.Variable]:
    """What the optimizer updates; the networks must not share any."""
    variables = list(self.actor.trainable_variables) + self.critic_variables()
    if len({v.ref() for v in variables}) != len(variables):
      raise ValueError(f"{type(self).__name__}: the actor, the critic and the "
                       f"twin critic must not share variables (each is "
                       f"trained on its own loss).")
    return variables

  # ---- Networks. ----

  @autograph.as_written
  def normalize(self, observations: tf.Tensor) -> tf.Tensor:
    """Observations as the networks see them (normalised, if asked)."""
    if self.normalizer is None:
      return observations
    return self.normalizer(observations)

  @autograph.as_written
  def _q(self, critic, observations, unit_actions, name="critic"):
    """Q-values `[batch]` of normalised observations and [-1, 1] actions."""
    flat = tf.reshape(tf.cast(observations, tf.float32),
                      [tf.shape(observations)[0], -1])
    return policies.values_of(type(self).__name__, name,
                              self.forward(
                                  critic, tf.concat([flat, unit_actions],
                                                    axis=-1)))

  @autograph.as_written
  def target_q(self, next_observations: tf.Tensor,
               next_actions: tf.Tensor) -> tf.Tensor:
    """The smaller of the two target critics' Q-values."""
    return tf.minimum(
        self._q(self.target_critic, next_observations, next_actions),
        self._q(self.target_twin_critic, next_observations, next_actions))

  @autograph.as_written
  def critic_loss(self, observations: tf.Tensor, actions: tf.Tensor,
                  targets: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
    """Both critics' mean squared error to `targets` (halved sum), and the
    first critic's Q-values (call under the tape)."""
    q1 = self._q(self.critic, observations, actions)
    q2 = self._q(self.twin_critic, observations, actions)
    return 0.5 * (tf.reduce_mean(tf.square(q1 - targets)) +
                  tf.reduce_mean(tf.square(q2 - targets))), q1

  @autograph.as_written
  def unit_to_env(self, unit_actions: tf.Tensor) -> tf.Tensor:
    """Actions in [-1, 1] rescaled to the environment's box."""
    return self._center + self._half * unit_actions

  @autograph.as_written
  def env_to_unit(self, actions: tf.Tensor) -> tf.Tensor:
    """The environment's actions rescaled to [-1, 1]."""
    return (actions - self._center) / self._half

  @autograph.as_written
  def random_unit_actions(self) -> tf.Tensor:
    """Uniform actions in [-1, 1] for every environment."""
    return self.rng.uniform(self._unit_actions_shape(), -1.0, 1.0)

  def _unit_actions_shape(self) -> list[int]:
    return [self.env.num_envs] + list(self.env.action_space.shape)

  @autograph.as_written
  def random_or(self, policy_actions: Callable[[], tf.Tensor],
                policy_draws: Callable[[], Any]) -> tf.Tensor:
    """Unit actions: uniform in [-1, 1] for the first `learning_starts`
    transitions (`still_random`), else `policy_actions()`.

    Only the side played is computed (no actor in the warm-up, no uniform
    draw after it), yet the generator moves as if both sides were drawn,
    the uniform first: the random side then calls `policy_draws()`, which
    must move it as `policy_actions()` does, and the policy side skips the
    uniform draw's numbers. So a run's numbers are those of drawing both.
    """
    count = math.prod(self._unit_actions_shape())

    def random():
      actions = self.random_unit_actions()
      policy_draws()
      return actions

    def policy():
      self.rng.skip(count)
      return policy_actions()

    return carried.cond(self.still_random(), random, policy)

  @autograph.as_written
  def still_random(self) -> tf.Tensor:
    """Whether this step plays uniform random actions (the first
    `learning_starts` transitions)."""
    return self.step_variable * self.env.num_envs < self.learning_starts

  # ---- The traced step (`OffPolicy.train_step`). ----

  @autograph.as_written
  def observed(self, observation):
    if self.normalizer is not None:
      self.normalizer.update(observation)

  def learn(self):  # Rewritten: `repeat` loops over a tf.range.
    self.repeat(self.gradient_steps, self.update)

  @autograph.as_written
  def greedy(self, observation):
    return self.policy.greedy(autograph.as_user_code(self.actor)(
        self.normalize(observation)))

  # ---- Acting and export. ----

  def greedy_act(self, observation: Any) -> tf.Tensor:
    """The greedy action(s) for raw observation(s), one or a batch."""
    return self.policy.act(lambda x: self.actor(self.normalize(x)),
                           observation, self.env.observation_spec, True)

  def export(self, directory: str) -> str:
    """Writes the greedy policy (`snt.export.save_policy`); the path.

    "serving_default": `observation` -> the greedy action, with the
    observation normalisation (if any) applied first.
    """
    return export_lib.save_policy(
        policies.GreedyActor(self.actor, self.policy), directory,
        self.env.observation_spec, self.env.action_space, sampling=False,
        preprocess=self.normalizer)


def check_finite_or_none(owner: str, name: str, value: Any) -> None:
  """Refuses what is neither None nor a finite number."""
  if value is not None and (
      isinstance(value, bool) or not isinstance(value, (int, float)) or
      not math.isfinite(value)):
    raise ValueError(f"{owner}: {name} must be a finite number or None, got "
                     f"{value!r}.")
