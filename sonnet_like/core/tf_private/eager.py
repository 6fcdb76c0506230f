"""The eager context's global seed and random-op stream; the gradient tapes.

Public replacements: `tf.random.set_seed` sets the global seed but cannot
read it back or restore the stream of op seeds it draws from (the context's
`_rng`), which a scenario restores after its run; nothing public tells the
tapes that a variable not backed by a resource was read.
"""

from typing import Any

import tensorflow as tf
# pylint: disable=g-direct-tensorflow-import
from tensorflow.python.eager import context as _context
from tensorflow.python.eager import tape as _tape
# pylint: enable=g-direct-tensorflow-import


def global_seed() -> int | None:
  """TensorFlow's global seed, or None (`context.global_seed()`)."""
  return _context.global_seed()


def set_global_seed(seed: int | None) -> None:
  """Sets TensorFlow's global seed (`context.set_global_seed`; it restarts
  the stream of op seeds and clears the eager kernel cache)."""
  _context.set_global_seed(seed)


def op_seed_stream() -> Any:
  """The stream that gives each random op without a `seed=` its op seed
  (`context()._rng`, a `random.Random`; None before a global seed)."""
  return getattr(_context.context(), "_rng", None)


def set_op_seed_stream(stream: Any) -> None:
  """Puts back a stream from `op_seed_stream`."""
  _context.context()._rng = stream  # pylint: disable=protected-access


def variable_accessed(variable: tf.Variable) -> None:
  """Tells the active gradient tapes that `variable` was read, as a
  resource variable's read does (`tape.variable_accessed`)."""
  _tape.variable_accessed(variable)
