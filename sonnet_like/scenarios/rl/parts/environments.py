"""The training and evaluation environments every RL scenario makes and checks.

`env` and `eval_env` are anything `snt.envs.make` accepts (a gymnasium id,
Env, VectorEnv, a factory) or an `snt.envs.Environment`, used as is.
Evaluation never steps the training environments: without an `eval_env`, an
id or factory is made again with another seed, while an environment instance
cannot be copied, so evaluating then needs `eval_env`.
"""

from typing import Any, Callable

import numpy as np
import tensorflow as tf

from sonnet_like import envs as envs_lib
from sonnet_like.envs import base
from sonnet_like.scenarios.rl.parts import episodes
from sonnet_like.scenarios.rl.parts import policies

STRATEGY_ERROR = (
    "{owner}: RL scenarios run under the default strategy only, got {strategy} "
    "with {replicas} replicas (rollouts would need one batch of environments "
    "per replica). Drop strategy=...")

EVAL_ENV_ERROR = (
    "{owner}: evaluation (eval_every={eval_every}) needs eval_env=... when env "
    "is an environment instance ({env!r}): there is no environment to "
    "evaluate in, since evaluation never steps the training environments and "
    "an instance cannot be copied. Pass eval_env (e.g. another "
    "snt.envs.make(...) with a different seed), a gymnasium id or factory as "
    "env, or eval_every=None.")

NO_MAKE_ERROR = (
    "{owner}: env must be an snt.envs.Environment here (snt.envs.make, which "
    "turns gymnasium ids and environments into one, is not available), got "
    "{env!r}.")


def check_strategy(owner: str, strategy: tf.distribute.Strategy) -> None:
  """Refuses a multi-replica strategy."""
  replicas = strategy.num_replicas_in_sync
  if replicas > 1:
    raise ValueError(STRATEGY_ERROR.format(
        owner=owner, strategy=type(strategy).__name__, replicas=replicas))


def same_space(a: base.ActionSpace, b: base.ActionSpace) -> bool:
  """Whether two action spaces are the same (Box compares its bounds)."""
  if isinstance(a, base.Box) and isinstance(b, base.Box):
    return (a.shape == b.shape and np.array_equal(a.low, b.low) and
            np.array_equal(a.high, b.high))
  return a == b


def is_recipe(env: Any) -> bool:
  """An id or factory (which can be made twice), not an instance."""
  return isinstance(env, str) or (callable(env) and not hasattr(env, "step"))


def make_env(owner: str, env: Any, num_envs: int | None,
             seed: int) -> base.Environment:
  """`env` as an `Environment`; an instance must have `num_envs` envs."""
  if isinstance(env, base.Environment):
    if num_envs is not None and env.num_envs != num_envs:
      raise ValueError(f"{owner}: env has {env.num_envs} environments but "
                       f"num_envs={num_envs}; pass num_envs={env.num_envs} "
                       "or an environment with as many.")
    return env
  make = getattr(envs_lib, "make", None)
  if make is None:
    raise TypeError(NO_MAKE_ERROR.format(owner=owner, env=env))
  return make(env, num_envs=num_envs, seed=seed)


def make_eval_env(owner: str, env: Any, train_env: base.Environment,
                  eval_env: Any, *, eval_episodes: int, eval_every: Any,
                  seed: int) -> base.Environment | None:
  """The evaluation environment (None without one and without evaluation).

  Args:
    owner: The scenario's name, for errors.
    env: What the user gave as `env`.
    train_env: The training environment made from it.
    eval_env: What the user gave as `eval_env` (or None).
    eval_episodes: Episodes per evaluation (at most 100 are run in parallel).
    eval_every: The scenario's setting; evaluating needs an environment.
    seed: The evaluation environment's seed.
  """
  if eval_env is not None:
    made = make_env(owner, eval_env, None, seed)
    if made is train_env:
      raise ValueError(f"{owner}: eval_env must not be the training "
                       "environment (evaluation resets it).")
  elif is_recipe(env):
    made = make_env(owner, env, min(eval_episodes, 100), seed)
  elif eval_every is not None:
    raise ValueError(EVAL_ENV_ERROR.format(owner=owner, eval_every=eval_every,
                                           env=env))
  else:
    return None
  if (not same_space(made.action_space, train_env.action_space) or
      made.observation_spec != train_env.observation_spec):
    raise ValueError(f"{owner}: eval_env must have the training env's "
                     "observations and actions, got "
                     f"{made.observation_spec} and "
                     f"{policies.describe(made.action_space)} for "
                     f"{train_env.observation_spec} and "
                     f"{policies.describe(train_env.action_space)}.")
  return made


class GreedyEvaluation:
  """Plays whole episodes of a greedy policy and summarises their returns."""

  def __init__(self, env: base.Environment,
               act: Callable[[tf.Tensor], tf.Tensor], episodes_: int):
    self._runner = episodes.EpisodeRunner(env, act, episodes_)

  def __call__(self, seed: int) -> dict[str, float]:
    played = self._runner(seed=seed)
    returns = played["return"]
    return {"return": float(returns.mean()),
            "return_std": float(returns.std()),
            "length": float(played["length"].mean())}
