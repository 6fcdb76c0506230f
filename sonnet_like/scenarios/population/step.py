"""One compiled step for every member of a population.

The scenario's own step (its `train_step` with the guard, as a solo run
traces it) runs for every member at once (`vectorize.py`, TensorFlow's
`tf.vectorized_map` conversion without a scalar copy): the templates
hold the member's slices of the stacked values, its settings are set, and
what the step leaves in the templates comes back stacked (a replay
buffer's storage is read and written by rows instead: `rows.py`). Updates
are applied unguarded inside (the updaters know: `updates.MemberUpdates`); a
member whose step was not finite keeps its old values here and stops for
good while the others go on. With `on_nonfinite="skip"` a failed update
is dropped alone inside the step and the rest of the step is kept, as in
a solo run.
"""

import contextlib
from typing import Any, Callable, Iterator

import tensorflow as tf

from sonnet_like.core import autograph
from sonnet_like.core.tf_private import graphs
from sonnet_like.scenarios.compiled import carried as carried_lib
from sonnet_like.scenarios.population import control_flow
from sonnet_like.scenarios.population import lockstep
from sonnet_like.scenarios.population import members as members_lib
from sonnet_like.scenarios.population import replicas as replicas_lib
from sonnet_like.scenarios.population import rows
from sonnet_like.scenarios.population import vectorize
from sonnet_like.scenarios.updates import kinds

MEMBER_LOGS = "members"  # The key of the per-member logs in a call's logs.


SETTING_ERROR = (
    "{owner}: a member's step failed with the population's swept settings "
    "{names} (inside the step each is a tensor, one value per member): "
    "{error} A setting the step uses as a Python number (a loop count, a "
    "shape, an `if`) cannot differ per member: sweep it with one "
    "population per value.")


UNREAD_ERROR = (
    "{owner}: the population sweeps {names}, but {owner}'s step never reads "
    "{names} (a setting used outside the step, by the data, the "
    "environments or build(), cannot differ per member; nor can one the "
    "step does not use): sweep learning_rate or a setting the step reads "
    "(the guide 'Many seeds at once' lists them), or train one population "
    "per value.")


BRANCH_ERROR = (
    "{owner}: a population could not vectorise a member's step: a tf.cond "
    "or tf.while_loop in it (AutoGraph makes one of a tensor `if` or loop in "
    "train_step) changes the member's variables. In a population, scale "
    "the update by a 0/1 mask instead (the guide 'Many seeds at once').")


def _setting_values(values: tuple[Any, ...]) -> tf.Tensor:
  numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool)
                for v in values)
  if numbers and all(isinstance(v, int) for v in values):
    return tf.constant(values, tf.int64)  # As the step counters.
  if numbers:
    return tf.constant(values, tf.float32)
  return tf.constant(values)


@contextlib.contextmanager
def _settings_applied(scenario: Any, settings: dict[str, tf.Tensor]
                      ) -> Iterator[None]:
  """One member's settings: "learning_rate" on every optimizer the
  scenario trains, any other name on the scenario itself."""
  optimizers = ([o for o in scenario.trackables().values()
                 if kinds.is_optimizer(o)] if "learning_rate" in settings
                else [])
  given = [(name, tf.cast(value, tf.float32) if value.dtype.is_floating
            else value) for name, value in settings.items()]
  with members_lib.attributes_set(
      (owner, name, value) for name, value in given
      for owner in (optimizers if name == "learning_rate" else [scenario])):
    yield
  unread = sorted({name for name, _ in given} -
                  {name for name, value in given if value.consumers()})
  if unread:  # Read outside the step (data, environments, build) or not.
    raise ValueError(UNREAD_ERROR.format(owner=type(scenario).__name__,
                                         names=unread))


def check_settings(scenario: Any, members: members_lib.Members) -> None:
  """Refuses a setting that neither an optimizer nor the scenario has."""
  owner = type(scenario).__name__
  for name in members.population.settings:
    if name == "learning_rate":
      if not any(kinds.is_optimizer(o)
                 for o in scenario.trackables().values()):
        raise ValueError(f"{owner}: the population sweeps learning_rate, "
                         "but the scenario trains no optimizer.")
    elif not hasattr(scenario, name):
      raise ValueError(
          f"{owner}: the population sweeps {name!r}, which {owner} does not "
          "have; sweep learning_rate or an attribute of the scenario its "
          "step reads.")


@contextlib.contextmanager
def _batches(scenario: Any, batches: tuple[Any, ...],
             share: Callable[[Any], Any] | None = None) -> Iterator[None]:
  """Inside the block `scenario.next_batch()` gives `batches` one after
  the other (read outside the map: an iterator cannot be read per
  member), and `scenario.split_for_replicas` is `share` if given."""
  owner = type(scenario).__name__
  left = list(batches)

  def next_batch():
    if not left:
      raise ValueError(f"{owner}: in a population, next_inputs() must read "
                       f"as many batches every step ({len(batches)}, as "
                       "when the step was compiled).")
    return left.pop(0)

  scenario.next_batch = next_batch  # An instance attribute, removed after.
  if share is not None:
    scenario.split_for_replicas = share
  try:
    yield
  finally:
    del scenario.next_batch
    if share is not None:
      del scenario.split_for_replicas


