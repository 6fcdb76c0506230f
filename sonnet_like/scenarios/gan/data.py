"""Real data for the `GAN` scenario: batches of real examples, one tensor.

The engine feeds the data (`Scenario.feed`); this is the GAN's own rule for
what an element must be.

    >>> import tensorflow as tf
    >>> check_element((tf.TensorSpec([None, 2]), tf.TensorSpec([None])))
    Traceback (most recent call last):
    ...
    TypeError: GAN: data must be batches of real examples, one tensor each (for (x, y) pairs use `dataset.map(lambda x, y: x)`), got elements tuple(float32[None, 2], float32[None]).
"""

from typing import Any

import tensorflow as tf

from sonnet_like.scenarios import data as data_lib

DATA_ERROR = (
    "GAN: data must be batches of real examples, one tensor each (for (x, y) "
    "pairs use `dataset.map(lambda x, y: x)`), got elements {got}.")


def check_element(spec: Any) -> None:
  """Raises unless the elements are single tensors `[batch, ...]`."""
  if not isinstance(spec, tf.TensorSpec) or (spec.shape.rank or 0) < 2:
    raise TypeError(DATA_ERROR.format(got=data_lib.describe(spec)))
