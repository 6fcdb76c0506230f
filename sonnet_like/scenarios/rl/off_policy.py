"""`OffPolicy`: what DQN, SAC and TD3 share on top of the engine (SAC and TD3
through `rl.twin_critics`).

One engine step is one step of all `num_envs` environments: actions from
the subclass's `explore`, the transitions stored in a `ReplayBuffer`, plus
the subclass's `learn` every `train_every` steps once `learning_starts`
transitions are stored. All of it runs inside the compiled step, so with an
in-graph environment and `steps_per_call=K` a call plays and learns for K
steps without Python. `num_env_steps`, `learning_starts` and `buffer_size`
count transitions; `train_every`, `eval_every`, `save_every`, `log_every`
and `steps_per_call` count scenario steps.

Shared here: the argument checks, the environments (made and checked as
`rl.environments` says, reset with the scenario's seed), the replay buffer
and episode statistics, target networks (checked against the online ones,
started equal, then moved by `tau`), the logged values of the latest update
(kept in variables, so a step that does not learn logs the last ones), and
greedy evaluation over `eval_episodes` episodes. The checkpoint holds the
subclass's trackables plus the replay buffer, the environment (in-graph
environments), the episode statistics and the logged values.

Off-policy scenarios run under the default strategy only: a multi-replica
strategy would need one batch of environments per replica.
"""

from typing import Any, Iterable, Sequence

import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import autograph
from sonnet_like.envs import base as envs_base
from sonnet_like.scenarios import engine
from sonnet_like.scenarios import schedules
from sonnet_like.scenarios.compiled import carried
from sonnet_like.scenarios.rl.parts import environments
from sonnet_like.scenarios.rl.parts import episodes
from sonnet_like.scenarios.rl.parts import replay


