"""gymnasium Envs stepped in worker processes, so that several cores step them.

`GymWorkers` starts `workers` processes; each makes its share of the Envs
(consecutive indices) and steps them with a `gym_batch.GymBatch`, the code
that steps them in the calling process, so the episodes are those of
in-process stepping. A step sends each worker its actions through a pipe,
then waits for every answer (observations come back through the pipe too):
the workers step at the same time while the caller waits; between two steps
(PPO's `act`) the workers wait.

The processes are forked (where the platform has `fork`; spawned elsewhere,
and then the factory must be picklable): the factory runs in the child, so a
lambda or a closure works, and a worker does not import TensorFlow again.
(Python 3.12+ warns that forking a process with threads may deadlock the
child: a worker runs only the Envs, never TensorFlow, and freezes its
garbage collector so that no finalizer of the parent's objects runs there.)
A worker ignores SIGINT (the parent handles Ctrl-C and stops it) and leaves
when told, when its pipe closes or when its parent is gone.
`GymWorkers.close`, or the garbage collection of the `GymWorkers`, stops
them.
"""

import functools
import gc
import multiprocessing
import os
import signal
import traceback
import weakref
from typing import Any, Callable

import numpy as np

from sonnet_like.envs import base
from sonnet_like.envs import gym_batch

# How long close() waits for a worker to leave before it terminates it.
CLOSE_TIMEOUT_S = 5.0

NOT_AN_ENV_ERROR = (
    "GymEnvironment: each worker process makes its environments with the "
    "factory, which must return a gymnasium Env there, got {got}. A "
    "VectorEnv or an snt.envs.Environment steps its environments itself: "
    "pass it without workers.")

WORKER_FAILED = (
    "GymEnvironment({name}): worker process {index} (pid {pid}, environments "
    "{first}-{last}) failed in {command}; the workers were stopped (make a "
    "new environment to go on):\n{error}")

WORKER_GONE = (
    "GymEnvironment({name}): worker process {index} (pid {pid}, environments "
    "{first}-{last}) exited (exit code {code}) while it was asked to "
    "{command}; the workers were stopped (make a new environment to go on).")

SOURCE_ERROR = (
    "{owner}: workers={workers} steps gymnasium Envs in worker processes, "
    "each making its own from a gymnasium id or a zero-argument factory of "
    "an Env; got {got}, which {why}. {fix}")

CLOSED_ERROR = (
    "GymEnvironment({name}): its worker processes were stopped by close(); "
    "make a new environment to step.")


def check_workers(owner: str, workers: Any) -> None:
  """Raises unless `workers` is None or a positive int."""
  if workers is not None and (isinstance(workers, bool) or
                              not isinstance(workers, (int, np.integer)) or
                              workers < 1):
    raise ValueError(f"{owner}: workers must be a positive int (how many "
                     f"processes step the environments) or None (step them "
                     f"in this process), got {workers!r}.")


def worker_factory(owner: str, source: Any, workers: int,
                   gym: Any) -> Callable[[], Any]:
  """What the workers make their Envs with: `source` if it is a factory,
  `gym.make(source)` for an id (`gym`: the gymnasium module); an error
  naming `owner` for what cannot be made in a worker."""
  if isinstance(source, str):
    return functools.partial(gym.make, source)
  fix = ("Pass its id or a factory, e.g. lambda: gymnasium.make(...), or "
         "workers=None.")
  if isinstance(source, (base.Environment, gym.vector.VectorEnv)):
    why, fix = ("steps its environments itself",
                "Pass it without workers.")
  elif isinstance(source, gym.Env):
    why = "is an environment made in this process"
  elif not callable(source):
    why = "is neither"
  else:
    return source
  raise TypeError(SOURCE_ERROR.format(
      owner=owner, workers=workers, got=f"{type(source).__name__}: "
      f"{source!r}", why=why, fix=fix))


def shares(num_envs: int, workers: int) -> list[range]:
  """The consecutive environment indices each worker steps: at most
  `num_envs` workers, the first ones one environment more where the
  division is not even."""
  workers = min(workers, num_envs)
  size, extra = divmod(num_envs, workers)
  bounds = [0]
  for index in range(workers):
    bounds.append(bounds[-1] + size + (index < extra))
  return [range(a, b) for a, b in zip(bounds[:-1], bounds[1:])]


