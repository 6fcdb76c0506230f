"""Episode bookkeeping shared by the RL scenarios.

`EpisodeStats` follows a batch of environments through a run (inside the
compiled step) and reports the mean return and length of the most recent
completed episodes; it is checkpointed with the run. `EpisodeRunner` plays a
policy for a number of whole episodes, for evaluation.
"""

import math
from typing import Callable

import numpy as np
import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import autograph
from sonnet_like.envs import base


class EpisodeStats(tf.Module):
  """Returns and lengths of a batch of environments' episodes.

  Args:
    num_envs: Environments in the batch.
    window: How many recently completed episodes the means cover (at least
      `num_envs`, so one step never overwrites its own entries).
  """

  def __init__(self, num_envs: int, window: int = 100,
               name: str = "episode_stats"):
    super().__init__(name=name)
    self.num_envs = num_envs
    self.window = max(window, num_envs)
    self.returns = tf.Variable(tf.zeros([num_envs]), trainable=False,
                               name="returns")
    self.lengths = tf.Variable(tf.zeros([num_envs], tf.int64),
                               trainable=False, name="lengths")
    self.recent_returns = tf.Variable(tf.zeros([self.window]),
                                      trainable=False, name="recent_returns")
    self.recent_lengths = tf.Variable(tf.zeros([self.window], tf.int64),
                                      trainable=False, name="recent_lengths")
    self.episodes = tf.Variable(0, dtype=tf.int64, trainable=False,
                                name="episodes")
    self.env_steps = tf.Variable(0, dtype=tf.int64, trainable=False,
                                 name="env_steps")

  @autograph.as_written
  def update(self, timestep: base.TimeStep) -> None:
    """Adds one step of every environment (traced or eager)."""
    returns = self.returns + tf.cast(timestep.reward, tf.float32)
    lengths = self.lengths + 1
    done = timestep.done
    # The episodes ended, in the order of their environments, fill the
    # next slots of the window. Written with fixed shapes and selections
    # (no scatter): `tf.vectorized_map` runs it for a population's members.
    ended = tf.cast(done, tf.int64)
    slots = (self.episodes + tf.cumsum(ended, exclusive=True)) % self.window
    hits = tf.logical_and(done[:, None], tf.equal(
        slots[:, None], tf.range(self.window, dtype=tf.int64)[None, :]))
    filled = tf.reduce_any(hits, axis=0)  # [window]
    # Its environment (at most one hit per slot: the sum is that index).
    source = tf.reduce_sum(tf.where(
        hits, tf.range(self.num_envs, dtype=tf.int64)[:, None],
        tf.zeros([], tf.int64)), axis=0)
    self.recent_returns.assign(tf.where(
        filled, tf.gather(returns, source), self.recent_returns))
    self.recent_lengths.assign(tf.where(
        filled, tf.gather(lengths, source), self.recent_lengths))
    self.episodes.assign_add(tf.reduce_sum(ended))
    self.env_steps.assign_add(self.num_envs)
    self.returns.assign(tf.where(done, tf.zeros_like(returns), returns))
    self.lengths.assign(tf.where(done, tf.zeros_like(lengths), lengths))

  @autograph.as_written
  def logs(self) -> dict[str, tf.Tensor]:
    """Mean return and length of the last `window` episodes (NaN before the
    first one ends), episodes completed and environment steps so far."""
    filled = tf.minimum(self.episodes, self.window)
    mask = tf.range(self.window, dtype=tf.int64) < filled
    count = tf.cast(filled, tf.float32)
    nan = tf.constant(math.nan)

    def mean(values):
      total = tf.reduce_sum(tf.where(mask, tf.cast(values, tf.float32), 0.0))
      return tf.where(count > 0, total / tf.maximum(count, 1.0), nan)

    return {"episode_return": mean(self.recent_returns),
            "episode_length": mean(self.recent_lengths),
            "episodes": tf.cast(self.episodes, tf.float32),
            "env_steps": tf.cast(self.env_steps, tf.float32)}


class EpisodeRunner:
  """Plays a policy for whole episodes, for evaluation; compiled once.

  Each of the `num_envs` environments plays `ceil(num_episodes / num_envs)`
  whole episodes (so short episodes are not favoured), starting from
  `env.reset(seed=seed)`, and the first `num_episodes` of them are returned,
  in the order (round, environment).

  Args:
    env: The environments to play in (not the ones training steps in: they
      are reset at every call).
    act: Maps observations `[num_envs, ...]` to actions; traced.
    num_episodes: How many episodes a call returns.
    max_steps: Give up (with an error) after this many steps of the batch.
  """

  def __init__(self, env: base.Environment,
               act: Callable[[tf.Tensor], tf.Tensor], num_episodes: int,
               max_steps: int = 100_000):
    arguments.check_positive_int("EpisodeRunner", "num_episodes", num_episodes)
    self.env, self.act = env, act
    self.num_episodes, self.max_steps = num_episodes, max_steps
    self.rounds = -(-num_episodes // env.num_envs)
    self._play = tf.function(self._play_all)

  def _play_all(self):
    env, n, rounds = self.env, self.env.num_envs, self.rounds

    def going(t, played, *_):
      return tf.logical_and(t < self.max_steps,
                            tf.reduce_any(played < rounds))

    def body(t, played, returns, lengths, table_r, table_l):
      action = self.act(env.observation())
      timestep = base.checked_timestep(env, env.step(action))
      returns = returns + tf.cast(timestep.reward, tf.float32)
      lengths = lengths + 1
      record = tf.logical_and(timestep.done, played < rounds)
      where = tf.where(record)[:, 0]
      index = tf.stack([tf.gather(played, where), where], axis=1)
      table_r = tf.tensor_scatter_nd_update(table_r, index,
                                            tf.gather(returns, where))
      table_l = tf.tensor_scatter_nd_update(table_l, index,
                                            tf.gather(lengths, where))
      played = played + tf.cast(timestep.done, tf.int64)
      returns = tf.where(timestep.done, 0.0, returns)
      lengths = tf.where(timestep.done, tf.zeros_like(lengths), lengths)
      return t + 1, played, returns, lengths, table_r, table_l

    start = (tf.constant(0), tf.zeros([n], tf.int64), tf.zeros([n]),
             tf.zeros([n], tf.int64), tf.zeros([rounds, n]),
             tf.zeros([rounds, n], tf.int64))
    _, played, _, _, table_r, table_l = tf.while_loop(going, body, start)
    return played, table_r, table_l

  def __call__(self, seed: int = 0) -> dict[str, np.ndarray]:
    """Returns {"return": [num_episodes] float32, "length": [...] int64}."""
    self.env.reset(seed=seed)
    played, table_r, table_l = self._play()
    rounds, n = self.rounds, self.env.num_envs
    if np.any(played.numpy() < rounds):
      raise RuntimeError(
          f"EpisodeRunner: {int(np.minimum(played.numpy(), rounds).sum())} of "
          f"{rounds * n} episodes ended within max_steps={self.max_steps} "
          "steps; raise max_steps or check that the environment ends "
          "episodes.")
    return {"return": table_r.numpy().reshape(-1)[:self.num_episodes],
            "length": table_l.numpy().reshape(-1)[:self.num_episodes]}
