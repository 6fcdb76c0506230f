"""Checkpoints that survive crashes, and who writes them in a cluster.

`Checkpointer` wraps `tf.train.Checkpoint` + `CheckpointManager` and keeps
the rule that a `save_dir` never loses a run:

- Before anything is written the folder is checked (a folder, or creatable,
  and writable) and locked (`run_dir.lock`: `flock` locally, a lease on cloud storage): one
  writer at a time.
- `restore` scans the checkpoint data files themselves, not only the small
  `checkpoint` index, and restores the newest checkpoint that reads. Newer
  ones that do not read are moved into `save_dir/unreadable-<time>/` (with a
  damaged index) and named in a message. If the folder holds checkpoint data
  and none of it reads, it stops with `NoReadableCheckpointError`.
- The checkpoint's object graph is compared with the objects being restored
  first: an added, removed or resized layer or another optimizer is a
  `CheckpointMismatchError` listing the paths, before any value changes.
- `restart=True` moves the run's files into `save_dir/restart-<time>/` and
  starts over; nothing is deleted.

A save writes the data files first and then rewrites the `checkpoint` index,
so a crash during a save leaves the index on the previous, complete
checkpoint. Under a multi-worker strategy every worker saves (saving can
involve collectives) but only the chief writes to `directory` and holds its
lock; the others write to a scratch folder that is deleted straight away.
"""

import collections.abc
import os
import re
import sys
from typing import Any, Callable

import tensorflow as tf

from sonnet_like.core import files
from sonnet_like.core.tf_private import checkpoint as tf_checkpoint
from sonnet_like.scenarios.run_folder import background_save
from sonnet_like.scenarios.run_folder import history as history_lib
from sonnet_like.scenarios.run_folder import run_dir
from sonnet_like.scenarios.run_folder import snapshot
from sonnet_like.scenarios.updates import kinds

CHECKPOINT_NAME = "ckpt"
INDEX_FILE = "checkpoint"
HISTORY_NAME = "run_history"
# Checkpoint entries a program may lack or add without harm: hook states
# (e.g. EarlyStopping's; a hook added later starts fresh), the history, the
# run's settings (`run_settings.py`) and tf.train.Checkpoint's own save
# counter (created at its first save).
OPTIONAL_PREFIXES = ("hook_", HISTORY_NAME, "run_settings", "save_counter")
# What `restart=True` moves aside: checkpoints, their index, history, logs
# and the best checkpoint (`keep_best`).
RUN_FILES = re.compile(
    r"^(ckpt-\d+.*|checkpoint|history\.json.*|logs|best)$")
_DATA_FILE = re.compile(r"^ckpt-(\d+)\.(index|data-\d+-of-\d+)$")
_OBJECT_GRAPH = "_CHECKPOINTABLE_OBJECT_GRAPH"
_MAX_LISTED = 20

START_OVER_HINT = (
    "To train from scratch in this folder instead, pass restart=True: the "
    "run's files are moved into {path}/restart-<time>/ (nothing is deleted) "
    "and training starts at step 0. Or pick another save_dir.")

NO_READABLE_ERROR = (
    "{owner}: save_dir {path} holds checkpoint data, but no checkpoint in "
    "it can be read, so the run cannot resume:\n{details}\nNothing was "
    "changed in the folder. If these files come from a copy, copy them "
    "again. " + START_OVER_HINT)

MISMATCH_ERROR = (
    "{owner}: checkpoint {checkpoint} does not match what is being trained "
    "(a layer added, removed or resized, or another optimizer?). "
    "Unmatched paths:\n{details}\nNothing was restored and the folder is "
    "unchanged. Resume with the model and optimizer that wrote it. "
    + START_OVER_HINT)

PASSED_OVER_MESSAGE = (
    "{owner}: restoring {checkpoint}, the newest checkpoint that reads; "
    "passed over {passed}. Moved to {moved}.")

INDEX_MESSAGE = (
    "{owner}: the checkpoint index {index} was {what}; rebuilt it from the "
    "checkpoint files{moved}.")

RESTART_MESSAGE = (
    "{owner}: restart=True: moved the previous run ({count} entries: "
    "{names}) to {moved}; training starts at step 0.")


class NoReadableCheckpointError(RuntimeError):
  """The folder holds checkpoint data and none of it can be read."""


class CheckpointMismatchError(ValueError):
  """The checkpoint's structure differs from the objects being restored."""


