"""`DQN`: deep Q-learning with a replay buffer and a target network.

    dqn = snt.scenarios.DQN(num_env_steps=50_000, learning_starts=1_000)
    dqn(q_network, optimizer, env, eval_env=eval_env)

One scenario step is one step of all `num_envs` environments (epsilon-greedy
actions from the scenario's generator) stored in a `ReplayBuffer`, plus
`gradient_steps` gradient updates every `train_every` steps once
`learning_starts` transitions are stored, plus a target-network sync every
`target_update_every` steps. All of it runs inside the compiled step, so
with an in-graph environment and `steps_per_call=K` a call plays and
learns for K steps without Python.
"""

import copy
from typing import Any, Callable

import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import autograph
from sonnet_like import envs
from sonnet_like import export as export_lib
from sonnet_like.scenarios.run_folder import history as history_lib
from sonnet_like.scenarios import schedules
from sonnet_like.scenarios.compiled import carried
from sonnet_like.scenarios.rl import off_policy
from sonnet_like.scenarios.rl import q_learning
from sonnet_like.scenarios.rl import recipes

NOT_DISCRETE_ERROR = (
    "DQN: the environment's actions must be Discrete (one Q-value per "
    "action), got {space!r}. Use a policy-gradient scenario (PPO, "
    "REINFORCE) for continuous actions.")

TARGET_COPY_ERROR = (
    "DQN: could not copy q_network for the target network ({error}). Pass "
    "target_network=... (a second instance of the same network) to "
    "dqn(q_network, optimizer, env, target_network=...).")


def _epsilon_schedule(value: Any, num_steps: int) -> schedules.Schedule:
  if isinstance(value, schedules.Schedule):
    return value
  if isinstance(value, (int, float)) and not isinstance(value, bool):
    return schedules.ConstantSchedule(float(value))
  if isinstance(value, tuple) and len(value) == 3:
    start, end, fraction = value
    if isinstance(fraction, (int, float)) and 0 < fraction <= 1:
      return schedules.LinearSchedule(
          start, end, steps=max(1, int(round(fraction * num_steps))))
  raise ValueError(f"DQN: epsilon must be a number, (start, end, fraction) "
                   f"with 0 < fraction <= 1 or a Schedule, got {value!r}.")


