"""gymnasium environments behind the batched environment protocol.

`GymEnvironment` steps gymnasium environments in Python, through
`tf.numpy_function`, so a policy compiled with `tf.function` can drive them
(also from inside a `tf.while_loop`). It is not `in_graph`: it cannot be
compiled with XLA, and each step returns to Python once.

With `workers=k`, k processes step the environments
(`gym_workers.GymWorkers`), each its consecutive share, with the code that
steps them here (`gym_batch.GymBatch`): the same episodes on more cores.

A gymnasium environment's state lives in Python (in this process or in the
workers), outside TensorFlow variables, so it is not checkpointed: a
checkpoint holds nothing of it, and a run resumed from a checkpoint starts
new episodes in its gymnasium environments.
"""

import functools
from typing import Any, Callable, Sequence

import numpy as np
import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import autograph
from sonnet_like.envs import base
from sonnet_like.envs import gym_batch
from sonnet_like.envs import gym_workers

GYMNASIUM_MISSING = (
    "GymEnvironment needs gymnasium, which is not installed. Install it with "
    "`pip install sonnet_like[rl]` (or `pip install gymnasium`).")

NO_SPEC_ERROR = (
    "GymEnvironment: num_envs={num_envs} copies of the given gymnasium Env "
    "are needed, but it has no spec to make them from (it was not created by "
    "gymnasium.make). Pass a zero-argument factory instead, e.g. "
    "GymEnvironment(lambda: MyEnv(), num_envs={num_envs}).")

COPY_ERROR = (
    "GymEnvironment: a copy makes its environments again, which {vector!r} "
    "cannot be (a VectorEnv or an Env without a spec); pass a gymnasium id "
    "or a zero-argument factory instead.")

# The names of the ops the TensorFlow side makes (a caller vectorising a
# step over several copies finds them by name).
OP_NAMES = ("gym_reset", "gym_observation", "gym_step")

NO_RESET_MASK_ERROR = (
    "GymEnvironment: the VectorEnv {vector} resets ended environments on the "
    "next step (autoreset mode {mode}) and cannot reset them selectively with "
    "reset(options={{'reset_mask': ...}}), so the same-step auto-reset of the "
    "protocol cannot be given. Make it with autoreset_mode="
    "gymnasium.vector.AutoresetMode.SAME_STEP, e.g. gymnasium.make_vec(id, "
    "num_envs, vector_kwargs={{'autoreset_mode': "
    "gymnasium.vector.AutoresetMode.SAME_STEP}}).")


def import_gymnasium():
  """Returns the gymnasium module, or raises an error saying how to get it."""
  try:
    import gymnasium  # pylint: disable=g-import-not-at-top
  except ImportError as error:
    raise ImportError(GYMNASIUM_MISSING) from error
  return gymnasium


def _convert_action_space(space, where: str) -> base.ActionSpace:
  gym = import_gymnasium()
  if isinstance(space, gym.spaces.Discrete):
    if int(space.start) != 0:
      raise ValueError(f"{where}: Discrete action spaces must start at 0, got "
                       f"{space}.")
    return base.Discrete(int(space.n))
  if isinstance(space, gym.spaces.Box):
    return base.Box(space.low, space.high)
  raise ValueError(f"{where}: the action space must be a gymnasium Discrete "
                   f"or Box, got {space}.")


def _convert_observation_space(space, where: str) -> tf.TensorSpec:
  gym = import_gymnasium()
  if isinstance(space, gym.spaces.Box):
    # uint8 (images, e.g. snt.envs.atari) stays uint8: a quarter of the
    # bytes into the compiled step, which scales it (snt.nets.NatureCNN).
    dtype = tf.uint8 if space.dtype == np.uint8 else tf.float32
    return tf.TensorSpec(space.shape, dtype)
  raise ValueError(f"{where}: the observation space must be a gymnasium Box, "
                   f"got {space}.")