def _serve(connection, parent_end, factory: Callable[[], Any], count: int,
           offset: int, parent: int) -> None:
  """A worker's life: make `count` Envs, then answer commands."""
  if parent_end is not None:   # Forked: the parent's objects came along.
    # Never collected here: a collection could run the finalizers of the
    # parent's garbage (TensorFlow's among them) in this process.
    gc.freeze()
    parent_end.close()
  signal.signal(signal.SIGINT, signal.SIG_IGN)
  signal.signal(signal.SIGTERM, signal.SIG_DFL)  # Not the parent's handler.
  try:
    import gymnasium  # pylint: disable=g-import-not-at-top
    envs = []
    for _ in range(count):
      env = factory()
      if (not isinstance(env, gymnasium.Env) or
          isinstance(env, gymnasium.vector.VectorEnv)):
        connection.send(("error", TypeError(NOT_AN_ENV_ERROR.format(
            got=f"{type(env).__name__}: {env!r}"))))
        return
      envs.append(env)
    batch = gym_batch.GymBatch(envs, offset)
    connection.send(("ok", batch.spaces()))
  except Exception:  # pylint: disable=broad-except
    connection.send(("error", traceback.format_exc()))
    return
  while True:
    while not connection.poll(1.0):
      if os.getppid() != parent:
        return   # Orphaned: the parent died without closing the pipe.
    try:
      command, argument = connection.recv()
    except EOFError:
      return
    if command == "close":
      batch.close()
      connection.send(("ok", None))
      return
    try:
      connection.send(("ok", getattr(batch, command)(argument)))
    except Exception:  # pylint: disable=broad-except
      connection.send(("error", traceback.format_exc()))


def _stop(owner: int, processes: list[Any], connections: list[Any]) -> None:
  """Asks each worker to leave, waits, then terminates what stays (only in
  the process `owner` that started them)."""
  if os.getpid() != owner:
    return
  for connection in connections:
    try:
      connection.send(("close", None))
    except (OSError, ValueError):
      pass   # Already gone.
  for process, connection in zip(processes, connections):
    try:
      if connection.poll(CLOSE_TIMEOUT_S):
        connection.recv()
    except (OSError, EOFError, ValueError):
      pass
    process.join(CLOSE_TIMEOUT_S)
    if process.is_alive():
      process.terminate()
      process.join(CLOSE_TIMEOUT_S)
    connection.close()


class GymWorkers:
  """`num_envs` gymnasium Envs stepped by `workers` processes.

  The same interface as `gym_batch.GymBatch` (`spaces`, `reset`, `step`,
  `close`), for the whole batch.

  Args:
    factory: Makes one gymnasium Env (called in the workers).
    num_envs: How many Envs.
    workers: How many processes (at most `num_envs`).
    name: For errors, until the workers have said their Envs' name.
  """

  def __init__(self, factory: Callable[[], Any], num_envs: int,
               workers: int, name: str = "?"):
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context(
        "fork" if "fork" in methods else None)
    self.shares = shares(num_envs, workers)
    self.num_envs = num_envs
    self.processes, self._connections = [], []
    self._name = name
    self._finalizer = weakref.finalize(self, _stop, os.getpid(),
                                       self.processes, self._connections)
    for share in self.shares:
      mine, theirs = context.Pipe()
      forked = context.get_start_method() == "fork"
      process = context.Process(
          target=_serve, daemon=True, name=f"gym_worker_{share.start}",
          args=(theirs, mine if forked else None, factory, len(share),
                share.start, os.getpid()))
      process.start()
      theirs.close()
      self.processes.append(process)
      self._connections.append(mine)
    try:
      answers = self._gather("start", [None] * len(self.shares), send=False)
    except BaseException:
      self.close()
      raise
    self._spaces = answers[0]
    self._name = self._spaces[2]

  def spaces(self) -> tuple[Any, Any, str]:
    """The first Env's observation and action spaces and its name."""
    return self._spaces

  def _gather(self, command: str, arguments: list[Any],
              send: bool = True) -> list[Any]:
    """Sends `command` to every worker, then returns their answers."""
    if not self._finalizer.alive:
      raise RuntimeError(CLOSED_ERROR.format(name=self._name))
    sent = []
    for connection, argument in zip(self._connections, arguments):
      try:
        if send:
          connection.send((command, argument))
        sent.append(True)
      except OSError:   # A worker that is gone: its pipe is broken.
        sent.append(False)
    answers, failure = [], None
    for index, (process, connection, share) in enumerate(
        zip(self.processes, self._connections, self.shares)):
      where = dict(name=self._name, index=index, pid=process.pid,
                   first=share.start, last=share.stop - 1, command=command)
      try:
        if not sent[index]:
          raise EOFError
        status, answer = connection.recv()
      except (EOFError, OSError):
        process.join(1.0)
        status, answer = "gone", WORKER_GONE.format(code=process.exitcode,
                                                    **where)
      if status == "ok":
        answers.append(answer)
      elif failure is None:  # The first failure is raised.
        failure = answer if isinstance(answer, Exception) else RuntimeError(
            answer if status == "gone" else
            WORKER_FAILED.format(error=answer, **where))
    if failure is not None:
      # The workers' environments no longer step together: stop them all.
      self.close()
      raise failure
    return answers

  def reset(self, seed: int | None) -> np.ndarray:
    return np.concatenate(self._gather("reset", [seed] * len(self.shares)))

  def step(self, action: np.ndarray) -> tuple[Any, ...]:
    answers = self._gather("step", [action[share.start:share.stop]
                                    for share in self.shares])
    final = {share.start + j: obs
             for share, answer in zip(self.shares, answers)
             for j, obs in answer[4].items()}
    return (*(np.concatenate([answer[k] for answer in answers])
              for k in range(4)), final)

  def close(self) -> None:
    """Stops the workers (again: nothing)."""
    self._finalizer()
