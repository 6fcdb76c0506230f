"""`make`: whatever a scenario is given as `env`, as an `Environment`."""

from typing import Any

from sonnet_like.core import arguments
from sonnet_like.envs import acrobot
from sonnet_like.envs import base
from sonnet_like.envs import cartpole
from sonnet_like.envs import gym_adapter
from sonnet_like.envs import mountain_car
from sonnet_like.envs import pendulum

# gymnasium ids with an in-graph TensorFlow version.
IN_GRAPH_ENVIRONMENTS = {
    "Acrobot-v1": acrobot.Acrobot,
    "CartPole-v1": cartpole.CartPole,
    "MountainCar-v0": mountain_car.MountainCar,
    "MountainCarContinuous-v0": mountain_car.MountainCarContinuous,
    "Pendulum-v1": pendulum.Pendulum,
}

NOT_IN_GRAPH_ERROR = (
    "make: in_graph=True needs an environment written in TensorFlow; "
    "{what} steps in Python. Pass one of the ids {ids} or an in-graph "
    "Environment, or use in_graph=False.")


def _is_gymnasium_object(value) -> bool:
  try:
    gym = gym_adapter.import_gymnasium()
  except ImportError:
    return False
  return isinstance(value, (gym.Env, gym.vector.VectorEnv))


def make(env: Any, num_envs: int | None = None, seed: int = 0,
         in_graph: bool = False) -> base.Environment:
  """Returns `env` as a batched `Environment`.

  Args:
    env: One of
      - an `Environment` (for example `snt.envs.CartPole`): returned as is
        (`seed` is not used: it has its own generator);
      - a gymnasium id: a `GymEnvironment`, or with `in_graph=True` the
        in-graph version (`"CartPole-v1"` gives `snt.envs.CartPole`; the
        ids of `IN_GRAPH_ENVIRONMENTS` have one);
      - a gymnasium `Env` or `VectorEnv`: a `GymEnvironment`;
      - a zero-argument factory returning any of these (an `Env` factory is
        called `num_envs` times).
    num_envs: How many environments. None takes what `env` has (an
      `Environment`'s or `VectorEnv`'s count) or 1. An explicit count that
      differs from the count of a given `Environment` or `VectorEnv` is an
      error.
    seed: Seeds a newly made environment.
    in_graph: Require an environment written in TensorFlow (compilable into
      one `tf.function` with the policy, also with XLA).

  Returns:
    The `Environment`.

  Raises:
    TypeError: `env` is none of the above.
    ValueError: Counts disagree, or `in_graph=True` and `env` steps in Python.

  >>> make("CartPole-v1", num_envs=4, in_graph=True)
  CartPole(num_envs=4, max_episode_steps=500)
  >>> make("CartPole-v1", num_envs=2)
  GymEnvironment('CartPole-v1', num_envs=2)
  """
  arguments.check_positive_int("make", "num_envs", num_envs, optional=True)
  ids = sorted(IN_GRAPH_ENVIRONMENTS)
  if isinstance(env, base.Environment):
    if num_envs is not None and num_envs != env.num_envs:
      raise ValueError(f"make: num_envs={num_envs} was asked for, but the "
                       f"given {type(env).__name__} has num_envs="
                       f"{env.num_envs}.")
    if in_graph and not env.in_graph:
      raise ValueError(NOT_IN_GRAPH_ERROR.format(
          what=f"the given {type(env).__name__}", ids=ids))
    return env
  if isinstance(env, str):
    if in_graph:
      if env not in IN_GRAPH_ENVIRONMENTS:
        raise ValueError(NOT_IN_GRAPH_ERROR.format(
            what=f"gymnasium's {env!r}", ids=ids))
      return IN_GRAPH_ENVIRONMENTS[env](num_envs or 1, seed=seed)
    return gym_adapter.GymEnvironment(env, num_envs, seed=seed)
  if _is_gymnasium_object(env):
    if in_graph:
      raise ValueError(NOT_IN_GRAPH_ERROR.format(
          what=f"the gymnasium {type(env).__name__}", ids=ids))
    return gym_adapter.GymEnvironment(env, num_envs, seed=seed)
  if callable(env):
    made = env()
    if isinstance(made, base.Environment):
      return make(made, num_envs, seed=seed, in_graph=in_graph)
    if not _is_gymnasium_object(made):
      raise TypeError(f"make: a factory must return an Environment or a "
                      f"gymnasium Env or VectorEnv, got "
                      f"{type(made).__name__}: {made!r}.")
    if in_graph:
      raise ValueError(NOT_IN_GRAPH_ERROR.format(
          what=f"the gymnasium {type(made).__name__}", ids=ids))
    pending = [made]   # Used first, so the factory runs num_envs times.

    def factory():
      return pending.pop() if pending else env()

    return gym_adapter.GymEnvironment(factory, num_envs, seed=seed)
  raise TypeError(f"make: env must be a gymnasium id, Env, VectorEnv, a "
                  f"zero-argument factory of one, or an snt.envs.Environment, "
                  f"got {type(env).__name__}: {env!r}.")