def _as_protocol(observation: np.ndarray, reward, terminated, truncated,
                 final: np.ndarray) -> tuple[np.ndarray, ...]:
  """A step's outputs as `step` returns them: rewards float32, ends bool,
  and a step that is both terminated and truncated only terminated."""
  terminated = np.asarray(terminated, np.bool_)
  truncated = np.logical_and(np.asarray(truncated, np.bool_), ~terminated)
  return (observation, np.asarray(reward, np.float32), terminated,
          truncated, final)


def _batch_as_protocol(stepped: tuple[Any, ...], lead: tuple[int, ...],
                       item: tuple[int, ...], dtype: Any
                       ) -> tuple[np.ndarray, ...]:
  """`GymBatch.step`'s outputs (`stepped`) as `_as_protocol`'s, the
  batch's environments, in order, laid out on the axes `lead`, an
  observation of shape `item` and `dtype` each. The final observation is
  the observation itself unless an episode ended (nothing writes into an
  array once returned)."""
  observation, reward, terminated, truncated, ended = stepped
  observation = final = np.asarray(observation, dtype).reshape(*lead, *item)
  if ended:
    final = observation.copy()
    by_env = final.reshape(len(reward), -1)  # A view of `final`.
    for i, last in ended.items():
      by_env[i] = np.reshape(last, -1)
  return _as_protocol(observation, np.reshape(reward, lead),
                      np.reshape(terminated, lead),
                      np.reshape(truncated, lead), final)


class _PythonSide:
  """A `GymEnvironment`'s state in Python: its observation (None before
  the first reset). Kept apart because a `tf.Module`'s own attributes are
  tracked, and assigning one costs ~3 us, once a step."""

  __slots__ = ("observation",)

  def __init__(self):
    self.observation = None


def python_steps_of(envs: Sequence["GymEnvironment"]
                    ) -> Callable[[np.ndarray], tuple[np.ndarray, ...]]:
  """`python_step` of each of `envs` (copies of one, such as a
  population's members' own) as one function: actions `[len(envs),
  num_envs, ...]` in, each output stacked on a leading axis of
  `len(envs)`. When all step their Envs in this process, one `GymBatch`
  of all their Envs steps them in one loop (~10 us less an environment
  object than each's own step); else each steps its own in turn. Either
  way each keeps its observation, as its own step would."""
  if any(env._vector is not None or env.workers is not None
         for env in envs):
    return lambda actions: _stacked([env.python_step(action)
                                     for env, action in zip(envs, actions)])
  joined = gym_batch.GymBatch([e for env in envs for e in env._batch.envs])
  first = envs[0]
  lead = (len(envs), first.num_envs)

  def step(actions: np.ndarray) -> tuple[np.ndarray, ...]:
    for env in envs:
      env._py_observation()  # A first reset, as its own step makes.
    actions = np.asarray(actions)
    first._check_py_action(actions)
    stepped = _batch_as_protocol(
        joined.step(actions.reshape(-1, *actions.shape[2:])), lead,
        first._observation_shape[1:], first._observation_dtype)
    for env, observation in zip(envs, stepped[0]):
      env._python.observation = observation
    return stepped

  return step


def _stacked(results: list[tuple[np.ndarray, ...]]) -> tuple[np.ndarray, ...]:
  """Each output of several steps, stacked on a new leading axis
  (`np.array` of equal-shaped arrays: faster than `np.stack` for small)."""
  return tuple(np.array(parts) for parts in zip(*results))


