"""`GymBatch`: gymnasium Envs stepped one after another in one process.

`GymEnvironment` steps its Envs with one `GymBatch` in the calling process,
or with one in each worker process (`gym_workers.GymWorkers`): both run this
code, so the episodes are the same either way.
"""

from typing import Any

import numpy as np


class GymBatch:
  """A list of gymnasium Envs, reset and stepped in turn.

  Env `j` of the batch is env `offset + j` of the whole `GymEnvironment`:
  `reset(seed)` seeds it with `seed + offset + j`. An Env whose episode ends
  in `step` is reset there (without a seed); its last observation is
  returned apart.

  Args:
    envs: The gymnasium Envs.
    offset: The index of the first one in the whole batch.
  """

  def __init__(self, envs: list[Any], offset: int = 0):
    import gymnasium  # pylint: disable=g-import-not-at-top
    self.envs = envs
    self.num_envs = len(envs)
    self._offset = offset
    self._discrete = isinstance(envs[0].action_space,
                                gymnasium.spaces.Discrete)

  def spaces(self) -> tuple[Any, Any, str]:
    """The first Env's observation and action spaces and its name (the
    spec's id, or the class name without a spec)."""
    first = self.envs[0]
    spec = first.spec
    name = spec.id if spec is not None else type(first).__name__
    return first.observation_space, first.action_space, name

  def reset(self, seed: int | None) -> np.ndarray:
    """Resets every Env; returns their observations, stacked."""
    return np.stack([
        env.reset(seed=None if seed is None else seed + self._offset + j)[0]
        for j, env in enumerate(self.envs)])

  def step(self, action: np.ndarray) -> tuple[Any, ...]:
    """Steps Env `j` with `action[j]`, resetting those whose episode ended.

    Returns:
      observation (stacked; after the reset for an ended episode), reward
      (float32), terminated and truncated (bool, as the Envs say), and a
      dict from the index of each ended Env to its episode's last
      observation.
    """
    observation, reward, terminated, truncated, final = [], [], [], [], {}
    for j, (env, env_action) in enumerate(zip(self.envs, action)):
      if self._discrete:
        env_action = int(env_action)
      obs, rew, term, trunc, _ = env.step(env_action)
      if term or trunc:
        final[j] = obs
        obs, _ = env.reset()
      observation.append(obs)
      reward.append(rew)
      terminated.append(term)
      truncated.append(trunc)
    # `np.array` stacks the equal-shaped observations (faster than
    # `np.stack` for a few small arrays).
    return (np.array(observation), np.asarray(reward, np.float32),
            np.asarray(terminated, np.bool_), np.asarray(truncated, np.bool_),
            final)

  def close(self) -> None:
    for env in self.envs:
      env.close()
