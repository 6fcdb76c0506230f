"""`make`: whatever a scenario is given as `env`, as an `Environment`
(`InWorkers` marks an id or factory to step in worker processes)."""

import dataclasses
from typing import Any, Callable

from sonnet_like.core import arguments
from sonnet_like.envs import acrobot
from sonnet_like.envs import base
from sonnet_like.envs import cartpole
from sonnet_like.envs import gym_adapter
from sonnet_like.envs import gym_workers
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


@dataclasses.dataclass(frozen=True)
class InWorkers:
  """An id or Env factory that `snt.envs.make` steps in worker processes.

  For where `snt.envs.make` is called for you: an RL scenario's `env` (and
  `eval_env`) accept it as they accept the id or the factory it holds.
  `snt.envs.make(InWorkers(env, workers), num_envs, seed)` is
  `snt.envs.make(env, num_envs, seed, workers=workers)`. Called with no
  arguments it makes one Env, as the factory does, in this process.

  >>> InWorkers("CartPole-v1", workers=2)
  InWorkers(env='CartPole-v1', workers=2)

  Attributes:
    env: A gymnasium id or a zero-argument factory returning a gymnasium
      Env (for example `functools.partial(snt.envs.atari, game,
      training=True)`).
    workers: How many processes step the environments (at most one per
      environment).
  """
  env: str | Callable[[], Any]
  workers: int

  def __post_init__(self):
    gym_workers.check_workers("InWorkers", self.workers)
    if self.workers is None:
      raise ValueError("InWorkers: workers must be a positive int (how many "
                       "processes step the environments), got None.")
    gym_workers.worker_factory("InWorkers", self.env, self.workers,
                               gym_adapter.import_gymnasium())

  def __call__(self) -> Any:
    """One Env, made here as a worker makes each of its own."""
    return gym_workers.worker_factory("InWorkers", self.env, self.workers,
                                      gym_adapter.import_gymnasium())()


def _is_gymnasium_object(value) -> bool:
  try:
    gym = gym_adapter.import_gymnasium()
  except ImportError:
    return False
  return isinstance(value, (gym.Env, gym.vector.VectorEnv))


def make(env: Any, num_envs: int | None = None, seed: int = 0,
         in_graph: bool = False,
         workers: int | None = None) -> base.Environment:
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
        called `num_envs` times);
      - an `InWorkers(id_or_factory, workers)`: as `workers=` below, for
        where `make` is called for you (a scenario's `env`).
    num_envs: How many environments. None takes what `env` has (an
      `Environment`'s or `VectorEnv`'s count) or 1. An explicit count that
      differs from the count of a given `Environment` or `VectorEnv` is an
      error.
    seed: Seeds a newly made environment.
    in_graph: Require an environment written in TensorFlow (compilable into
      one `tf.function` with the policy, also with XLA).
    workers: Step a gymnasium id's or an Env factory's environments in
      this many processes (at most one per environment), each its
      consecutive share: the same episodes as in this process, on more
      cores (`GymEnvironment`). None steps them here. Worth it for
      environments whose step costs much more than a message to a process
      (~0.1 ms): 8 Breakout games stepped 1.55x as fast in two workers on
      2 cores (`benchmarks/bench_atari_envs.py`); not for CartPole.

  Returns:
    The `Environment`.

  Raises:
    TypeError: `env` is none of the above, or cannot be made in workers.
    ValueError: Counts disagree, `in_graph=True` and `env` steps in Python,
      or a bad `workers`.

  >>> make("CartPole-v1", num_envs=4, in_graph=True)
  CartPole(num_envs=4, max_episode_steps=500)
  >>> make("CartPole-v1", num_envs=2)
  GymEnvironment('CartPole-v1', num_envs=2)
  """
  arguments.check_positive_int("make", "num_envs", num_envs, optional=True)
  gym_workers.check_workers("make", workers)
  if isinstance(env, InWorkers):
    if workers is not None and workers != env.workers:
      raise ValueError(f"make: workers={workers} was asked for, but the "
                       f"given {env!r} has workers={env.workers}.")
    env, workers = env.env, env.workers
  if workers is not None:
    return _in_workers(env, num_envs, seed, in_graph, int(workers))
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
                  f"zero-argument factory of one, an snt.envs.InWorkers or "
                  f"an snt.envs.Environment, got {type(env).__name__}: "
                  f"{env!r}.")


def _in_workers(env: Any, num_envs: int | None, seed: int, in_graph: bool,
                workers: int) -> gym_adapter.GymEnvironment:
  """`make(env, ..., workers=workers)`: a `GymEnvironment` whose Envs are
  made and stepped in `workers` processes."""
  if in_graph:
    raise ValueError(f"make: in_graph=True asks for an environment written "
                     f"in TensorFlow, workers={workers} for gymnasium Envs "
                     f"stepped in Python by worker processes; pass one of "
                     f"them.")
  # Checks env.
  gym_workers.worker_factory("make", env, workers,
                             gym_adapter.import_gymnasium())
  return gym_adapter.GymEnvironment(env, num_envs, seed=seed, workers=workers)
