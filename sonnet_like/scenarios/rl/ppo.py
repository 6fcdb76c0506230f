"""`PPO`: proximal policy optimisation (Schulman et al. 2017), actor-critic.

    ppo = snt.scenarios.PPO(num_env_steps=200_000, num_envs=8,
                            rollout_length=128)
    ppo(actor, critic, optimizer, env)

Each engine step collects one rollout with the current policy, computes GAE
advantages (bootstrapping through time-limit truncations and past the
rollout end), then runs `num_epochs` passes of `num_minibatches` shuffled
minibatches of the clipped surrogate objective, the value loss and the
entropy bonus, all in one compiled call (XLA-compilable with an in-graph
environment, `jit_compile=True`). Shuffling draws from the scenario's
checkpointed `rng`.

Three options keep long runs stable (CleanRL and Stable-Baselines3 have
them): `learning_rate_schedule="linear"` anneals the optimizer's learning
rate to 0 over the run (the PPO paper's schedule),
`clip_ratio_schedule="linear"` does the same to the clip ratio
(Stable-Baselines3's `clip_range="lin_0.2"`), and `target_kl` ends a
rollout's update epochs early once the policy has moved that far from the
one that collected the rollout.
"""

from typing import Any

import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import autograph
from sonnet_like.core import generator
from sonnet_like.scenarios.compiled import carried
from sonnet_like.scenarios.run_folder import history as history_lib
from sonnet_like.scenarios.rl import on_policy
from sonnet_like.scenarios.rl import recipes
from sonnet_like.scenarios.rl.parts import returns
from sonnet_like.scenarios.rl.parts import rollout
from sonnet_like.scenarios import schedules