class OffPolicy(engine.Scenario):
  """Base class of DQN and `TwinCritics` (SAC, TD3; see the module docstring).

  A subclass sets `logged` (the names of the values its updates log) and
  `state_name` (the checkpoint's name for them), and provides `learners()`
  (its models, target networks and optimizer, by name),
  `check_action_space(space)`, `explore(observation)` (traced: the actions
  to play), `learn()` (traced: its updates, which `record` their logged
  values) and `greedy(observation)` (the evaluation policy).

  Args:
    num_env_steps, num_envs, buffer_size, batch_size, learning_starts,
      train_every, eval_episodes: As documented in `DQN` and `SAC`.
    learning_rate_schedule: None (the optimizers' rates throughout),
      "linear" (every rate times `1 - step / num_steps`, falling to 0 at
      the end, as Stable-Baselines3's "lin_" rates) or a
      `schedules.Schedule` of the step giving the factor (the engine's
      setting).
    **kwargs: Loop settings of `Scenario`.
  """

  logged: Sequence[str] = ()
  state_name = "off_policy_state"

  def __init__(self, num_env_steps: int, *, num_envs: int | None,
               buffer_size: int, batch_size: int, learning_starts: int,
               train_every: int, eval_episodes: int,
               learning_rate_schedule: str | schedules.Schedule | None = None,
               **kwargs):
    owner = type(self).__name__
    for name, value in (("num_env_steps", num_env_steps),
                        ("num_envs", num_envs), ("buffer_size", buffer_size),
                        ("batch_size", batch_size),
                        ("train_every", train_every),
                        ("eval_episodes", eval_episodes)):
      arguments.check_positive_int(owner, name, value,
                                   optional=name == "num_envs")
    arguments.check_non_negative_int(owner, "learning_starts",
                                     learning_starts)
    super().__init__(self._steps(num_env_steps, num_envs or 1), **kwargs)
    self._schedule_setting = learning_rate_schedule
    self._resolve_schedule()
    environments.check_strategy(owner, self.strategy)
    if self.accumulate_steps > 1:
      raise ValueError(
          f"{owner}: accumulate_steps must be 1, got "
          f"{self.accumulate_steps}: its updates come from the replay buffer "
          "every train_every steps, not once per step, so there is no "
          "step's gradient to sum; raise batch_size for larger updates.")
    self.num_env_steps, self.num_envs = num_env_steps, num_envs
    self.buffer_size, self.batch_size = buffer_size, batch_size
    self.learning_starts, self.train_every = learning_starts, train_every
    self.eval_episodes = eval_episodes
    self._evaluation: environments.GreedyEvaluation | None = None

  @staticmethod
  def _steps(num_env_steps: int, num_envs: int) -> int:
    return -(-num_env_steps // num_envs)

  def _resolve_schedule(self) -> None:
    """The engine's `learning_rate_schedule`, "linear" over this run's
    scenario steps (again in `_setup`, once the environment gives
    num_envs)."""
    self.learning_rate_schedule = schedules.learning_rate_factor(
        type(self).__name__, self._schedule_setting, self.num_steps,
        "scenario steps done")

  # ---- What a subclass provides. ----

  def learners(self) -> dict[str, Any]:
    """The models, target networks and optimizer, by checkpoint name."""
    raise NotImplementedError

  def check_action_space(self, space: envs_base.ActionSpace) -> None:
    """Raises if the scenario cannot act in `space`."""

  def explore(self, observation: tf.Tensor) -> tf.Tensor:
    """Traced: the actions to play from `observation`."""
    raise NotImplementedError

  def learn(self) -> None:
    """Traced: one round of updates from the replay buffer."""
    raise NotImplementedError

  def greedy(self, observation: tf.Tensor) -> tf.Tensor:
    """The actions evaluation plays."""
    raise NotImplementedError

  @autograph.as_written
  def stepped(self, timestep: envs_base.TimeStep) -> None:
    """Traced, right after the environments' step: per-episode bookkeeping
    (e.g. resetting exploration noise where episodes ended)."""
    del timestep  # Nothing by default.

  @autograph.as_written
  def observed(self, observation: tf.Tensor) -> None:
    """Traced, once the step's transitions are stored: more bookkeeping."""
    del observation  # Nothing by default (a body AutoGraph can convert).

  @autograph.as_written
  def after_learning(self, step: tf.Tensor) -> None:
    """Traced, after the step's updates (`step` 1-based)."""
    del step  # Nothing by default.

  @autograph.as_written
  def logs(self) -> dict[str, tf.Tensor]:
    """Traced: the step's logs before the episode statistics."""
    return {name: getattr(self._state, name).read_value()
            for name in self.logged}

  # ---- Shared parts of `__call__` and `build`. ----

  def _setup(self, optimizer: Any, env: Any, eval_env: Any) -> None:
    """Checks the optimizer and makes the environments (call in
    `__call__`)."""
    owner = type(self).__name__
    environments.check_strategy(owner, self.strategy)
    self.check_optimizer(optimizer)
    self.env = environments.make_env(owner, env, self.num_envs, self.seed)
    self.check_action_space(self.env.action_space)
    if self.buffer_size < self.env.num_envs:
      raise ValueError(f"{owner}: buffer_size must be at least num_envs "
                       f"({self.env.num_envs}), got {self.buffer_size}.")
    self.eval_env = environments.make_eval_env(
        owner, env, self.env, eval_env, eval_episodes=self.eval_episodes,
        eval_every=self.eval_every, seed=self.seed + 1)
    self.num_steps = self._steps(self.num_env_steps, self.env.num_envs)
    self._resolve_schedule()
    self._evaluation = None
    # Made by `build` (`_build_replay`); None until then, so trackables()
    # can be listed before (a population builds every member's own).
    self.buffer = self.stats = self._state = None

  def _reset(self) -> tf.Tensor:
    """Resets the environments (in `build`); an example observation."""
    self.env.reset(seed=self.seed)
    envs_base.check_shapes(self.env, type(self).__name__)
    spec = self.env.observation_spec
    return tf.zeros([1] + spec.shape.as_list(), spec.dtype)

  def _build_replay(self, **variables: tf.Variable) -> None:
    """The replay buffer, the episode statistics and the logged values
    (plus `variables`, checkpointed with them), in `build`."""
    env = self.env
    self.buffer = replay.ReplayBuffer(self.buffer_size, env.observation_spec,
                                      env.action_space.spec)
    self.stats = episodes.EpisodeStats(env.num_envs)
    self._state = tf.Module(name=self.state_name)
    for name, variable in variables.items():
      setattr(self._state, name, variable)
    for name in self.logged:
      setattr(self._state, name, tf.Variable(0.0, trainable=False, name=name))

  def trackables(self) -> dict[str, Any]:
    named = dict(self.learners(), replay_buffer=self.buffer, env=self.env,
                 episode_stats=self.stats)
    named[self.state_name] = self._state
    return named

  @staticmethod
  @autograph.as_written
  def repeat(times: int, update) -> None:
    """Traced: `update()` `times` times; more than once in a while loop,
    so that a round of many gradient steps is traced once (128 unrolled
    updates took minutes to trace). The loop is `control_flow`'s: in a
    population it carries the member's state."""
    if times == 1:
      update()
      return

    def body(i):
      update()
      return (i + 1,)

    carried.while_loop(lambda i: i < times, body, [tf.constant(0)])

  @staticmethod
  def start_targets(pairs: Iterable[tuple[Sequence[tf.Variable],
                                          Sequence[tf.Variable]]],
                    error: str) -> None:
    """Checks each (target, online) list of variables for equal shapes
    (else `error`) and makes the target equal to the online one."""
    for target, online in pairs:
      if [v.shape for v in target] != [v.shape for v in online]:
        raise ValueError(error)
      for t, o in zip(target, online):
        t.assign(o)

  @staticmethod
  @autograph.as_written
  def move_targets(pairs: Iterable[tuple[Sequence[tf.Variable],
                                         Sequence[tf.Variable]]],
                   tau: float) -> None:
    """Moves each target by `tau` towards its online variables (a copy at
    `tau=1`)."""
    for target, online in pairs:
      for t, o in zip(target, online):
        if tau == 1.0:
          t.assign(o)
        else:
          t.assign(tau * o + (1.0 - tau) * t)

  @autograph.as_written
  def record(self, finite: tf.Tensor, **values: tf.Tensor) -> None:
    """Keeps an update's logged values, if the update was finite."""
    for name, value in values.items():
      variable = getattr(self._state, name)
      variable.assign(tf.where(finite, value, variable))

  # ---- The traced step. ----

  @autograph.as_written
  def train_step(self):
    owner, env = type(self).__name__, self.env
    step = self.step_variable + 1  # This step's number, 1-based.
    # What a user gives or a subclass overrides is rewritten by AutoGraph,
    # the rest runs as written (`autograph.as_user_code`).
    user = autograph.as_user_code
    observation = envs_base.checked(env, user(env.observation)(),
                                    "observation", "observation()", owner)
    action = user(self.explore)(observation)
    timestep = envs_base.checked_timestep(env, user(env.step)(action), owner)
    self.stats.update(timestep)
    user(self.stepped)(timestep)
    self.buffer.add(replay.Transition(
        observation=observation, action=action,
        reward=tf.cast(timestep.reward, tf.float32),
        next_observation=timestep.final_observation,
        terminated=tf.cast(timestep.terminated, tf.bool)))

    def learn():
      user(self.learn)()
      return tf.constant(True)

    user(self.observed)(observation)
    learning = tf.logical_and(
        step * env.num_envs >= self.learning_starts,
        tf.equal(step % self.train_every, 0))
    carried.cond(learning, learn, lambda: tf.constant(False))
    user(self.after_learning)(step)
    logs = user(self.logs)()
    logs.update(self.stats.logs())
    return logs

  def evaluate_now(self):
    if self.eval_env is None:
      return None
    if self._evaluation is None:
      self._evaluation = environments.GreedyEvaluation(
          self.eval_env, self.greedy, self.eval_episodes)
    return self._evaluation(seed=self.seed + 1 + self.step)
