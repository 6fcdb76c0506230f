"""`REINFORCE`: the policy gradient with a learned baseline (Williams 1992).

    reinforce = snt.scenarios.REINFORCE(num_env_steps=500_000)
    reinforce(policy, baseline, optimizer, env)

Each engine step collects one rollout and makes one gradient step on all of
it: the policy follows `log pi(a_t | s_t) * (G_t - b(s_t))`, the baseline
regresses on the returns `G_t`. Returns are discounted sums of rewards within
each episode; an episode that is cut by a time limit or still runs at the end
of the rollout is completed with the baseline's value there (with
`rollout_length` at least the episode length, most returns are pure
Monte-Carlo).
"""

from typing import Any

import tensorflow as tf

from sonnet_like.scenarios.run_folder import history as history_lib
from sonnet_like.core import arguments
from sonnet_like.core import autograph
from sonnet_like.scenarios.rl import on_policy
from sonnet_like.scenarios.rl.parts import returns


class REINFORCE(on_policy.OnPolicy):
  """Trains a policy by REINFORCE with a learned value baseline.

  One optimizer updates both modules on `policy_loss + baseline_coef *
  baseline_loss - entropy_coef * entropy` (the baseline does not feed the
  policy's gradient: its advantages are constants), so one Keras or
  sonnet_like optimizer is enough; give the baseline its own learning rate
  through `baseline_coef`.

  Logs per rollout: "loss", "policy_loss", "baseline_loss" (half the mean
  squared error), "entropy" and the episode statistics ("episode_return",
  "episode_length", "episodes", "env_steps"). Evaluation: "return",
  "return_std", "length" of the greedy policy over `eval_episodes` episodes.

      >>> import sonnet_like as snt, keras, tensorflow as tf
      >>> tf.random.set_seed(0)  # The modules' initial weights.
      >>> reinforce = snt.scenarios.REINFORCE(
      ...     num_env_steps=6_000, num_envs=8, rollout_length=25,
      ...     progress=False)
      >>> history = reinforce(snt.Linear(2, name="policy"),
      ...                     snt.Linear(1, name="baseline"),
      ...                     keras.optimizers.Adam(0.05), snt.envs.Guess(8),
      ...                     eval_env=snt.envs.Guess(8, seed=1))
      >>> history.eval["return"][-1] > 4.5   # random: 2.5, best: 5
      True

  Args:
    num_env_steps, num_envs, rollout_length: As for `PPO`.
    gamma: Discount factor.
    baseline_coef: Weight of the baseline's loss.
    entropy_coef: Weight of the entropy bonus.
    normalize_advantages: Standardise `G_t - b(s_t)` over the rollout.
    eval_every: Evaluate every this many rollouts (and at the end).
    eval_episodes: Episodes per greedy evaluation.
    log_std_init: Initial log standard deviation of a Box policy.
    **kwargs: Loop settings of `Scenario` (save_every, save_dir,
      steps_per_call, log_every, jit_compile, on_nonfinite, clip_norm, seed,
      hooks, progress, ...), counted in rollouts.
  """

  actor_name, critic_name = "policy", "baseline"

  def __init__(self, num_env_steps: int, *, num_envs: int = 8,
               rollout_length: int = 500, gamma: float = 0.99,
               baseline_coef: float = 0.5, entropy_coef: float = 0.0,
               normalize_advantages: bool = True,
               eval_every: int | None = None, eval_episodes: int = 100,
               **kwargs):
    super().__init__(num_env_steps, num_envs=num_envs,
                     rollout_length=rollout_length, eval_every=eval_every,
                     eval_episodes=eval_episodes, **kwargs)
    arguments.check_non_negative("REINFORCE", "gamma", gamma, upper=1.0)
    arguments.check_positive_number("REINFORCE", "baseline_coef",
                                    baseline_coef)
    arguments.check_non_negative("REINFORCE", "entropy_coef", entropy_coef)
    if not isinstance(normalize_advantages, bool):
      raise ValueError(f"REINFORCE: normalize_advantages must be a bool, got "
                       f"{normalize_advantages!r}.")
    self.gamma, self.baseline_coef = float(gamma), float(baseline_coef)
    self.entropy_coef = float(entropy_coef)
    self.normalize_advantages = normalize_advantages

  def __call__(self, policy: Any, baseline: Any, optimizer: Any, env: Any,
               eval_env: Any = None) -> history_lib.History:
    """Trains (or resumes training) and returns the `History`.

    Args:
      policy: Observations `[batch, ...]` -> logits `[batch, n]` for
        `Discrete(n)`, or means `[batch, k]` for a `Box` of `k` actions.
      baseline: Observations -> values `[batch]` or `[batch, 1]`.
      optimizer: A Keras or sonnet_like optimizer; it updates both.
      env: A gymnasium id, Env, VectorEnv, factory, or `snt.envs.Environment`
        with `num_envs` environments.
      eval_env: Where greedy evaluation plays (see `OnPolicy`).
    """
    self._setup(policy, baseline, optimizer, env, eval_env)
    return self.run()

  @autograph.as_written
  def train_step(self):
    """One rollout and one gradient step on it."""
    experience = self.experience()
    batch = experience.rollout
    targets = tf.reshape(returns.discounted_returns(
        batch.rewards, batch.terminated, batch.truncated, self.gamma,
        experience.final_values, experience.last_value), [-1])
    actions = experience.actions
    variables = self.variables_to_train
    with tf.GradientTape() as tape:
      outputs, values = self.actor_and_values(experience.inputs)
      distribution = self.policy.distribution(outputs, experience.inputs)
      advantages = tf.stop_gradient(targets - values)
      if self.normalize_advantages:  # Mean 0, standard deviation 1.
        mean, variance = tf.nn.moments(advantages, axes=[0])
        advantages = (advantages - mean) / (tf.sqrt(variance) + 1e-8)
      policy_loss = -tf.reduce_mean(distribution.log_prob(actions) *
                                    advantages)
      baseline_loss = 0.5 * tf.reduce_mean(tf.square(values - targets))
      entropy = tf.reduce_mean(distribution.entropy())
      loss = policy_loss + self.baseline_coef * baseline_loss
      # Else logged only: no gradient through it. (A tensor is a
      # population's per-member coefficient.)
      if tf.is_tensor(self.entropy_coef) or self.entropy_coef:
        loss -= self.entropy_coef * entropy
    self.minimize(tape, loss, variables, self.optimizer)
    logs = {"loss": loss, "policy_loss": policy_loss,
            "baseline_loss": baseline_loss, "entropy": entropy}
    logs.update(self.stats.logs())
    return logs
