"""`DQN`: deep Q-learning with a replay buffer and a target network.

    dqn = snt.scenarios.DQN(num_env_steps=50_000, learning_starts=1_000)
    dqn(q_network, optimizer, env, eval_env=eval_env)

One scenario step is one step of all `num_envs` environments (epsilon-greedy
actions from the scenario's generator) stored in a `ReplayBuffer`, plus a
gradient update every `train_every` steps once `learning_starts` transitions
are stored, plus a target-network sync every `target_update_every` steps.
All of it runs inside the compiled step, so with an in-graph environment and
`steps_per_call=K` a call plays and learns for K steps without Python.
"""

import copy
from typing import Any, Callable

import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like import envs
from sonnet_like.envs import base as envs_base
from sonnet_like import export as export_lib
from sonnet_like.scenarios import engine
from sonnet_like.scenarios import history as history_lib
from sonnet_like.scenarios.rl import environments
from sonnet_like.scenarios.rl import episodes
from sonnet_like.scenarios.rl import q_learning
from sonnet_like.scenarios.rl import replay
from sonnet_like.scenarios.rl import schedules

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


class DQN(engine.Scenario):
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
    train_every: Scenario steps between gradient updates.
    target_update_every: Scenario steps between target-network syncs.
    tau: Sync weight: 1 copies the online network (hard update), smaller
      values move the target by `tau` towards it (Polyak averaging).
    gamma: Discount.
    epsilon: Exploration: a number, `(start, end, fraction)` for a linear
      decay over `fraction` of the run, or a `schedules.Schedule` of the
      scenario step.
    double_dqn: Pick the bootstrap action with the online network.
    loss: "huber" (smooth L1, as most DQN implementations) or "mse".
    eval_episodes: Episodes per greedy evaluation.
    **kwargs: Loop settings of `Scenario` (steps_per_call, eval_every,
      save_every, save_dir, jit_compile, on_nonfinite, clip_norm, seed,
      hooks, progress, ...).
  """

  def __init__(self, num_env_steps: int, *, num_envs: int | None = None,
               buffer_size: int = 100_000, batch_size: int = 64,
               learning_starts: int = 1_000, train_every: int = 1,
               target_update_every: int = 100, tau: float = 1.0,
               gamma: float = 0.99,
               epsilon: Any = (1.0, 0.05, 0.1), double_dqn: bool = True,
               loss: str = "huber", eval_episodes: int = 10, **kwargs):
    check = arguments.check_positive_int
    check("DQN", "num_env_steps", num_env_steps)
    check("DQN", "num_envs", num_envs, optional=True)
    check("DQN", "buffer_size", buffer_size)
    check("DQN", "batch_size", batch_size)
    check("DQN", "train_every", train_every)
    check("DQN", "target_update_every", target_update_every)
    check("DQN", "eval_episodes", eval_episodes)
    arguments.check_non_negative_int("DQN", "learning_starts", learning_starts)
    if not (isinstance(tau, (int, float)) and 0 < tau <= 1):
      raise ValueError(f"DQN: tau must be in (0, 1], got {tau!r}.")
    if not (isinstance(gamma, (int, float)) and 0 <= gamma <= 1):
      raise ValueError(f"DQN: gamma must be in [0, 1], got {gamma!r}.")
    if loss not in q_learning.LOSSES:
      raise ValueError(f"DQN: loss must be one of "
                       f"{list(q_learning.LOSSES)}, got {loss!r}.")
    super().__init__(self._steps(num_env_steps, num_envs or 1), **kwargs)
    environments.check_strategy("DQN", self.strategy)
    self.num_env_steps, self.num_envs = num_env_steps, num_envs
    self.buffer_size, self.batch_size = buffer_size, batch_size
    self.learning_starts, self.train_every = learning_starts, train_every
    self.target_update_every, self.tau = target_update_every, float(tau)
    self.gamma, self.double_dqn = float(gamma), bool(double_dqn)
    self.loss, self.eval_episodes = loss, eval_episodes
    self._epsilon_setting = epsilon
    self.epsilon = _epsilon_schedule(epsilon, self.num_steps)
    self._evaluation: environments.GreedyEvaluation | None = None

  @staticmethod
  def _steps(num_env_steps: int, num_envs: int) -> int:
    return -(-num_env_steps // num_envs)

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
    environments.check_strategy("DQN", self.strategy)
    if not callable(q_network):
      raise TypeError(f"DQN: q_network must be callable, got {q_network!r}.")
    self.traced_step.check_optimizer(optimizer)
    self.env = environments.make_env("DQN", env, self.num_envs, self.seed)
    space = self.env.action_space
    if not isinstance(space, envs.Discrete):
      raise ValueError(NOT_DISCRETE_ERROR.format(space=space))
    if self.buffer_size < self.env.num_envs:
      raise ValueError(f"DQN: buffer_size must be at least num_envs "
                       f"({self.env.num_envs}), got {self.buffer_size}.")
    self.eval_env = environments.make_eval_env(
        "DQN", env, self.env, eval_env, eval_episodes=self.eval_episodes,
        eval_every=self.eval_every, seed=self.seed + 1)
    self.num_steps = self._steps(self.num_env_steps, self.env.num_envs)
    self.epsilon = _epsilon_schedule(self._epsilon_setting, self.num_steps)
    self.q_network, self.optimizer = q_network, optimizer
    self._target_given = target_network
    self._evaluation = None
    return self.run()

  # ---- Engine interface. ----

  def models(self):
    return {"q_network": self.q_network}

  def trackables(self):
    return {"q_network": self.q_network, "target_network": self.target_network,
            "optimizer": self.optimizer, "replay_buffer": self.buffer,
            "env": self.env, "episode_stats": self.stats,
            "dqn_state": self._state}

  def build(self):
    env, num_actions = self.env, self.env.action_space.num_actions
    env.reset(seed=self.seed)
    envs_base.check_shapes(env, "DQN")
    spec = env.observation_spec
    example = tf.zeros([1] + spec.shape.as_list(), spec.dtype)
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
    online, target = self._online_variables(), self._target_variables()
    if [v.shape for v in online] != [v.shape for v in target]:
      raise ValueError("DQN: target_network must have the same variables "
                       "(shapes, in order) as q_network.")
    for t, o in zip(target, online):
      t.assign(o)
    self.buffer = replay.ReplayBuffer(self.buffer_size, spec,
                                      env.action_space.spec)
    self.stats = episodes.EpisodeStats(env.num_envs)
    self._state = tf.Module(name="dqn_state")
    self._state.loss = tf.Variable(0.0, trainable=False, name="loss")
    self._state.q_mean = tf.Variable(0.0, trainable=False, name="q_mean")
    self.build_optimizer(self.optimizer, self.q_network.trainable_variables)

  def _online_variables(self) -> list[tf.Variable]:
    return list(self.q_network.trainable_variables)

  def _target_variables(self) -> list[tf.Variable]:
    return list(self.target_network.trainable_variables)

  def act(self, observation: tf.Tensor, epsilon: tf.Tensor) -> tf.Tensor:
    """Epsilon-greedy actions from `self.rng` (traced)."""
    n = tf.shape(observation)[0]
    num_actions = self.env.action_space.num_actions
    greedy = tf.argmax(self.q_network(observation), axis=-1,
                       output_type=tf.int32)
    explore = self.rng.uniform([n]) < epsilon
    random = self.rng.uniform([n], minval=0, maxval=num_actions,
                              dtype=tf.int32)
    return tf.where(explore, random, greedy)

  def update(self) -> tuple[tf.Tensor, tf.Tensor]:
    """One gradient step on a sampled batch; returns (loss, mean Q)."""
    batch = self.buffer.sample(self.batch_size, self.rng)
    next_target = self.traced_step.forward(self.target_network,
                                      batch.next_observation)
    next_online = (self.traced_step.forward(self.q_network, batch.next_observation)
                   if self.double_dqn
                   else None)
    targets = q_learning.td_targets(batch.reward, batch.terminated, next_target,
                         self.gamma, next_online)
    variables = self._online_variables()
    with tf.GradientTape() as tape:
      q = tf.gather(self.traced_step.forward(self.q_network, batch.observation),
                    batch.action, axis=1,
                    batch_dims=1)
      error = tf.cast(q, tf.float32) - targets
      losses = (q_learning.huber(error) if self.loss == "huber" else
                tf.square(error))
      loss = tf.reduce_mean(losses)
    grads = self.traced_step.gradients(tape, loss, variables)
    finite = self.traced_step.apply_update(self.optimizer, grads, variables,
                                      loss=loss)
    q_mean = tf.reduce_mean(tf.cast(q, tf.float32))
    self._state.loss.assign(tf.where(finite, loss, self._state.loss))
    self._state.q_mean.assign(tf.where(finite, q_mean, self._state.q_mean))
    return loss, q_mean

  def sync_target(self) -> None:
    """Moves the target network to the online one (by `tau`)."""
    for t, o in zip(self._target_variables(), self._online_variables()):
      if self.tau == 1.0:
        t.assign(o)
      else:
        t.assign(self.tau * o + (1.0 - self.tau) * t)

  def train_step(self):
    env = self.env
    step = self.step_variable + 1  # This step's number, 1-based.
    epsilon = self.epsilon(self.step_variable)
    observation = envs_base.checked(env, env.observation(), "observation",
                                    "observation()", "DQN")
    action = self.act(observation, epsilon)
    timestep = envs_base.checked_timestep(env, env.step(action), "DQN")
    self.stats.update(timestep)
    self.buffer.add(replay.Transition(
        observation=observation, action=action,
        reward=tf.cast(timestep.reward, tf.float32),
        next_observation=timestep.final_observation,
        terminated=tf.cast(timestep.terminated, tf.bool)))

    def learn():
      self.update()
      return tf.constant(True)

    learning = tf.logical_and(
        step * env.num_envs >= self.learning_starts,
        tf.equal(step % self.train_every, 0))
    tf.cond(learning, learn, lambda: tf.constant(False))

    def sync():
      self.sync_target()
      return tf.constant(True)

    tf.cond(tf.equal(step % self.target_update_every, 0), sync,
            lambda: tf.constant(False))
    logs = {"loss": self._state.loss.read_value(),
            "q_mean": self._state.q_mean.read_value(), "epsilon": epsilon}
    logs.update(self.stats.logs())
    return logs

  def evaluate_now(self):
    if self.eval_env is None:
      return None
    if self._evaluation is None:
      def greedy(observation):
        return tf.argmax(self.q_network(observation), axis=-1,
                         output_type=tf.int32)
      self._evaluation = environments.GreedyEvaluation(
          self.eval_env, greedy, self.eval_episodes)
    return self._evaluation(seed=self.seed + 1 + self.step)

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