def batches_read(members: members_lib.Members, scenario: Any,
                 next_inputs: Callable[[], Any]) -> int:
  """How many batches the scenario's `next_inputs` reads a step: it is
  traced once aside, on zeros, the templates left as they were."""
  if scenario.fed_data is None:
    return 0
  spec = scenario.element_spec
  count = []

  def zeros():
    count.append(True)
    return tf.nest.map_structure(
        lambda s: tf.zeros([d or 1 for d in s.shape], s.dtype), spec)

  several = scenario.strategy.num_replicas_in_sync > 1

  def trace():
    held = [t.tensor_value for t in members.templates]
    with members.holding(held), (replicas_lib.one_device() if several
                                 else contextlib.nullcontext()):
      scenario.next_batch = zeros
      try:
        next_inputs()
      finally:
        del scenario.next_batch
    return tf.constant(0)

  tf.function(trace, autograph=False).get_concrete_function()
  return len(count)


def _as_inputs(inputs: Any) -> tuple[Any, ...]:
  if inputs is None:
    return ()
  return tuple(inputs) if isinstance(inputs, tuple) else (inputs,)


def vectorized(members: members_lib.Members, scenario: Any,
               guarded_step: Callable[..., tuple[dict, tf.Tensor]],
               skip: bool, next_inputs: Callable[[], Any] | None = None
               ) -> Callable[..., tuple[dict, tf.Tensor]]:
  """The replica step of a population: `guarded_step` for every member.

  With the scenario's own `next_inputs`, each member calls it (its noise
  from its own generator), `next_batch()` giving the member's shares of
  the batches the call read (`inputs`: `batches_read` of them).

  On several replicas each replica runs every member on its share of the
  member's batch (`inputs` come as `replicas.ReplicaBatches` gives them;
  with `next_inputs`, `split_for_replicas` cuts the share), the member's
  gradients and losses summed over the replicas (`replicas.py`).

  Returns `replica_step(*inputs)` with `inputs` stacked on the member axis;
  it returns the logs (the means over the members still training, and
  the per-member values under `MEMBER_LOGS`) and whether the step counts
  (raise: some member still trains; skip: every member was finite).
  """
  population = members.population
  settings = {name: _setting_values(values)
              for name, values in population.settings.items()}
  by_rows = [i for i, t in enumerate(members.templates) if rows.is_by_rows(t)]
  carried = [i for i, t in enumerate(members.templates)
             if not rows.is_by_rows(t)]
  owner = type(scenario).__name__
  replicas = scenario.strategy.num_replicas_in_sync
  share = None  # This replica's `split_for_replicas` (`replica_step`).
  accumulator = scenario.traced_step.accumulator

  # Both run as written: they branch on Python values only, and the
  # scenario's step in them rewrites the user's code (`guarded_step`).
  @autograph.as_written
  def member_step(args):
    inputs, member, values, member_settings = args
    # Loops and branches of the step carry the member's values and
    # verdicts (`control_flow`); variables by rows are read and written
    # by rows (`rows`).
    held = [t.tensor_value for t in members.templates]
    for i, value in zip(carried, values):
      held[i] = value
    with members.holding(held), _settings_applied(
        scenario, member_settings), carried_lib.carried_by(
            control_flow.CARRIER), control_flow.carrying(
            [members.templates[i] for i in carried],
            scenario.traced_step.shared.verdicts), rows.kept(
                [members.templates[i] for i in by_rows],
                [members.stacked[i] for i in by_rows], member) as written, (
                    replicas_lib.member_step(owner, member, replicas)
                    if replicas > 1 else contextlib.nullcontext()):
      if next_inputs is not None:
        with _batches(scenario, inputs, share):
          inputs = _as_inputs(next_inputs())
      try:
        logs, finite = guarded_step(*inputs)
      except (TypeError, ValueError) as error:
        if not member_settings:
          raise
        raise type(error)(SETTING_ERROR.format(
            owner=type(scenario).__name__, names=sorted(member_settings),
            error=str(error).strip())) from error
      if replicas > 1:  # The count of replicas that were not finite.
        finite = tf.equal(finite, 0.0)
      if accumulator is not None:
        _apply_accumulated(accumulator, scenario.traced_step.step)
      new_values = [members.templates[i].tensor_value for i in carried]
      written = [list(w) for w in written]
    # Loops all members run alike vectorise as one loop (XLA compiles it).
    lockstep.mark_graph(tf.compat.v1.get_default_graph(), owner,
                        members.gym_envs)
    return dict(logs), finite, new_values, written

  @autograph.as_written
  def replica_step(*inputs):
    nonlocal share
    if replicas > 1 and next_inputs is not None:  # Each replica has all.
      inputs = tf.nest.map_structure(lambda t: t[0], inputs)
      replica = tf.distribute.get_replica_context().replica_id_in_sync_group
      share = replicas_lib.replica_share(replica, replicas)
    elif replicas > 1:
      inputs = tf.nest.map_structure(replicas_lib.swap_leading, inputs)
    old = [members.stacked[i].read_value() for i in carried]
    elems = (inputs, tf.range(population.size), old, settings)
    try:
      if replicas > 1:  # Its all-reduces cannot be traced in a function.
        logs, finite, new, written = tf.vectorized_map(member_step, elems)
      else:
        logs, finite, new, written = vectorize.vectorized_map(
            member_step, elems, population.size)
    except (UnboundLocalError, graphs.InaccessibleTensorError) as error:
      # TensorFlow's vectoriser, or tracing the member's step, on a cond
      # whose branches changed what the member holds.
      raise ValueError(BRANCH_ERROR.format(
          owner=type(scenario).__name__)) from error
    if replicas > 1:  # Every replica keeps what the others keep.
      bad = tf.distribute.get_replica_context().all_reduce(
          tf.distribute.ReduceOp.SUM, 1.0 - tf.cast(finite, tf.float32))
      finite = tf.equal(bad, 0.0)
    alive = members.alive.read_value()
    ok = tf.logical_and(finite, alive)
    # "skip": a failed update was dropped alone in the step (`MemberUpdates.cond`),
    # the rest of the step stays, as in a solo run.
    kept = alive if skip else ok
    stacked = [members.stacked[i] for i in carried]
    if replicas > 1:  # A mirrored variable is written outside a branch.
      for variable, value in zip(stacked, _kept(kept, new, old)):
        variable.assign(value)
    else:
      for variable, value in zip(stacked, new):
        variable.assign(value)
      _restore_failed(kept, stacked, old)
    for i, rows_written in zip(by_rows, written):
      rows.write(members.stacked[i], rows_written, kept)
    if not skip:  # A member that failed stops; the others go on.
      alive = members.alive.assign(ok)
    count = tf.reduce_sum(tf.cast(alive, tf.float32))
    means = {name: tf.reduce_sum(tf.where(alive, tf.cast(value, tf.float32),
                                          0.0)) / count
             for name, value in logs.items()}
    means[MEMBER_LOGS] = dict(logs, finite=finite)
    counts = tf.reduce_all(finite) if skip else tf.reduce_any(alive)
    if replicas > 1:  # Summed over the replicas by the compiled call.
      means[MEMBER_LOGS]["finite"] = tf.cast(finite, tf.float32)
      return means, 1.0 - tf.cast(counts, tf.float32)
    return means, counts

  return replica_step