def is_chief(strategy: tf.distribute.Strategy | None = None) -> bool:
  """Whether this process is the chief (always True outside a cluster)."""
  strategy = strategy or tf.distribute.get_strategy()
  resolver = getattr(strategy, "cluster_resolver", None)
  if resolver is None or not resolver.cluster_spec().as_dict():
    return True
  task_type, task_id = resolver.task_type, resolver.task_id
  if task_type in ("chief", None):
    return True
  has_chief = "chief" in resolver.cluster_spec().as_dict()
  return task_type == "worker" and task_id == 0 and not has_chief


def _task_id(strategy: tf.distribute.Strategy) -> str:
  resolver = getattr(strategy, "cluster_resolver", None)
  if resolver is None:
    return "0"
  return f"{resolver.task_type}_{resolver.task_id}"


def _first_line(error: Exception) -> str:
  lines = [line for line in str(error).splitlines() if line.strip()]
  text = lines[0] if lines else type(error).__name__
  return text if len(text) <= 200 else text[:197] + "..."


def unreadable_reason(path: str) -> str | None:
  """Why the checkpoint at `path` (a prefix) cannot be read, or None."""
  if not files.exists(path + ".index"):
    return (f"its index file {os.path.basename(path)}.index is missing (a "
            "save cut short?)")
  try:
    reader = _reader(path)
    for name, dtype in reader.get_variable_to_dtype_map().items():
      if dtype != tf.variant:  # Iterator states; checked by the restore.
        reader.get_tensor(name)
  except Exception as error:  # The reader raises OpError, IndexError, ...  # pylint: disable=broad-except
    return _first_line(error)
  return None


def _reader(path: str):
  """A reader of the checkpoint at prefix `path`.

  Not `tf.train.load_checkpoint`, which takes a path that `gfile.isdir`
  accepts for a folder; on `ram://` a prefix is such a path (`ckpt-4` is a
  prefix of `ckpt-4.index`).
  """
  return tf.compat.v1.train.NewCheckpointReader(path)


def readable(path: str) -> bool:
  """Whether every variable of the checkpoint at `path` can be read."""
  return unreadable_reason(path) is None


def scan(directory: str) -> dict[int, list[str]]:
  """Checkpoint data files in `directory` by step: `{6: ["ckpt-6.index",..]}`.

  The files themselves, whatever the `checkpoint` index says.
  """
  found: dict[int, list[str]] = {}
  if not files.isdir(directory):
    return found
  for name in files.listdir(directory):
    match = _DATA_FILE.match(name)
    if match:
      found.setdefault(int(match.group(1)), []).append(name)
  return found


# ---- Structure: the checkpoint's object graph against the Python objects.


def _children(obj: Any) -> dict[str, Any]:
  return dict(tf.train.TrackableView(obj).children(obj))


def _holds_value(obj: Any) -> bool:
  if isinstance(obj, tf.Variable):
    return True
  return tf_checkpoint.serializes_tensors(type(obj))


def _python_holds_values(obj: Any) -> bool:
  return any(_holds_value(o) for o in
             [obj] + list(tf.train.TrackableView(obj).descendants()))


def _node_ids_below(graph, node_id: int) -> set[int]:
  stack, seen = [node_id], set()
  while stack:
    node_id = stack.pop()
    if node_id not in seen:
      seen.add(node_id)
      stack.extend(c.node_id for c in graph.nodes[node_id].children)
  return seen


def _node_holds_values(graph, node_id: int) -> bool:
  stack, seen = [node_id], set()
  while stack:
    node_id = stack.pop()
    if node_id in seen:
      continue
    seen.add(node_id)
    node = graph.nodes[node_id]
    if node.attributes:
      return True
    stack.extend(c.node_id for c in node.children)
  return False


def _not_built_yet(parent: Any, children: dict[str, Any], name: str) -> bool:
  """Whether a missing child is one that the program creates lazily.

  An attribute still None (a Sonnet optimizer's `step` before its first
  `apply`) or an empty list or dict (its slots `m`, `v`): the checkpoint's
  values wait there and are restored when they are created.
  """
  try:
    if getattr(parent, name, False) is None:
      return True
  except Exception:  # A property that fails: not lazily built.  # pylint: disable=broad-except
    pass
  return not children and isinstance(
      parent, (collections.abc.Sequence, collections.abc.Mapping))


def _optional(path: str) -> bool:
  return path.startswith(OPTIONAL_PREFIXES)


