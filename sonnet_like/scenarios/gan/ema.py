"""`GeneratorEMA`: an exponential moving average of a generator's weights.

The averages are variables that mirror the generator's trainable variables:
they start equal to them, follow `ema = decay * ema + (1 - decay) * w` after
each generator update (in the compiled step, on every replica), are
checkpointed with the run, and are swapped into the generator to sample.

    >>> import tensorflow as tf
    >>> from sonnet_like.scenarios.gan import ema
    >>> w = tf.Variable([0.0])
    >>> average = ema.GeneratorEMA([w], decay=0.9)
    >>> _ = w.assign([1.0]); average.update()
    >>> with average.swapped_in():
    ...   print(round(float(w[0]), 4))
    0.1
    >>> float(w[0])
    1.0
"""

import contextlib
from typing import Iterable, Iterator

import tensorflow as tf


class GeneratorEMA(tf.Module):
  """Exponential moving averages of a generator's trainable variables."""

  def __init__(self, variables: Iterable[tf.Variable], decay: float):
    super().__init__(name="generator_ema")
    self.decay = decay
    self.targets = list(variables)
    self.averages = [
        tf.Variable(v.read_value(), trainable=False,
                    name=v.name.split(":")[0].replace("/", "_") + "_ema")
        for v in self.targets]

  def update(self) -> None:
    """`ema = decay * ema + (1 - decay) * w` for every variable."""
    for average, target in zip(self.averages, self.targets):
      average.assign(self.decay * average +
                     (1.0 - self.decay) * target.read_value())

  @contextlib.contextmanager
  def swapped_in(self) -> Iterator[None]:
    """Inside the block the targets hold the averages; then their own values.

    The own values are put back bit for bit, so sampling in the middle of a
    run does not change it.
    """
    saved = [v.read_value() for v in self.targets]
    for target, average in zip(self.targets, self.averages):
      target.assign(average.read_value())
    try:
      yield
    finally:
      for target, value in zip(self.targets, saved):
        target.assign(value)