class PPO(on_policy.OnPolicy):
  """Trains an actor and a critic with PPO's clipped objective.

  The loss of a minibatch is `policy_loss + value_coef * value_loss -
  entropy_coef * entropy`, minimised by one optimizer over the actor's, the
  critic's and (Box actions) the policy's log-std variables; share a torso
  between actor and critic freely (shared variables are updated once).
  `value_loss` is half the mean squared error to the GAE value targets.

  Logs (per rollout, means over its minibatch updates): "loss",
  "policy_loss", "value_loss", "entropy", "approx_kl" (the `(r - 1) -
  log r` estimator, measured on each minibatch before its update),
  "clip_fraction", "updates" (minibatch updates made; fewer than
  `num_epochs * num_minibatches` when `target_kl` stopped them),
  "learning_rate" (with a `learning_rate_schedule`), "clip_ratio" (the
  rollout's, with a `clip_ratio_schedule`), and from the episode
  statistics
  "episode_return", "episode_length" (means over the last 100 episodes),
  "episodes" and "env_steps". Evaluation: "return", "return_std", "length"
  of the greedy policy over `eval_episodes` episodes.

      >>> import sonnet_like as snt, keras
      >>> env, eval_env = snt.envs.Guess(8), snt.envs.Guess(8, seed=1)
      >>> ppo = snt.scenarios.PPO(num_env_steps=4_000, num_envs=8,
      ...                         rollout_length=25, num_epochs=2,
      ...                         num_minibatches=2, progress=False)
      >>> actor, critic = snt.Linear(2, name="actor"), snt.Linear(1, name="v")
      >>> history = ppo(actor, critic, keras.optimizers.Adam(0.05), env,
      ...               eval_env=eval_env)
      >>> history.eval["return"][-1] > 4.5   # random: 2.5, best: 5
      True

  Args:
    num_env_steps: Environment steps to train for (rounded up to rollouts
      of `num_envs * rollout_length` steps; one rollout is one engine step).
    num_envs: Environments stepped together.
    rollout_length: Steps per environment and rollout.
    num_epochs: Passes over each rollout. 10 (Stable-Baselines3's default;
      it was 4): on gymnasium's CartPole-v1 with Adam 3e-4 and 200k env
      steps, 4 epochs ended at greedy returns 171, 500 and 500 (seeds 0-2,
      20 episodes), 10 epochs at 500 on each seed.
    num_minibatches: Minibatches per pass (the rollout's
      `num_envs * rollout_length` steps, shuffled, split evenly; a remainder
      is left out of that pass).
    gamma: Discount factor.
    gae_lambda: GAE's lambda.
    clip_ratio: The probability ratio is clipped to `1 +- clip_ratio`.
    clip_ratio_schedule: None (`clip_ratio` throughout), "linear" (the
      ratio times `1 - step / num_steps`: from `clip_ratio` at the first
      rollout down to `clip_ratio / num_steps` at the last, as
      Stable-Baselines3's `clip_range="lin_<x>"`), or a
      `rl.schedules.Schedule` of the step (rollouts done) giving the
      factor of `clip_ratio`. Read from the step counter inside the
      compiled step (no retracing; a resumed run continues it exactly);
      logged as "clip_ratio".
    entropy_coef: Weight of the entropy bonus.
    value_coef: Weight of the value loss.
    normalize_advantages: Standardise advantages within each minibatch.
    normalize_observations: Standardise observations with running statistics
      (`normalization.ObservationNormalizer`), updated after each rollout's
      update, so a rollout and its update see the same statistics.
    scale_rewards: Divide rewards by the running std of discounted returns
      (`normalization.RewardScaler`) before computing advantages.
    learning_rate_schedule: None (the optimizer's rate throughout),
      "linear" (the rate times `1 - step / num_steps`, so it falls from the
      optimizer's rate at the first rollout to 0 after the last, as in the
      PPO paper), or a `rl.schedules.Schedule` of the step (rollouts done)
      giving the factor. See `rl.learning_rate` for how it reaches Keras and
      Sonnet optimizers; a resumed run continues it exactly.
    target_kl: None, or stop a rollout's update epochs after the first
      minibatch whose approximate KL divergence from the rollout's policy
      (measured before its update) exceeds this (the update of that
      minibatch is still made). 0.01-0.05 are usual values.
    eval_every: Evaluate every this many rollouts (and at the end).
    eval_episodes: Episodes per greedy evaluation.
    log_std_init: Initial log standard deviation of a Box policy.
    state_dependent_std: The actor outputs the log-stds too (see `OnPolicy`).
    squash: tanh-squash Box actions into the bounds (see `OnPolicy`).
    sde_sample_freq: None, or explore with gSDE, its noise drawn again
      every this many steps (see `OnPolicy`).
    **kwargs: Loop settings of `Scenario` (save_every, save_dir,
      steps_per_call, log_every, jit_compile, on_nonfinite, clip_norm, seed,
      hooks, progress, ...), counted in rollouts.
  """

  def __init__(self, num_env_steps: int, *, num_envs: int = 8,
               rollout_length: int = 128, num_epochs: int = 10,
               num_minibatches: int = 4, gamma: float = 0.99,
               gae_lambda: float = 0.95, clip_ratio: float = 0.2,
               clip_ratio_schedule: str | schedules.Schedule | None = None,
               entropy_coef: float = 0.0, value_coef: float = 0.5,
               normalize_advantages: bool = True,
               normalize_observations: bool = False,
               scale_rewards: bool = False,
               learning_rate_schedule: str | schedules.Schedule | None = None,
               target_kl: float | None = None,
               eval_every: int | None = None, eval_episodes: int = 100,
               **kwargs):
    super().__init__(num_env_steps, num_envs=num_envs,
                     rollout_length=rollout_length, eval_every=eval_every,
                     eval_episodes=eval_episodes, **kwargs)
    arguments.check_positive_int("PPO", "num_epochs", num_epochs)
    arguments.check_positive_int("PPO", "num_minibatches", num_minibatches)
    if num_minibatches > num_envs * rollout_length:
      raise ValueError(f"PPO: num_minibatches must be at most num_envs * "
                       f"rollout_length = {num_envs * rollout_length}, got "
                       f"{num_minibatches}.")
    arguments.check_non_negative("PPO", "gamma", gamma, upper=1.0)
    arguments.check_non_negative("PPO", "gae_lambda", gae_lambda, upper=1.0)
    arguments.check_positive_number("PPO", "clip_ratio", clip_ratio)
    arguments.check_non_negative("PPO", "entropy_coef", entropy_coef)
    arguments.check_non_negative("PPO", "value_coef", value_coef)
    for name, value in (("normalize_advantages", normalize_advantages),
                        ("normalize_observations", normalize_observations),
                        ("scale_rewards", scale_rewards)):
      if not isinstance(value, bool):
        raise ValueError(f"PPO: {name} must be a bool, got {value!r}.")
    self.num_epochs, self.num_minibatches = num_epochs, num_minibatches
    self.gamma, self.gae_lambda = float(gamma), float(gae_lambda)
    self.clip_ratio = float(clip_ratio)
    self.clip_ratio_schedule = schedules.factor_schedule(
        "PPO", "clip_ratio_schedule", "clip_ratio", clip_ratio_schedule,
        self.num_steps, "rollouts done")
    self.entropy_coef, self.value_coef = float(entropy_coef), float(value_coef)
    self.normalize_advantages = normalize_advantages
    self.normalize_observations = normalize_observations
    self.scale_rewards = scale_rewards
    # The engine's setting (`learning_rate.py` applies it to every update
    # and logs "learning_rate"), with "linear" resolved over this run.
    self.learning_rate_schedule = schedules.learning_rate_factor(
        "PPO", learning_rate_schedule, self.num_steps, "rollouts done")
    if target_kl is not None and (
        isinstance(target_kl, bool) or not isinstance(target_kl, (int, float))
        or not target_kl > 0 or target_kl == float("inf")):
      raise ValueError(f"PPO: target_kl must be positive or None, got "
                       f"{target_kl!r}.")
    self.target_kl = None if target_kl is None else float(target_kl)

  @property
  def updates_per_step(self) -> int:
    """Each step (one rollout) makes epochs x minibatches updates."""
    return self.num_epochs * self.num_minibatches

  @classmethod
  def recipe(cls, task: str) -> recipes.Recipe:
    """The documented settings for `task` (see `rl.recipes.PPO_RECIPES`)."""
    return recipes.find(cls, recipes.PPO_RECIPES, task)

  def __call__(self, actor: Any, critic: Any, optimizer: Any, env: Any,
               eval_env: Any = None) -> history_lib.History:
    """Trains (or resumes training) and returns the `History`.

    Args:
      actor: Observations `[batch, ...]` -> logits `[batch, n]` for
        `Discrete(n)`, or means `[batch, k]` for a `Box` of `k` actions.
      critic: Observations -> values `[batch]` or `[batch, 1]`.
      optimizer: A Keras or sonnet_like optimizer; it updates both networks.
      env: A gymnasium id, Env, VectorEnv, factory, or `snt.envs.Environment`
        with `num_envs` environments.
      eval_env: Where greedy evaluation plays (see `OnPolicy`).
    """
    self._setup(actor, critic, optimizer, env, eval_env)
    return self.run()

  @autograph.as_written
  def train_step(self):
    """One rollout and its update epochs."""
    experience = self.experience()
    batch = experience.rollout
    rewards = batch.rewards
    if self.reward_scaler is not None:
      rewards = self.reward_scaler(
          rewards, tf.logical_or(batch.terminated, batch.truncated))
    advantages = returns.gae(rewards, experience.values, batch.terminated,
                             batch.truncated, self.gamma, self.gae_lambda,
                             experience.final_values, experience.last_value)
    data = (experience.inputs, experience.actions, experience.log_probs,
            tf.reshape(advantages, [-1]),
            tf.reshape(advantages + experience.values, [-1]))
    clip_ratio = self._clip_ratio()
    logs = self._update_epochs(data, clip_ratio)
    if self.clip_ratio_schedule is not None:
      logs["clip_ratio"] = tf.cast(clip_ratio, tf.float32)
    logs.update(self.stats.logs())
    if self.normalizer is not None:  # For the next rollout.
      self.normalizer.update(rollout.flatten(batch.observations))
    return logs

  def _clip_ratio(self) -> float | tf.Tensor:
    """This rollout's clip ratio: `clip_ratio`, or with a schedule a float64
    tensor of `clip_ratio` times the factor of the steps done (read from
    the checkpointed step counter; a factor of 1 gives `clip_ratio` to the
    bit, as the float64 Python number)."""
    if self.clip_ratio_schedule is None:
      return self.clip_ratio
    factor = schedules.factor_at(self.clip_ratio_schedule,
                                 self.step_variable)
    return self.clip_ratio * tf.cast(factor, tf.float64)

  def _update_epochs(self, data: tuple[tf.Tensor, ...],
                     clip_ratio: float | tf.Tensor) -> dict[str, tf.Tensor]:
    """`num_epochs` shuffled passes of minibatch updates over a flattened
    rollout (fewer with `target_kl`), clipping at `clip_ratio`; returns
    their mean logs."""
    size = self.rollout_length * self.num_envs
    per_batch = size // self.num_minibatches
    updates = self.num_epochs * self.num_minibatches
    # Re-keyed, like the policy's noise (see `policies.Policy.sample`).
    shuffle = generator.stateless_uniform([self.num_epochs, size],
                                          self.rng.make_seeds(1)[:, 0])
    order = tf.argsort(shuffle, axis=1)
    order = tf.reshape(order[:, :per_batch * self.num_minibatches],
                       [updates, per_batch])

    update = autograph.as_user_code(self._update)  # A subclass's may branch.

    def keep_going(i, sums, going):
      del sums
      return tf.logical_and(i < updates, going)

    def body(i, sums, going):
      minibatch = tuple(tf.gather(x, order[i]) for x in data)
      values = update(*minibatch, clip_ratio)
      if self.target_kl is not None:  # values[4]: this minibatch's KL.
        going = values[4] <= self.target_kl
      return i + 1, sums + values, going

    done, sums, _ = carried.while_loop(
        keep_going, body, (tf.constant(0), tf.zeros([6]), tf.constant(True)),
        maximum_iterations=updates)
    means = sums / tf.cast(done, tf.float32)
    names = ("loss", "policy_loss", "value_loss", "entropy", "approx_kl",
             "clip_fraction")
    logs = {name: means[i] for i, name in enumerate(names)}
    logs["updates"] = tf.cast(done, tf.float32)
    return logs

  @autograph.as_written
  def _update(self, inputs, actions, old_log_probs, advantages,
              targets, clip_ratio) -> tf.Tensor:
    """One minibatch step on network inputs (normalised observations),
    the ratio clipped to `1 +- clip_ratio`; returns its six logged
    values."""
    if self.normalize_advantages:  # Mean 0, standard deviation 1.
      mean, variance = tf.nn.moments(advantages, axes=[0])
      advantages = (advantages - mean) / (tf.sqrt(variance) + 1e-8)
    variables = self.variables_to_train
    with tf.GradientTape() as tape:
      outputs, values = self.actor_and_values(inputs)
      log_prob, entropy = self.policy.evaluate(outputs, actions, inputs)
      log_ratio = log_prob - old_log_probs
      ratio = tf.exp(log_ratio)
      # The bounds in float64, then float32: as from a Python number.
      clipped = tf.clip_by_value(ratio, tf.cast(1.0 - clip_ratio, tf.float32),
                                 tf.cast(1.0 + clip_ratio, tf.float32))
      policy_loss = -tf.reduce_mean(tf.minimum(ratio * advantages,
                                               clipped * advantages))
      value_loss = 0.5 * tf.reduce_mean(tf.square(values - targets))
      entropy = tf.reduce_mean(entropy)
      loss = policy_loss + self.value_coef * value_loss
      # Else logged only: no gradient through it. (A tensor is a
      # population's per-member coefficient.)
      if tf.is_tensor(self.entropy_coef) or self.entropy_coef:
        loss -= self.entropy_coef * entropy
    self.minimize(tape, loss, variables, self.optimizer)
    approx_kl = tf.reduce_mean((ratio - 1.0) - log_ratio)
    clip_fraction = tf.reduce_mean(tf.cast(
        tf.abs(ratio - 1.0) > tf.cast(clip_ratio, tf.float32), tf.float32))
    return tf.stack([loss, policy_loss, value_loss, entropy, approx_kl,
                     clip_fraction])