def _value_problem(obj: Any, node, shapes, dtypes) -> str | None:
  for attribute in node.attributes:
    key = attribute.checkpoint_key
    if attribute.name != "VARIABLE_VALUE" or key not in shapes:
      continue
    if not hasattr(obj, "shape") or not hasattr(obj, "dtype"):
      continue
    have = list(tf.TensorShape(obj.shape).as_list())
    dtype = tf.as_dtype(obj.dtype)
    if have != list(shapes[key]) or dtype != dtypes[key]:
      return (f"checkpoint {dtypes[key].name}{list(shapes[key])}, "
              f"program {dtype.name}{have}")
  return None


def structure_mismatches(checkpoint: tf.train.Checkpoint,
                         path: str) -> list[str]:
  """Paths where `checkpoint`'s objects and the checkpoint at `path` differ.

  Each entry is `"<path>: <what>"`: a value the checkpoint holds that no
  object takes, an object with a value the checkpoint lacks, or a variable
  whose shape or dtype differs. Lazily created state (see `_not_built_yet`)
  and optional entries (`OPTIONAL_PREFIXES`) are not counted. Nothing is
  restored.
  """
  reader = _reader(path)
  try:
    serialized = reader.get_tensor(_OBJECT_GRAPH)
  except Exception:  # A name-based (TF1) checkpoint: nothing to compare.  # pylint: disable=broad-except
    return []
  graph = tf_checkpoint.TrackableObjectGraph()
  graph.ParseFromString(serialized)
  shapes = reader.get_variable_to_shape_map()
  dtypes = reader.get_variable_to_dtype_map()
  problems: list[str] = []
  matched_nodes: set[int] = set()
  matched_objects: dict[int, Any] = {}
  only_in_checkpoint: list[tuple[int, str]] = []
  only_in_program: list[tuple[Any, str]] = []
  stack = [(0, checkpoint, "")]  # Depth first, in order: a variable shared
  while stack:                    # by a model and an optimizer is named by
                                  # the model's path.
    node_id, obj, where = stack.pop()
    if node_id in matched_nodes:
      continue
    matched_nodes.add(node_id)
    matched_objects[id(obj)] = obj
    node = graph.nodes[node_id]
    if node.attributes and not _holds_value(obj):
      problems.append(f"{where}: the checkpoint holds a value, the program "
                      f"a {type(obj).__name__} without one")
    elif not node.attributes and _holds_value(obj):
      problems.append(f"{where}: the program's {type(obj).__name__} has no "
                      "value in the checkpoint")
    else:
      problem = _value_problem(obj, node, shapes, dtypes)
      if problem:
        problems.append(f"{where}: {problem}")
    children = _children(obj)
    in_checkpoint = {c.local_name: c.node_id for c in node.children}
    order = list(in_checkpoint.items())
    if node_id == 0:  # Models before optimizers, which refer to their weights.
      order.sort(key=lambda item: kinds.is_optimizer(children.get(item[0])))
    for name, child_id in order:
      child_path = f"{where}/{name}" if where else name
      if name not in children and not (_not_built_yet(obj, children, name)
                                       or _optional(child_path)):
        only_in_checkpoint.append((child_id, child_path))
    stack.extend((child_id, children[name], f"{where}/{name}" if where
                  else name)
                 for name, child_id in reversed(order) if name in children)
    for name, child in children.items():
      child_path = f"{where}/{name}" if where else name
      if name not in in_checkpoint and not _optional(child_path):
        only_in_program.append((child, child_path))
  # Each unmatched subtree once, by its first path in the walk.
  reported: set[int] = set()
  for node_id, where in only_in_checkpoint:
    if (node_id not in matched_nodes and node_id not in reported and
        _node_holds_values(graph, node_id)):
      problems.append(f"{where}: in the checkpoint, not in the program")
      reported |= _node_ids_below(graph, node_id)
  reported_objects: set[int] = set()
  for obj, where in only_in_program:
    if (id(obj) not in matched_objects and id(obj) not in reported_objects
        and _python_holds_values(obj)):
      problems.append(f"{where}: in the program, not in the checkpoint")
      reported_objects |= {id(o) for o in
                           tf.train.TrackableView(obj).descendants()}
      reported_objects.add(id(obj))
  return sorted(problems)


def _listed(lines: list[str]) -> str:
  shown = [f"  {line}" for line in lines[:_MAX_LISTED]]
  if len(lines) > _MAX_LISTED:
    shown.append(f"  ... and {len(lines) - _MAX_LISTED} more")
  return "\n".join(shown)