class DQN(off_policy.OffPolicy):
  """Trains a Q-network with DQN (optionally double DQN) on discrete actions.

  Counting: `num_env_steps` and `learning_starts` count transitions (each
  scenario step adds `num_envs` of them); `train_every`,
  `target_update_every`, `eval_every`, `save_every`, `log_every` and
  `steps_per_call` count scenario steps (one step of every environment).
  The epsilon schedule is a function of the scenario step, so a resumed run
  continues it exactly; the replay buffer, target network, environment state
  (in-graph environments), episode statistics, optimizer and generator are
  all in the checkpoint.

  Logs: "loss" and "q_mean" of the latest update, "epsilon", and the
  `EpisodeStats` logs ("episode_return", "episode_length", "episodes",
  "env_steps"). Evaluation (`eval_every`, and at the end) plays
  `eval_episodes` whole episodes greedily in the evaluation environment and
  reports the mean "return" (and "return_std") and "length" of them, as
  the other RL scenarios do.

  DQN runs under the default strategy: a multi-replica strategy would need
  one batch of environments per replica, and is refused.

      >>> import keras, sonnet_like as snt
      >>> dqn = snt.scenarios.DQN(num_env_steps=1_200, num_envs=4,
      ...                         learning_starts=100, batch_size=32,
      ...                         target_update_every=20, steps_per_call=50,
      ...                         epsilon=(1.0, 0.05, 0.3), eval_episodes=8,
      ...                         progress=False)
      >>> history = dqn(snt.nets.MLP([16, 2], name="q"),
      ...               keras.optimizers.Adam(0.01),
      ...               snt.envs.Guess(num_envs=4, seed=1),
      ...               eval_env=snt.envs.Guess(num_envs=4, seed=2))
      >>> history.eval["return"][-1] > 4   # Random play returns 2.5.
      True

  Args:
    num_env_steps: Transitions to collect in total (rounded up to whole
      steps of all environments).
    num_envs: Environments stepped together; None takes the environment's
      own count (1 for a gymnasium id or factory).
    buffer_size: Replay buffer capacity, in transitions.
    batch_size: Transitions per gradient update.
    learning_starts: Transitions to collect before the first update.
    train_every: Scenario steps between rounds of gradient updates.
    gradient_steps: Gradient updates per round (Stable-Baselines3's
      `train_freq=256, gradient_steps=128` is `train_every=256,
      gradient_steps=128` with one environment).
    target_update_every: Scenario steps between target-network syncs.
    tau: Sync weight: 1 copies the online network (hard update), smaller
      values move the target by `tau` towards it (Polyak averaging).
    gamma: Discount.
    epsilon: Exploration: a number, `(start, end, fraction)` for a linear
      decay over `fraction` of the run, or a `schedules.Schedule` of the
      scenario step.
    double_dqn: Pick the bootstrap action with the online network.
    learning_rate_schedule: None (the optimizer's rate throughout),
      "linear" (the rate times `1 - step / num_steps`, so it falls to 0 at
      the end of the run; the final greedy policy then moves little) or a
      `schedules.Schedule` of the step giving the factor (the engine's
      setting).
    loss: "huber" (smooth L1, as most DQN implementations) or "mse".
    eval_episodes: Episodes per greedy evaluation.
    **kwargs: Loop settings of `Scenario` (steps_per_call, eval_every,
      save_every, save_dir, jit_compile, on_nonfinite, clip_norm, seed,
      hooks, progress, ...).
  """

  logged = ("loss", "q_mean")
  state_name = "dqn_state"

  def __init__(self, num_env_steps: int, *, num_envs: int | None = None,
               buffer_size: int = 100_000, batch_size: int = 64,
               learning_starts: int = 1_000, train_every: int = 1,
               gradient_steps: int = 1, target_update_every: int = 100,
               tau: float = 1.0,
               gamma: float = 0.99,
               epsilon: Any = (1.0, 0.05, 0.1), double_dqn: bool = True,
               loss: str = "huber", eval_episodes: int = 10,
               learning_rate_schedule: str | schedules.Schedule | None = None,
               **kwargs):
    super().__init__(num_env_steps, num_envs=num_envs,
                     buffer_size=buffer_size, batch_size=batch_size,
                     learning_starts=learning_starts, train_every=train_every,
                     eval_episodes=eval_episodes,
                     learning_rate_schedule=learning_rate_schedule, **kwargs)
    arguments.check_positive_int("DQN", "gradient_steps", gradient_steps)
    arguments.check_positive_int("DQN", "target_update_every",
                                 target_update_every)
    if not (isinstance(tau, (int, float)) and 0 < tau <= 1):
      raise ValueError(f"DQN: tau must be in (0, 1], got {tau!r}.")
    if not (isinstance(gamma, (int, float)) and 0 <= gamma <= 1):
      raise ValueError(f"DQN: gamma must be in [0, 1], got {gamma!r}.")
    if loss not in q_learning.LOSSES:
      raise ValueError(f"DQN: loss must be one of "
                       f"{list(q_learning.LOSSES)}, got {loss!r}.")
    self.gradient_steps = gradient_steps
    self.target_update_every, self.tau = target_update_every, float(tau)
    self.gamma, self.double_dqn = float(gamma), bool(double_dqn)
    self.loss = loss
    self._epsilon_setting = epsilon
    self.epsilon = _epsilon_schedule(epsilon, self.num_steps)

  @classmethod
  def recipe(cls, task: str) -> recipes.Recipe:
    """The documented settings for `task` (see `rl.recipes.DQN_RECIPES`);
    `recipe.q_network()` makes its network."""
    return recipes.find(cls, recipes.DQN_RECIPES, task)

  def __call__(self, q_network: Callable[[tf.Tensor], tf.Tensor],
               optimizer: Any, env: Any, eval_env: Any = None,
               target_network: Any = None) -> history_lib.History:
    """Trains (or resumes training) and returns the `History`.

    Args:
      q_network: Maps observations `[batch, ...]` to Q-values
        `[batch, num_actions]` (an `snt.Module` or any `tf.Module`).
      optimizer: A Keras or sonnet_like optimizer.
      env: An `snt.envs.Environment`, or anything `snt.envs.make` accepts
        (gymnasium id, Env, VectorEnv, factory).
      eval_env: Where evaluation plays (never the training environment);
        by default a copy of `env` with another seed when `env` is an id or a
        factory (with `min(eval_episodes, 100)` environments).
      target_network: The module to hold the target weights; by default a
        deep copy of `q_network`.
    """
    if not callable(q_network):
      raise TypeError(f"DQN: q_network must be callable, got {q_network!r}.")
    self._setup(optimizer, env, eval_env)
    self.epsilon = _epsilon_schedule(self._epsilon_setting, self.num_steps)
    self.q_network, self.optimizer = q_network, optimizer
    self._target_given = target_network
    self.target_network = target_network  # None: `build` copies q_network.
    return self.run()

  # ---- Engine interface. ----

  def models(self):
    return {"q_network": self.q_network}

  def learners(self):
    return {"q_network": self.q_network, "target_network": self.target_network,
            "optimizer": self.optimizer}

  def check_action_space(self, space):
    if not isinstance(space, envs.Discrete):
      raise ValueError(NOT_DISCRETE_ERROR.format(space=space))

  def build(self):
    num_actions = self.env.action_space.num_actions
    spec = self.env.observation_spec
    example = self._reset()
    values = self.q_network(example)
    if values.shape.as_list() != [1, num_actions]:
      raise ValueError(f"DQN: q_network must map observations [batch, "
                       f"{', '.join(map(str, spec.shape))}] to Q-values "
                       f"[batch, {num_actions}], got output shape "
                       f"{values.shape.as_list()[1:]} per observation.")
    if self._target_given is None:
      try:
        self.target_network = copy.deepcopy(self.q_network)
      except Exception as error:  # pylint: disable=broad-except
        raise TypeError(TARGET_COPY_ERROR.format(error=error)) from error
    else:
      self.target_network = self._target_given
      self.target_network(example)
    self.start_targets(self._target_pairs(),
                       "DQN: target_network must have the same variables "
                       "(shapes, in order) as q_network.")
    self._build_replay()
    self.build_optimizer(self.optimizer, self.q_network.trainable_variables)

  @autograph.as_written
  def _online_variables(self) -> list[tf.Variable]:
    return list(self.q_network.trainable_variables)

  @autograph.as_written
  def _target_pairs(self):
    return ((list(self.target_network.trainable_variables),
             self._online_variables()),)

  @autograph.as_written
  def act(self, observation: tf.Tensor, epsilon: tf.Tensor) -> tf.Tensor:
    """Epsilon-greedy actions from `self.rng` (traced)."""
    n = tf.shape(observation)[0]
    num_actions = self.env.action_space.num_actions
    greedy = tf.argmax(autograph.as_user_code(self.q_network)(observation),
                       axis=-1, output_type=tf.int32)
    explore = self.rng.uniform([n]) < epsilon
    random = self.rng.uniform([n], minval=0, maxval=num_actions,
                              dtype=tf.int32)
    return tf.where(explore, random, greedy)

  @autograph.as_written
  def update(self) -> tuple[tf.Tensor, tf.Tensor]:
    """One gradient step on a sampled batch; returns (loss, mean Q)."""
    batch = self.buffer.sample(self.batch_size, self.rng)
    next_target = self.forward(self.target_network,
                               batch.next_observation)
    next_online = (self.forward(self.q_network,
                                batch.next_observation)
                   if self.double_dqn
                   else None)
    targets = q_learning.td_targets(batch.reward, batch.terminated, next_target,
                         self.gamma, next_online)
    variables = self._online_variables()
    with tf.GradientTape() as tape:
      q = tf.gather(self.forward(self.q_network, batch.observation),
                    batch.action, axis=1,
                    batch_dims=1)
      error = tf.cast(q, tf.float32) - targets
      losses = (q_learning.huber(error) if self.loss == "huber" else
                tf.square(error))
      loss = tf.reduce_mean(losses)
    finite = self.minimize(tape, loss, variables, self.optimizer)
    q_mean = tf.reduce_mean(tf.cast(q, tf.float32))
    self.record(finite, loss=loss, q_mean=q_mean)
    return loss, q_mean

  @autograph.as_written
  def sync_target(self) -> None:
    """Moves the target network to the online one (by `tau`)."""
    self.move_targets(self._target_pairs(), self.tau)

  # ---- The traced step (`OffPolicy.train_step`). ----

  @autograph.as_written
  def explore(self, observation):
    return self.act(observation, autograph.as_user_code(self.epsilon)(
        self.step_variable))

  def learn(self):  # Rewritten: `repeat` loops over a tf.range.
    self.repeat(self.gradient_steps, self.update)

  @autograph.as_written
  def after_learning(self, step):
    def sync():
      self.sync_target()
      return tf.constant(True)

    carried.cond(tf.equal(step % self.target_update_every, 0), sync,
                      lambda: tf.constant(False))

  @autograph.as_written
  def logs(self):
    return dict(super().logs(), epsilon=autograph.as_user_code(self.epsilon)(
        self.step_variable))

  @autograph.as_written
  def greedy(self, observation):
    return tf.argmax(autograph.as_user_code(self.q_network)(observation),
                     axis=-1, output_type=tf.int32)

  # ---- Export (end of run with export_dir=...). ----

  def export(self, directory: str) -> str:
    """Writes the greedy policy of the Q-network (`snt.export.save_policy`).

    "serving_default": `observation` -> `action`, the arg-max Q-value (no
    exploration). Returns the path.
    """
    return export_lib.save_policy(
        self.q_network, directory, self.env.observation_spec,
        self.env.action_space, sampling=False,
        # Observation normalisation, once DQN has it, goes here.
        preprocess=None)