class GymEnvironment(base.Environment):
  """A batch of gymnasium environments as an `Environment`.

  Observations are float32 `[num_envs, *shape]` (uint8 for a uint8 `Box`,
  such as images); a `Discrete` action space
  becomes `snt.envs.Discrete` (int actions `[num_envs]`), a `Box` one
  `snt.envs.Box` (float32 actions `[num_envs, *shape]`). Ended episodes are
  reset within the same `step` (`final_observation` holds the last
  observation), whatever the autoreset mode of a given `VectorEnv`. A step
  that gymnasium reports both terminated and truncated is terminated.

  The first `reset` (explicit, or implicit at the first `observation` or
  `step`) seeds environment `i` with `seed + i`, as gymnasium's vector
  environments do; `reset(seed=s)` reseeds them with `s + i`.

  With `workers=k` (an id or an Env factory), k processes step the
  environments, each a consecutive share (`num_envs=8, workers=2`: four
  each), at the same time: the same observations, rewards and ends as
  stepped here, on more cores. The processes are forked (the factory is
  called in them; it need not be picklable where the platform forks) and
  stopped by `close()` or when the environment is garbage collected. On 2
  cores, 8 Breakout games stepped 1.55x as fast in two workers as here
  (`benchmarks/bench_atari_envs.py`); an environment whose step costs
  less than a message to a process (~0.1 ms), such as CartPole, steps
  faster here.

  The environments' state lives in Python (here or in the workers) and is
  not checkpointed: a checkpoint holds nothing of it, and a resumed run
  starts new episodes.

  >>> env = GymEnvironment("CartPole-v1", num_envs=2, seed=0)
  >>> env.reset(seed=0).shape
  TensorShape([2, 4])
  >>> env.step(tf.constant([0, 1])).reward.numpy()
  array([1., 1.], dtype=float32)

  Args:
    env_or_id: A gymnasium id (`"CartPole-v1"`), an `Env` (copies made from
      its spec when `num_envs > 1`), a `VectorEnv`, or a zero-argument
      factory returning an `Env` (called `num_envs` times) or a `VectorEnv`.
    num_envs: How many environments; None means 1, or the `VectorEnv`'s
      count (asking a `VectorEnv` for another count is an error).
    seed: Seeds the environments at their first reset.
    workers: None steps the environments in this process; a positive int
      steps them in that many processes (at most one per environment); then
      `env_or_id` must be an id or a factory of `Env`s.
    name: Module name.
  """

  def __init__(self, env_or_id: Any, num_envs: int | None = None,
               seed: int = 0, workers: int | None = None,
               name: str = "gym_environment"):
    super().__init__(name=name)
    gym = import_gymnasium()
    arguments.check_positive_int("GymEnvironment", "num_envs", num_envs,
                                 optional=True)
    gym_workers.check_workers("GymEnvironment", workers)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
      raise ValueError(f"GymEnvironment: seed must be an int, got {seed!r}.")
    self._seed = int(seed)
    self.workers = None if workers is None else int(workers)
    self._batch, self._vector = None, None
    # Made again by `__deepcopy__`.
    self._made_from = (env_or_id, num_envs, self.workers)
    source = env_or_id
    envs = None
    if self.workers is not None:
      factory = gym_workers.worker_factory("GymEnvironment", source,
                                           self.workers, gym)
      self._batch = gym_workers.GymWorkers(
          factory, num_envs or 1, self.workers,
          name=source if isinstance(source, str) else getattr(
              source, "__name__", type(source).__name__))
    elif isinstance(source, str):
      envs = [gym.make(source) for _ in range(num_envs or 1)]
    elif isinstance(source, gym.vector.VectorEnv):
      self._vector = source
    elif isinstance(source, gym.Env):
      count = num_envs or 1
      if count > 1 and source.spec is None:
        raise ValueError(NO_SPEC_ERROR.format(num_envs=count))
      envs = [source] + [gym.make(source.spec) for _ in range(count - 1)]
    elif callable(source):
      first = source()
      if isinstance(first, gym.vector.VectorEnv):
        self._vector = first
      elif isinstance(first, gym.Env):
        envs = [first] + [source() for _ in range((num_envs or 1) - 1)]
      else:
        raise TypeError(f"GymEnvironment: the factory must return a gymnasium "
                        f"Env or VectorEnv, got {type(first).__name__}: "
                        f"{first!r}.")
    else:
      raise TypeError(f"GymEnvironment: env_or_id must be a gymnasium id, "
                      f"Env, VectorEnv or a factory of them, got "
                      f"{type(source).__name__}: {source!r}.")

    if self._vector is not None:
      self.num_envs = int(self._vector.num_envs)
      if num_envs is not None and num_envs != self.num_envs:
        raise ValueError(f"GymEnvironment: num_envs={num_envs} was asked for, "
                         f"but the VectorEnv has {self.num_envs} "
                         f"environments.")
      mode = self._vector.metadata.get("autoreset_mode",
                                       gym.vector.AutoresetMode.NEXT_STEP)
      self._same_step = mode == gym.vector.AutoresetMode.SAME_STEP
      self._mode = mode
      spec = getattr(self._vector, "spec", None)
      observation_space = self._vector.single_observation_space
      action_space = self._vector.single_action_space
      self.env_name = spec.id if spec is not None else type(
          self._vector).__name__
    else:
      if envs is not None:
        self._batch = gym_batch.GymBatch(envs)
      self.num_envs = self._batch.num_envs
      observation_space, action_space, self.env_name = self._batch.spaces()
    where = f"GymEnvironment({self.env_name})"
    self._where = where
    try:
      self.observation_spec = _convert_observation_space(observation_space,
                                                         where)
      self.action_space = _convert_action_space(action_space, where)
    except ValueError:
      if self.workers is not None:
        self._batch.close()   # Not left to the garbage collector.
      raise
    self.in_graph = False
    self._observation_dtype = self.observation_spec.dtype.as_numpy_dtype
    self._observation_shape = (self.num_envs,
                               *self.observation_spec.shape.as_list())
    self._python = _PythonSide()

  def __repr__(self) -> str:
    workers = "" if self.workers is None else f", workers={self.workers}"
    return (f"GymEnvironment({self.env_name!r}, num_envs={self.num_envs}"
            f"{workers})")

  def __deepcopy__(self, memo: dict[int, Any]) -> "GymEnvironment":
    """New environments made as these were (from the id, the Env's spec or
    the factory; gymnasium's state is not copied), with the same seed, in
    as many new worker processes: a copy starts its own episodes at its
    first reset."""
    gym = import_gymnasium()
    source, num_envs, workers = self._made_from
    if isinstance(source, gym.vector.VectorEnv):
      raise TypeError(COPY_ERROR.format(vector=source))
    if isinstance(source, gym.Env):
      if source.spec is None:
        raise TypeError(COPY_ERROR.format(vector=source))
      source = functools.partial(gym.make, source.spec)
    made = GymEnvironment(source, num_envs, self._seed, workers, self.name)
    memo[id(self)] = made
    return made

  # Python side, as the TensorFlow side's ops call it (a caller stepping
  # several batches in one op calls it too).

  def python_step(self, action: np.ndarray) -> tuple[np.ndarray, ...]:
    """`step` in NumPy: observation, reward, terminated, truncated, final
    observation."""
    return self._py_step(action)

  def python_observation(self) -> np.ndarray:
    """`observation` in NumPy (resetting first if nothing was reset)."""
    return self._py_observation()

  # Python side, called through tf.numpy_function.

  def _as_observation(self, observation) -> np.ndarray:
    return np.asarray(observation, self._observation_dtype).reshape(
        self._observation_shape)

  def _py_reset(self, seed: int | None) -> np.ndarray:
    if seed is None and self._python.observation is None:
      seed = self._seed
    if self._vector is not None:
      observation, _ = self._vector.reset(seed=seed)
    else:
      observation = self._batch.reset(seed)
    self._python.observation = self._as_observation(observation)
    return self._python.observation

  def _py_observation(self) -> np.ndarray:
    if self._python.observation is None:
      self._py_reset(None)
    return self._python.observation

  def _check_py_action(self, action: np.ndarray) -> None:
    if isinstance(self.action_space, base.Discrete):
      bad = action[(action < 0) | (action >= self.action_space.num_actions)]
      if bad.size:
        raise ValueError(f"{self._where}: actions must be in [0, "
                         f"{self.action_space.num_actions}), got "
                         f"{bad.tolist()[:5]}.")

  def _py_step(self, action: np.ndarray):
    self._py_observation()
    action = np.asarray(action)
    self._check_py_action(action)
    if self._vector is not None:
      observation, reward, terminated, truncated, final = self._vector_step(
          action)
      stepped = _as_protocol(self._as_observation(observation), reward,
                             terminated, truncated,
                             self._as_observation(final))
    else:
      stepped = _batch_as_protocol(
          self._batch.step(action), self._observation_shape[:1],
          self._observation_shape[1:], self._observation_dtype)
    self._python.observation = stepped[0]
    return stepped

  def _vector_step(self, action: np.ndarray):
    observation, reward, terminated, truncated, info = self._vector.step(
        action)
    observation = np.array(observation, self._observation_dtype)
    done = np.logical_or(terminated, truncated)
    final = observation.copy()
    if self._same_step:
      for i in np.flatnonzero(info.get("_final_obs", np.zeros_like(done))):
        final[i] = info["final_obs"][i]
    elif done.any():
      try:
        fresh, _ = self._vector.reset(options={"reset_mask": done})
      except Exception as error:  # pylint: disable=broad-except
        raise ValueError(NO_RESET_MASK_ERROR.format(
            vector=self._vector, mode=self._mode)) from error
      observation[done] = np.asarray(fresh, self._observation_dtype)[done]
    return observation, reward, terminated, truncated, final

  # TensorFlow side.

  def reset(self, seed: int | None = None) -> tf.Tensor:
    """Starts new episodes; `seed` (a Python int) reseeds env i with seed+i."""
    if seed is not None and (isinstance(seed, bool) or
                             not isinstance(seed, (int, np.integer))):
      raise ValueError(f"{self._where}: seed must be a Python int or None, "
                       f"got {seed!r}.")
    seed = None if seed is None else int(seed)
    observation = tf.numpy_function(lambda: self._py_reset(seed), [],
                                    self.observation_spec.dtype,
                                    name="gym_reset")
    return self._shaped(observation)

  @autograph.as_written
  def observation(self) -> tf.Tensor:
    observation = tf.numpy_function(self._py_observation, [],
                                    self.observation_spec.dtype,
                                    name="gym_observation")
    return self._shaped(observation)

  def _shaped(self, observation: tf.Tensor) -> tf.Tensor:
    observation.set_shape([self.num_envs, *self.observation_spec.shape])
    return observation

  def _checked_action(self, action) -> tf.Tensor:
    space = self.action_space
    shape = [self.num_envs, *space.spec.shape]
    action = tf.convert_to_tensor(action)
    if isinstance(space, base.Discrete) and not action.dtype.is_integer:
      raise TypeError(f"{self._where}: action must be an integer tensor, got "
                      f"dtype {action.dtype.name}.")
    if not action.shape.is_compatible_with(shape):
      raise ValueError(f"{self._where}: action must have shape {shape}, got "
                       f"{action.shape}.")
    action = tf.cast(action, space.spec.dtype)
    if tf.executing_eagerly():
      self._check_py_action(action.numpy())
    return action

  @autograph.as_written
  def step(self, action: tf.Tensor) -> base.TimeStep:
    """Steps every environment in Python; ended episodes restart at once."""
    action = self._checked_action(action)
    observation, reward, terminated, truncated, final = tf.numpy_function(
        self._py_step, [action],
        [self.observation_spec.dtype, tf.float32, tf.bool, tf.bool,
         self.observation_spec.dtype],
        name="gym_step")
    for flag in (reward, terminated, truncated):
      flag.set_shape([self.num_envs])
    return base.TimeStep(self._shaped(observation), reward, terminated,
                         truncated, self._shaped(final))

  def close(self) -> None:
    """Closes the gymnasium environments (and stops their worker
    processes)."""
    if self._vector is not None:
      self._vector.close()
    else:
      self._batch.close()