class Checkpointer:
  """Saves and restores a set of named trackables under one directory.

  The chief checks the folder and takes its lock when constructed; call
  `close()` (or use it as a context manager) to release the lock.

  Args:
    directory: The run's folder (`save_dir`).
    trackables: What the checkpoint holds, by name.
    max_to_keep: Checkpoints kept on disk (older ones are rotated away).
    strategy: The run's strategy; decides who is the chief.
    owner: Who checkpoints (a scenario's class name), for messages.
    restart: Move the run's files into `directory/restart-<time>/` and
      start over instead of resuming.
    history: A `History` to keep inside every checkpoint and to load on
      restore.
    say: Where messages go (default: the chief's stderr).
    async_save: A save takes a snapshot of the state in memory and
      returns; the chief's thread writes it into `directory` while
      training goes on (`background_save.BackgroundWriter`), the other
      workers of a cluster write nothing. `wait()` and `close()` wait for
      the write.
  """

  def __init__(self, directory: str, trackables: dict[str, Any],
               max_to_keep: int = 3,
               strategy: tf.distribute.Strategy | None = None, *,
               owner: str = "Checkpointer", restart: bool = False,
               history: history_lib.History | None = None,
               say: Callable[[str], None] | None = None,
               async_save: bool = False):
    self.directory, self.owner, self.restart = directory, owner, restart
    self.max_to_keep = max_to_keep
    self.chief = is_chief(strategy)
    self.async_save = async_save
    self._writer: background_save.BackgroundWriter | None = None
    self._taken: str | None = None  # Another worker's last async save.
    self._strategy = strategy or tf.distribute.get_strategy()
    self._say = say or self._print
    self.history = history
    named = dict(trackables)
    self._history_state = None
    if history is not None:
      self._history_state = history_lib.HistoryState(history)
      named[HISTORY_NAME] = self._history_state
    self.checkpoint = tf.train.Checkpoint(**named)
    self._write_dir = directory if self.chief else files.join(
        directory, ".scratch", _task_id(self._strategy))
    self._manager: tf.train.CheckpointManager | None = None
    self._lock = None
    if self.chief:
      run_dir.check_folder(owner, directory)
      self._lock = run_dir.lock(owner, directory, say=self._say)
      self._lock.acquire()
      try:
        if restart:
          self._start_over()
      except BaseException:
        self.close()
        raise

  def _print(self, message: str) -> None:
    if self.chief:
      print(message, file=sys.stderr, flush=True)

  @property
  def manager(self) -> tf.train.CheckpointManager:
    if self._manager is None:
      self._manager = tf.train.CheckpointManager(
          self.checkpoint, self._write_dir, max_to_keep=self.max_to_keep,
          checkpoint_name=CHECKPOINT_NAME)
    return self._manager

  def _start_over(self) -> None:
    names = [n for n in files.listdir(self.directory) if RUN_FILES.match(n)]
    if not names:
      return
    moved = run_dir.move_aside(self.directory, names, "restart")
    self._say(RESTART_MESSAGE.format(owner=self.owner, count=len(names),
                                     names=", ".join(names[:6]) +
                                     (", ..." if len(names) > 6 else ""),
                                     moved=moved))

  def restore(self) -> str | None:
    """Restores the newest readable checkpoint; returns its path or None.

    None means a fresh start: the folder holds no checkpoint data (or
    `restart=True`).

    Raises:
      NoReadableCheckpointError: checkpoint data is there but none reads.
      CheckpointMismatchError: the newest readable checkpoint does not match
        the trackables (nothing is restored then).
      history.HistoryFileError: `history.json` is damaged and the checkpoint
        holds no copy of the history.
    """
    if self.restart and not self.chief:
      return None  # The chief moves the old run aside.
    steps = scan(self.directory)
    index = files.join(self.directory, INDEX_FILE)
    if not steps and not files.exists(index):
      return None
    passed: list[tuple[int, str]] = []
    chosen = None
    for step in sorted(steps, reverse=True):
      reason = unreadable_reason(self._prefix(step))
      if reason is None:
        chosen = step
        break
      passed.append((step, reason))
    if chosen is None:
      details = [f"ckpt-{s}: {reason}" for s, reason in passed] or [
          f"{INDEX_FILE}: an index with no checkpoint data files beside it"]
      raise NoReadableCheckpointError(NO_READABLE_ERROR.format(
          owner=self.owner, path=self.directory, details=_listed(details)))
    path = self._prefix(chosen)
    problems = structure_mismatches(self.checkpoint, path)
    if problems:
      raise CheckpointMismatchError(MISMATCH_ERROR.format(
          owner=self.owner, checkpoint=path, path=self.directory,
          details=_listed(problems)))
    if self.chief:
      self._tidy(chosen, passed, steps)
    self.checkpoint.restore(path).expect_partial()
    if self.history is not None:
      note = self.history.resume(
          self.directory, chosen, self.owner, self._history_state.restored,
          may_move=self.chief)
      if note:
        self._say(note)
    return path

  def _prefix(self, step: int) -> str:
    return files.join(self.directory, f"{CHECKPOINT_NAME}-{step}")

  def _tidy(self, chosen: int, passed: list[tuple[int, str]],
            steps: dict[int, list[str]]) -> None:
    """Moves newer unreadable checkpoints aside and repairs the index."""
    index = files.join(self.directory, INDEX_FILE)
    state = tf.train.get_checkpoint_state(self.directory)
    damaged_index = files.exists(index) and state is None
    moving = [name for step, _ in passed for name in steps[step]]
    if damaged_index:
      moving.append(INDEX_FILE)
    moved = (run_dir.move_aside(self.directory, moving, "unreadable")
             if moving else None)
    if passed:
      self._say(PASSED_OVER_MESSAGE.format(
          owner=self.owner, checkpoint=f"ckpt-{chosen}",
          passed="; ".join(f"ckpt-{s} ({reason})" for s, reason in passed),
          moved=moved))
    names = [f"{CHECKPOINT_NAME}-{s}" for s in sorted(steps) if s <= chosen]
    if state is not None:
      listed = [os.path.basename(p) for p in state.all_model_checkpoint_paths]
      kept = [n for n in listed if n in names]
      if (kept == listed and os.path.basename(
          state.model_checkpoint_path) == f"{CHECKPOINT_NAME}-{chosen}"):
        return  # The index is right.
      names = sorted(set(kept) | {f"{CHECKPOINT_NAME}-{chosen}"},
                     key=lambda n: int(n.rsplit("-", 1)[1]))
    else:
      names = names[-self.max_to_keep:]
    times = [files.mtime(files.join(self.directory, f"{n}.index"))
             for n in names]
    background_save.write_index(self.directory, names, times)
    if damaged_index or state is None:
      what = "damaged" if damaged_index else "missing"
    else:
      what = (f"naming {os.path.basename(state.model_checkpoint_path)} "
              f"where ckpt-{chosen} is the newest checkpoint that reads, or "
              "listing checkpoints that are gone")
    self._say(INDEX_MESSAGE.format(
        owner=self.owner, index=index, what=what,
        moved=f" (the damaged one is in {moved})" if damaged_index else ""))

  def save(self, step: int, after: dict[str, str] | None = None) -> str:
    """Saves as `ckpt-<step>` and returns the chief's path.

    Args:
      step: The step saved (names the checkpoint).
      after: Files (name: text) the chief writes atomically into the
        folder once the checkpoint is in (`history.json`).

    Raises:
      RuntimeError: the previous background write failed (with
        `async_save`: a `BackgroundSaveError` naming that step).
    """
    if self.async_save and not self.chief:
      # Reading the state may take part in collectives; nothing is written.
      snapshot.take(self.checkpoint)
      self._taken = files.join(self.directory, f"{CHECKPOINT_NAME}-{step}")
      return self._taken
    if self.async_save:
      if self._writer is None:  # After restore, which may mend the index.
        self._writer = background_save.BackgroundWriter(
            self.checkpoint, self.directory, self.max_to_keep, self.owner)
      return self._writer.save(step, after)
    path = self.manager.save(checkpoint_number=step)
    if not self.chief:
      files.rmtree(self._write_dir)
      return files.join(self.directory, os.path.basename(path))
    for name, text in (after or {}).items():
      files.write_atomic(files.join(self.directory, name), text)
    return path

  @property
  def latest(self) -> str | None:
    """The newest checkpoint saved (its copy may still be under way)."""
    if self._writer is not None:
      return self._writer.latest
    if self._taken is not None:
      return self._taken
    return self.manager.latest_checkpoint

  def wait(self) -> None:
    """Returns once every save is in the folder (at once if none is async)."""
    if self._writer is not None:
      self._writer.wait()

  def close(self) -> None:
    """Waits for a save being copied, then releases the folder's lock.

    Safe to call more than once.
    """
    try:
      self.wait()
    finally:
      if self._lock is not None:
        self._lock.release()

  def __enter__(self) -> "Checkpointer":
    return self

  def __exit__(self, *exc_info) -> None:
    self.close()
