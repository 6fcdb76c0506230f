"""Exponential moving averages of model weights (a scenario's `ema=`).

`WeightEMA` holds, for a model's trainable variables, averages that start
equal to them and follow `ema = decay * ema + (1 - decay) * w` after every
update (in the compiled step), are checkpointed with the run, and are
swapped into the model to evaluate, predict and export.

    >>> import tensorflow as tf
    >>> w = tf.Variable([0.0])
    >>> average = WeightEMA([w], decay=0.9)
    >>> _ = w.assign([1.0]); average.update()
    >>> with average.swapped_in():
    ...   print(round(float(w[0]), 4))
    0.1
    >>> float(w[0])
    1.0

Where a runner keeps the models' variables elsewhere (`create(models,
storage)`: a population's stacked variables, one row per member) the
averages are those of the stored variables: the update is elementwise, so
each row follows the solo formula, and a row that stopped (`storage.alive`
false) keeps its average.

Only trainable variables are averaged. Non-trainable ones (BatchNorm's
moving mean and variance, which are averages already, a VQ codebook's EMA)
are left as the model has them: evaluation with the EMA uses the model's
own current statistics.
"""

import contextlib
from typing import Any, Iterable, Iterator

import tensorflow as tf

UNKNOWN_MODEL_ERROR = (
    "{owner}: ema names {names}, which are not models of this scenario; its "
    "models() are {known}.")


class WeightEMA(tf.Module):
  """Exponential moving averages of some variables (a model's weights)."""

  def __init__(self, variables: Iterable[tf.Variable], decay: float,
               name: str = "weight_ema", rows: tf.Variable | None = None):
    super().__init__(name=name)
    self.decay = decay
    self.targets = list(variables)
    # Which rows take a step (a population's `alive`); not tracked.
    self._rows = lambda: rows
    self.averages = [
        tf.Variable(v.read_value(), trainable=False,
                    name=v.name.split(":")[0].replace("/", "_") + "_ema")
        for v in self.targets]

  def update(self) -> None:
    """`ema = decay * ema + (1 - decay) * w` for every variable."""
    rows = self._rows()
    for average, target in zip(self.averages, self.targets):
      new = self.decay * average + (1.0 - self.decay) * target.read_value()
      if rows is not None:
        keep = tf.reshape(rows, [-1] + [1] * (new.shape.rank - 1))
        new = tf.where(keep, new, average)
      average.assign(new)

  @contextlib.contextmanager
  def swapped_in(self) -> Iterator[None]:
    """Inside the block the targets hold the averages; then their own values.

    The own values are put back bit for bit, so evaluating in the middle of
    a run does not change it.
    """
    saved = [v.read_value() for v in self.targets]
    for target, average in zip(self.targets, self.averages):
      target.assign(average.read_value())
    try:
      yield
    finally:
      for target, value in zip(self.targets, saved):
        target.assign(value)


class ModelEMAs:
  """The EMAs of a scenario's models, from its `ema` setting.

  Args:
    owner: The scenario's name, for errors.
    ema: None, one decay for every model, or a dict of model name -> decay.
  """

  def __init__(self, owner: str, ema: float | dict[str, float] | None):
    self.owner, self.ema = owner, ema
    self.averages: dict[str, WeightEMA] = {}
    self._depth = 0
    self._storage = None

  def create(self, models: dict[str, Any], storage: Any = None) -> None:
    """Makes the averages of the (built) models; call in the strategy scope
    before restoring. With the runner's `storage` (`stacked_of` gives the
    variables the models' stand for, `alive` their rows in training,
    `refresh` copies them back), the averages are of those."""
    self.averages, self._storage = {}, storage
    if self.ema is None:
      return
    decays = (self.ema if isinstance(self.ema, dict)
              else {name: self.ema for name in models})
    unknown = sorted(set(decays) - set(models))
    if unknown:
      raise ValueError(UNKNOWN_MODEL_ERROR.format(
          owner=self.owner, names=unknown, known=sorted(models)))
    for name, decay in decays.items():
      variables, rows = models[name].trainable_variables, None
      if storage is not None:
        variables, rows = storage.stacked_of(variables), storage.alive
      self.averages[name] = WeightEMA(variables, decay, name=f"{name}_ema",
                                      rows=rows)

  def _refresh(self) -> None:
    """The storage's copies of the averaged variables take their values."""
    if self._storage is not None:
      self._storage.refresh([v for average in self.averages.values()
                             for v in average.targets])

  def trackables(self) -> dict[str, WeightEMA]:
    """The averages by checkpoint name, "<model>_ema"."""
    return {f"{name}_ema": average for name, average in self.averages.items()}

  def update(self) -> None:
    """Traced: every average takes one step towards its model's weights."""
    for average in self.averages.values():
      average.update()

  @contextlib.contextmanager
  def swapped_in(self) -> Iterator[None]:
    """The averages in their models inside the block (nested blocks are
    one); the raw weights, bit for bit, after it."""
    if not self.averages or self._depth:
      self._depth += 1
      try:
        yield
      finally:
        self._depth -= 1
      return
    self._depth += 1
    try:
      with contextlib.ExitStack() as stack:
        if self._storage is not None:  # Its copies follow, both ways.
          stack.callback(self._refresh)
        for average in self.averages.values():
          stack.enter_context(average.swapped_in())
        self._refresh()
        yield
    finally:
      self._depth -= 1