def _apply_accumulated(accumulator: Any, step: tf.Variable) -> None:
  """In a member's step: at the end of an accumulation its summed
  gradients are applied and zeroed (a solo run does it after the step, on
  real variables; here they are the member's)."""
  step = step.read_value()

  def apply():
    accumulator.apply(step)
    return tf.constant(True)

  control_flow.cond(accumulator.is_last(step), apply,
                    lambda: tf.constant(False))


def _restore_failed(ok: tf.Tensor, variables: list[tf.Variable],
                    old: list[tf.Tensor]) -> None:
  """Gives back `old` to the members that are not `ok` in `variables`
  (which hold the step's new values). When every member is ok (almost
  always) nothing runs: the branch that selects over every variable is
  called only when taken (`graphs.cond_called`), so a step neither selects
  (ten DQN members' 256-256 networks and Adam slots: ~2 ms a step on two
  cores, without XLA) nor passes over a switch for each value."""
  if not variables:
    return

  def restore():
    for variable, before in zip(variables, old):
      variable.assign(tf.where(_per_member(ok, before),
                               variable.read_value(), before))
    return tf.constant(True)

  graphs.cond_called(tf.reduce_all(ok), lambda: tf.constant(False), restore)


def _kept(ok: tf.Tensor, new: list[tf.Tensor], old: list[tf.Tensor]
          ) -> list[tf.Tensor]:
  """Each member's `new` values where `ok`, else its `old` ones (the
  write-back on several replicas, where `_restore_failed` cannot assign a
  mirrored variable inside a branch). When every member is ok (almost
  always) the values pass as they are: no select over every variable at
  every step."""
  if not new:
    return []

  def selected():
    return [tf.where(_per_member(ok, n), n, o) for n, o in zip(new, old)]

  return tf.cond(tf.reduce_all(ok), lambda: list(new), selected)


def _per_member(ok: tf.Tensor, like: tf.Tensor) -> tf.Tensor:
  """`ok` (one flag a member) shaped to select rows of `like`."""
  return tf.reshape(ok, [-1] + [1] * (like.shape.rank - 1))
