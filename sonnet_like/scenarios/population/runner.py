"""`PopulationRunner`: the runner (`compiled/runner.py`) of a population.

The one place where the engine and the compiled step meet the members:
it builds every member and the templates (`members.py`), holds their
stacked state for the checkpoint, vectorises the step over the members
(`step.py`) with their update policy (`updates.py`), reads each member's
batches (`replicas.py` on several replicas), splits their logs, evaluates
each as its solo run, and after a run leaves `NoSingleMember`s where the
scenario's attributes held what it trained (`single.py`).
"""

import contextlib
from typing import Any

import tensorflow as tf

from sonnet_like.core import checks
from sonnet_like.scenarios.compiled import runner
from sonnet_like.scenarios.population import best_rows
from sonnet_like.scenarios.population import members as members_lib
from sonnet_like.scenarios.population import replicas
from sonnet_like.scenarios.population import single
from sonnet_like.scenarios.population import step
from sonnet_like.scenarios.population import updates
from sonnet_like.scenarios.reporting import logs as logs_lib

REFUSED_ERROR = (
    "{owner}: population= does not work with {found} yet; drop {them} or "
    "train the members one at a time.")


def check(owner: str, loop: Any, guard: Any) -> None:
  """Refuses what a population does not do yet, naming the setting."""
  strategy = loop.strategy
  refused = {
      'nonfinite_check="call" (each member is checked per step)': (
          guard.nonfinite_check == "call"),
      f"{type(strategy).__name__} (of the multi-replica strategies, "
      "MirroredStrategy only)": (
          strategy is not None and strategy.num_replicas_in_sync > 1 and
          not isinstance(strategy, tf.distribute.MirroredStrategy)),
  }
  found = [name for name, given in refused.items() if given]
  if found:
    raise ValueError(REFUSED_ERROR.format(
        owner=owner, found=", ".join(found),
        them="it" if len(found) == 1 else "them"))


class PopulationRunner(runner.Runner):
  """Runs `scenario.population`'s members in one compiled step."""

  checks_per_call = False  # Each member's step is checked.

  def __init__(self, scenario: Any):
    super().__init__(scenario)
    self.population = scenario.population
    self.members: members_lib.Members | None = None
    # Each member's build, then the templates'.
    self.builds_per_run = self.population.size + 1
    self.data_seeds = list(self.population.seeds)
    self.updates = updates.MemberUpdates(scenario.on_nonfinite == "skip")

  @property
  def storage(self) -> members_lib.Members | None:
    return self.members

  def before_run(self) -> None:
    single.release(self.scenario)  # A run before left NoSingleMembers.
    self.members = None

  def build(self, cleanup: contextlib.ExitStack) -> None:
    scenario = self.scenario
    self.members = members_lib.Members.build(scenario, self.population)
    cleanup.enter_context(self.members.templates_in(scenario))
    step.check_settings(scenario, self.members)

  def named_state(self) -> dict[str, Any]:
    return {"population": self.members}

  def engine_state(self, owned: dict[str, Any]) -> dict[str, Any]:
    # Each member's generator, loss scale and sums are in `members`.
    return {name: value for name, value in owned.items()
            if name not in ("rng", "loss_scale", "gradient_sums")}

  def read(self, owner: Any, name: str) -> Any:
    return self.members.stacked_in(owner, name).numpy()

  def batches(self, iterator: Any, own_inputs: bool) -> Any:
    count = self.scenario.strategy.num_replicas_in_sync
    if count > 1 and iterator is not None:
      # Each replica gets a share of every member's batch.
      return replicas.ReplicaBatches(iterator, count, whole=own_inputs)
    return iterator

  def traced(self, guarded_step, skip, next_inputs):
    batches = 1
    if next_inputs is not None:  # Each member makes its own inputs.
      batches = step.batches_read(self.members, self.scenario, next_inputs)
    return (step.vectorized(self.members, self.scenario, guarded_step, skip,
                            next_inputs), None, batches)

  def call_error(self, error: tf.errors.OpError) -> Exception:
    if not self.population.settings:
      return error
    return ValueError(step.SETTING_ERROR.format(
        owner=type(self.scenario).__name__,
        names=sorted(self.population.settings),
        error=checks.error_text(error).splitlines()[0]))

  def split_logs(self, logs):
    return logs, logs.pop(step.MEMBER_LOGS, None)

  def evaluate(self) -> logs_lib.MemberMetrics | None:
    """Every member's `evaluate_now` (on its own models); the means over
    the members still training, with every member's values attached."""
    results = []
    for i in range(self.population.size):
      with self.members.member_in(self.scenario, i):
        results.append(self.scenario.evaluate_now())
    if results[0] is None:
      return None
    return logs_lib.MemberMetrics(
        {name: [float(r[name]) for r in results] for name in results[0]},
        self.members.alive.numpy())

  def kept_rows(self, best: Any) -> best_rows.BestRows:
    return best_rows.BestRows.of(self.scenario, best)

  def export(self, directory: str) -> str:
    return self.scenario.export_population(directory)

  def exporting_at_best(self, export):
    return best_rows.exporting_at_best(self.scenario, export)

  def after_run(self) -> None:
    if self.members is not None:  # No single answer after it.
      single.refuse_in(self.scenario, self.members)
