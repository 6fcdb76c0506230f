"""What a scenario needs to know about a cluster of workers.

Under `tf.distribute.MultiWorkerMirroredStrategy` every worker runs the same
loop in step with the others. Two things need all of them:

- **Stopping together** (`agreement`): a preemption notice reaches one
  worker; an all-reduce of every worker's "stop?" at each call boundary
  makes all of them stop, save and exit at the same step.
- **A lost worker** (`names_a_lost_worker`): when a worker dies, the others'
  next collective fails within seconds with a gRPC error; it is raised again
  as a `WorkerLostError` that names the lost task and says how to restart.

Why not `tf.distribute.experimental.PreemptionCheckpointHandler`: it owns the
checkpoint (its own `CheckpointManager` and save counter) and wraps each
training call, while a scenario's checkpoint is the engine's (the folder
lock, unreadable-checkpoint recovery, the history, exact resume of the data
position); one all-reduced flag per call gives the same guarantee inside the
engine's loop.
"""

import contextlib
import re
from typing import Callable, Iterator

import tensorflow as tf

LOST_WORKER_ERROR = (
    "{owner}: lost {task} of the cluster ({error}).{leader} Every worker "
    "stops: restart all of them with the same command and the run resumes "
    "from its last checkpoint.")

# Added when the coordination service is what went missing: its host (the
# chief) may have stopped because another worker was lost first.
LOST_LEADER_NOTE = (
    " The chief hosts the cluster's coordination service and stops too when "
    "any other worker is lost, so the chief's own error names the first "
    "loss.")

# What the survivors' next collective raises when a peer is gone.
_LOST = (tf.errors.UnavailableError, tf.errors.AbortedError,
         tf.errors.CancelledError, tf.errors.DeadlineExceededError)
_TASK = re.compile(r"/job:(\w+)/replica:\d+/task:(\d+)")


class WorkerLostError(RuntimeError):
  """Another worker of the cluster stopped answering."""


def num_workers(strategy: tf.distribute.Strategy) -> int:
  """How many worker processes train together (1 outside a cluster)."""
  resolver = getattr(strategy, "cluster_resolver", None)
  if resolver is None:
    return 1
  spec = resolver.cluster_spec().as_dict()
  return sum(len(spec.get(job, ())) for job in ("chief", "worker")) or 1


def agreement(strategy: tf.distribute.Strategy
              ) -> Callable[[bool], bool] | None:
  """A function: True on every worker if any worker passes True.

  None for a single process. Each call is an all-reduce, so every worker
  must make the same calls.
  """
  if num_workers(strategy) < 2:
    return None

  @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
  def count(vote):
    votes = strategy.run(tf.identity, args=(vote,))
    return strategy.reduce(tf.distribute.ReduceOp.SUM, votes, axis=None)

  def agree(stop: bool) -> bool:
    return float(count(tf.constant(1.0 if stop else 0.0))) > 0

  return agree


def _this_task(strategy: tf.distribute.Strategy) -> tuple[str, int] | None:
  resolver = getattr(strategy, "cluster_resolver", None)
  if resolver is None or resolver.task_type is None:
    return None
  return resolver.task_type, int(resolver.task_id)


def lost_task(error: Exception, strategy: tf.distribute.Strategy) -> str:
  """`worker 1`: the task(s) the error says are gone.

  Either a peer's socket closed (the remote task named is the lost one), or
  the coordination service lists the tasks that "stopped sending
  heartbeats" (by then a survivor that gave up may be listed too).
  """
  text = str(error)
  _, listed, after = text.partition("unhealthy")
  mine = _this_task(strategy)
  lost = sorted({(job, int(task)) for job, task in _TASK.findall(
      after if listed else text)} - {mine})
  if not lost:
    return "a worker"
  return " and ".join(f"{job} {task}" for job, task in lost)


@contextlib.contextmanager
def names_a_lost_worker(owner: str, strategy: tf.distribute.Strategy
                        ) -> Iterator[None]:
  """In a cluster, raises a lost peer's gRPC error as a `WorkerLostError`."""
  if num_workers(strategy) < 2:
    yield
    return
  try:
    yield
  except _LOST as error:
    raise WorkerLostError(lost_message(owner, error, strategy)) from error


def lost_message(owner: str, error: Exception,
                 strategy: tf.distribute.Strategy) -> str:
  """The `WorkerLostError` message for a peer's gRPC `error`."""
  text = str(error)
  first = next((line for line in text.splitlines()
                if "aborted" in line.lower() or "unavailable" in
                line.lower()), type(error).__name__)
  return LOST_WORKER_ERROR.format(
      owner=owner, task=lost_task(error, strategy), error=first.strip()[:200],
      leader=LOST_LEADER_NOTE if "leader task" in text else "")
