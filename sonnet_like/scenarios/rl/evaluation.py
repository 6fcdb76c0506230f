"""`evaluate_policy`: the greedy mean and spread of a policy's episode return.

The measure the RL scenarios' own evaluation and `benchmarks/zoo.py` take:
whole episodes of the greedy (most likely) action, played by the same
compiled loop (`episodes.EpisodeRunner`), on gymnasium or in-graph
environments. Each of the environments plays the same number of whole
episodes, so short episodes are not favoured.

    >>> import sonnet_like as snt, tensorflow as tf
    >>> always_right = lambda signs: tf.cast(signs[:, 0] > 0, tf.int32)
    >>> snt.scenarios.evaluate_policy(always_right, snt.envs.Guess(length=5),
    ...                               episodes=8)
    (5.0, 0.0)
"""

from typing import Any, Callable

import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.scenarios.rl.parts import environments
from sonnet_like.scenarios.rl.parts import episodes as episodes_lib
from sonnet_like.scenarios.rl import off_policy
from sonnet_like.scenarios.rl import on_policy

OWNER = "evaluate_policy"

POLICY_ERROR = (
    "evaluate_policy: policy must be a trained RL scenario (PPO, REINFORCE, "
    "DQN, SAC, TD3) or a function from a batch of observations to a batch of "
    "actions, got {policy!r}.")

NOT_TRAINED_ERROR = (
    "evaluate_policy: the {owner} given has not been run yet, so it has no "
    "policy to play; call it with its networks, optimizer and environment "
    "first (or pass a function of the observations).")

# Environments played side by side when `env` is made here (an id).
MAX_PARALLEL = 100


def greedy_actions(policy: Any) -> Callable[[tf.Tensor], tf.Tensor]:
  """The batch function that plays `policy` greedily, as its scenario's own
  evaluation does; a function is used as is."""
  if isinstance(policy, (on_policy.OnPolicy, off_policy.OffPolicy)):
    if policy.history is None:
      raise ValueError(NOT_TRAINED_ERROR.format(owner=type(policy).__name__))
    policy.require_single("evaluate_policy(scenario, ...)")
    if isinstance(policy, off_policy.OffPolicy):
      return policy.greedy
    return lambda observations: policy.policy.greedy(
        policy.actor_outputs(observations))
  if callable(policy) and not isinstance(policy, type):
    return policy
  raise TypeError(POLICY_ERROR.format(policy=policy))


def evaluate_policy(policy: Any, env: Any, episodes: int = 10,
                    seed: int = 0) -> tuple[float, float]:
  """Plays `episodes` whole episodes greedily; their return's mean and std.

  As Stable-Baselines3's `evaluate_policy` with `deterministic=True`.

  Args:
    policy: A trained RL scenario (PPO, REINFORCE, DQN, SAC, TD3; played
      with its greedy action and its observation normalisation), or a
      function mapping a batch of observations to a batch of actions (an
      exported policy's `serving_default`, say).
    env: Where to play: a gymnasium id (made with `snt.envs.make`, up to
      100 environments side by side), a gymnasium environment or vector
      environment, or an `snt.envs.Environment` (gymnasium-backed or
      in-graph, e.g. `snt.envs.make(id, in_graph=True)`). It is reset with
      `seed`; do not pass the environment a scenario is still training in.
    episodes: How many episodes to play.
    seed: The environments' reset seed (the episodes' starts).

  Returns:
    `(mean, std)` of the undiscounted episode returns, as Python floats.

  Raises:
    ValueError: `episodes` is not a positive int, or the scenario was not
      run yet.
    TypeError: `policy` is neither a scenario nor a function.
  """
  arguments.check_positive_int(OWNER, "episodes", episodes)
  act = greedy_actions(policy)
  if environments.is_recipe(env):  # An id or factory: as many as fit.
    env = environments.make_env(OWNER, env, min(episodes, MAX_PARALLEL),
                                seed)
  else:
    env = environments.make_env(OWNER, env, None, seed)
  returns = episodes_lib.EpisodeRunner(env, act, episodes)(seed=seed)["return"]
  return float(returns.mean()), float(returns.std())
