"""`PopulationSurface`: what a user reads and calls of a population after
(or during) a run, the methods `Scenario` gets from it.

Member i answers as the solo run of seed i: `member(i)` (its models),
`as_member(i)` (the scenario answering as member i: `members.member_in`),
`best(metric)`, `summary(metric)`, `export_population(directory)` (each
member's own export, stacked: `export/stacked.py`) and the per-member
`kept_best()` (every member at its own kept best: `best_rows.py`).
`require_single` is the one refusal of a single answer (`single.py`).
"""

import contextlib
import os
import tempfile
from typing import Any, Iterator

import numpy as np

from sonnet_like.export import stacked
from sonnet_like.scenarios import best as best_lib
from sonnet_like.scenarios.population import best_rows
from sonnet_like.scenarios.population import single
from sonnet_like.scenarios.reporting import distribution


class PopulationSurface:
  """The population methods of `Scenario` (see the module docstring); they
  read `self.members` (the runner's; None in a solo run),
  `self.population`, `self.history`, `models()`, `export` and
  `evaluate_now`."""

  @property
  def members(self) -> Any:
    """The members of the population's run (`members.Members`), or None."""
    return getattr(getattr(self, "runner", None), "members", None)

  def member(self, index: int) -> Any:
    """Member `index`'s trained models, holding its weights now (real
    variables): its one model, or its models by name. Needs `population`."""
    owner = type(self).__name__
    if self.members is None:
      raise ValueError(f"{owner}: member({index}) needs a population "
                       "(population= in the settings) and a run.")
    objects = self.members.member(index)
    with single.originals(self):
      models = {name: objects[id(model)]
                for name, model in self.models().items()}
    return next(iter(models.values())) if len(models) == 1 else models

  def as_member(self, index: int) -> contextlib.AbstractContextManager:
    """The block in which a population's scenario answers as member
    `index`: `act`, `evaluate`, `predict`, `export`,
    `snt.scenarios.evaluate_policy(scenario, ...)` and its attributes use
    member `index`'s models and values (its own seed too)."""
    if self.members is None:
      raise ValueError(f"{type(self).__name__}: as_member({index}) needs a "
                       "population (population= in the settings) and a "
                       "run.")
    self.members.check_index(index)
    return self.members.member_in(self, index)

  def require_single(self, what: str) -> None:
    """Raises `single.NO_SINGLE_ERROR` naming `what` where a population
    has no single answer (outside `as_member`)."""
    if self.members is not None and not self.members.speaking:
      raise single.refuse(type(self).__name__, what, self.population.size)

  _kept_values: list[float] | None = None  # In `kept_best()`.

  def best(self, metric: str, mode: str | None = None) -> Any:
    """The models of the member with the best last evaluation of `metric`;
    inside `kept_best()`, of `keep_best`'s metric: the member with the best
    kept evaluation.

    Which way is better: `mode` ("max" or "min") if given; else
    `best_mode` for `keep_best`'s metric; else the metric's name decides
    (`scenarios.best.default_mode`): higher is better for accuracy,
    return, reward, score, ...; lower for loss, error, ...; a name that
    says neither ("length", "return_std") is refused, asking for `mode`.
    A member whose value is NaN is never the best."""
    owner = type(self).__name__
    table = {} if self.history is None else self.history.member_eval
    if metric not in table:
      raise ValueError(f"{owner}: best({metric!r}) needs the members' "
                       f"evaluations of {metric!r}; evaluated: "
                       f"{sorted(k for k in table if k != 'step')}.")
    if mode is None and metric == self.keep_best:
      mode = self.checkpointing.best_mode
    mode = best_lib.Best(owner, "best", metric, mode).mode
    kept = self._kept_values is not None and metric == self.keep_best
    last = np.asarray(self._kept_values if kept else table[metric][-1],
                      np.float64)
    last = np.where(np.isnan(last), np.inf if mode == "min" else -np.inf,
                    last)
    return self.member(int(np.argmin(last) if mode == "min"
                           else np.argmax(last)))

  def summary(self, metric: str, statistic: str = "iqm",
              confidence: float = 0.95, seed: int = 0) -> Any:
    """The members' last value of `metric` as a distribution (mean,
    median, IQM and a bootstrap interval of `statistic`): their last
    evaluation, or their last train log for a metric not evaluated.

    Returns:
      A `Distribution`; for a sweep, `{setting label: Distribution}` (the
      label names the setting values, e.g. "learning_rate=0.01").
    """
    owner = type(self).__name__
    if self.members is None or self.history is None:
      raise ValueError(f"{owner}: summary({metric!r}) needs a population "
                       "(population= in the settings) and a run.")
    table = next((t for t in (self.history.member_eval,
                              self.history.member_train) if metric in t), None)
    if table is None:
      known = sorted({*self.history.member_eval, *self.history.member_train}
                     - {"step"})
      raise ValueError(f"{owner}: summary({metric!r}): the members have no "
                       f"{metric!r}; they have {known}.")
    values = table[metric][-1]
    population = self.population
    if not population.settings:
      return distribution.summarize(values, statistic, confidence,
                                    seed=seed)
    labels = [", ".join(f"{name}={value}"
                        for name, value in population.group(i))
              for i in range(population.size)]
    return distribution.summarize_groups(values, labels, statistic,
                                         confidence, seed=seed)

  def export_population(self, directory: str | os.PathLike) -> str:
    """Writes every member as one SavedModel: each member's own `export`
    (as the solo run of its seed writes it), every signature's outputs
    stacked on a leading member axis ([members, batch, ...]); the path.
    `with scenario.as_member(i): scenario.export(directory)` writes one."""
    owner = type(self).__name__
    if self.members is None:
      raise ValueError(f"{owner}: export_population needs a population "
                       "(population= in the settings) and a run.")
    with tempfile.TemporaryDirectory(prefix=f"{owner}-members-") as scratch:
      paths = []
      for i in range(self.population.size):
        with self.members.member_in(self, i):
          paths.append(self.export(os.path.join(scratch, f"member_{i}")))
      return stacked.save_stacked(paths, directory, owner=owner)

  @contextlib.contextmanager
  def kept_best(self) -> Iterator[dict[str, Any]]:
    """Inside the block every member holds what `keep_best` kept for it:
    its models' weights (and averages) at its own best evaluation;
    `member(i)`, `best(keep_best)`, `ema_weights()` and
    `export_population` give those. Its final values, bit for bit,
    after. Yields `best.json` (each member's best `values`, `steps`)."""
    owner = type(self).__name__
    if self.members is None or not self.keep_best:
      raise ValueError(f"{owner}: kept_best() needs a population and "
                       "keep_best (a solo run: load_weights(model, "
                       "save_dir, 'best')), after a run.")
    with best_rows.members_at_best(self) as record:
      self._kept_values = record["values"]
      try:
        yield record
      finally:
        self._kept_values = None
