"""A population's `keep_best`: each member's own best evaluation.

Each member is judged alone (`best.Best` on its own value of the metric);
at an evaluation where some members improve, their rows of the models'
stacked variables (and of the weight averages, with `ema`) are copied
into `kept`, the others' rows stay. `swapped_in` puts the kept rows into
the stacked variables (what `keep_best` writes to `save_dir/best`), then
the own values back, bit for bit. Everything here is in the run's
checkpoint, so a resumed run goes on comparing. `members_at_best` reads
the best checkpoint back for `kept_best()` and the export at the end.
"""

import contextlib
from typing import Any, Callable, Iterator, Sequence

import numpy as np
import tensorflow as tf

from sonnet_like.core import files
from sonnet_like.scenarios import best as best_lib
from sonnet_like.scenarios.run_folder import keep_best


def sources(scenario: Any) -> list[tf.Variable]:
  """The stacked variables of the scenario's models (the templates) and
  their weight averages: what a member's best keeps."""
  found = []
  for name, model in scenario.models().items():
    found += scenario.members.stacked_of(list(model.variables))
    average = scenario.ema_of(name)
    if average is not None:
      found += average.averages
  return list({v.ref(): v for v in found}.values())


class BestRows(tf.Module):
  """Every member's best value and step of one metric, and its rows then.

  Args:
    judges: One `best.Best` per member (metric, mode).
    variables: The stacked variables whose rows are kept (`sources`).
  """

  def __init__(self, judges: Sequence[best_lib.Best],
               variables: Sequence[tf.Variable]):
    super().__init__(name="best_rows")
    size = len(judges)
    self._judges = lambda: judges  # Python objects, not tracked.
    self._sources = lambda: list(variables)
    self.value = tf.Variable(np.full([size], np.nan), trainable=False,
                             name="value")
    self.step = tf.Variable(np.full([size], -1, np.int64), trainable=False,
                            name="step")
    self.kept = [tf.Variable(v.read_value(), trainable=False,
                             name=v.name.split(":")[0] + "_best")
                 for v in variables]

  @classmethod
  def of(cls, scenario: Any, best: best_lib.Best) -> "BestRows":
    """The rows of `scenario`'s members, each judged as `best` judges."""
    judges = [best_lib.Best(best.owner, "keep_best", best.metric, best.mode,
                            mode_argument="best_mode")
              for _ in range(scenario.population.size)]
    return cls(judges, sources(scenario))

  def begin(self) -> None:
    """The judges take the checkpointed bests (a resumed run)."""
    for judge, value, step in zip(self._judges(), self.value.numpy(),
                                  self.step.numpy()):
      if step >= 0:
        judge.value, judge.step = float(value), int(step)

  def update(self, metrics: Any, step: int) -> bool:
    """Judges each member's value of the metric in `metrics` (the
    members' `MemberMetrics`) at `step`; keeps the rows of those that
    improved. Whether any did."""
    values = metrics.members[self._judges()[0].metric]
    improved = np.array([judge.update({judge.metric: value}, step)
                         for judge, value in zip(self._judges(), values)])
    if not improved.any():
      return False
    self.value.assign(np.where(improved, values, self.value.numpy()))
    self.step.assign(np.where(improved, step, self.step.numpy()))
    for kept, source in zip(self.kept, self._sources()):
      kept.assign(tf.where(_by_rows(improved, kept), source, kept))
    return True

  @contextlib.contextmanager
  def swapped_in(self) -> Iterator[None]:
    """Inside the block the sources hold each member's kept rows (a member
    with no best yet: its own); their own values, bit for bit, after."""
    has_best = self.step.numpy() >= 0
    saved = [v.read_value() for v in self._sources()]
    for kept, source in zip(self.kept, self._sources()):
      source.assign(tf.where(_by_rows(has_best, kept), kept, source))
    try:
      yield
    finally:
      for source, value in zip(self._sources(), saved):
        source.assign(value)

  def record(self) -> dict[str, list]:
    """Each member's best value and step (for `best.json`)."""
    return {"values": self.value.numpy().tolist(),
            "steps": self.step.numpy().tolist()}


def _by_rows(mask: np.ndarray, like: tf.Variable) -> tf.Tensor:
  return tf.reshape(tf.constant(mask), [-1] + [1] * (like.shape.rank - 1))


def exporting_at_best(scenario: Any, export: Callable[[str], str]
                      ) -> Callable[[str], str]:
  """`export`, each member at its own best (`members_at_best`), once a
  best checkpoint exists."""
  if keep_best.record(scenario.save_dir) is None:
    return export

  def export_best(directory: str) -> str:
    with members_at_best(scenario):
      return export(directory)

  return export_best


@contextlib.contextmanager
def members_at_best(scenario: Any) -> Iterator[dict[str, Any]]:
  """Inside the block a population's stacked values (and averages) are
  those of the best checkpoint (each member's models at its own best;
  the members' copies follow); its own values, bit for bit, after. Yields
  what `best.json` says."""
  best = keep_best.record(scenario.save_dir)
  if best is None:
    raise ValueError(keep_best.NO_BEST_ERROR.format(
        owner=type(scenario).__name__,
        folder=files.join(scenario.save_dir, keep_best.FOLDER)))
  members = scenario.members
  state = dict(scenario.traced_step.state(), population=members)
  variables = list({v.ref(): v for part in state.values()
                    for v in part.variables}.values())
  saved = [v.read_value() for v in variables]
  tf.train.Checkpoint(**state).read(best["checkpoint"]).expect_partial()
  members.refresh()
  try:
    yield best
  finally:
    for variable, value in zip(variables, saved):
      variable.assign(value)
    members.refresh()
