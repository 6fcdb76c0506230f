"""The scenario's `seed` as TensorFlow's global seed while a run lasts.

TensorFlow's stateful random ops (the initializers of `snt` modules,
`tf.nn.dropout` inside a traced step, a user's `tf.random.normal`) take
their seeds from the global seed and a count of such ops made so far. With
no global seed they are seeded from the operating system, so the first
weights of a module built inside a scenario differed from process to
process whatever the scenario's `seed=` said. `run` therefore makes the
scenario's seed the global seed for its duration: variables created in
`build()` and every graph traced during the run (dropout in the step) draw
from it. A process that had set no global seed, or another one, gets it back
afterwards with its own count of ops, so the rest of the user's program
draws what it would have drawn without the run.

    >>> import tensorflow as tf
    >>> with global_seed(3):
    ...   a = tf.random.uniform([2])
    >>> with global_seed(3):
    ...   b = tf.random.uniform([2])
    >>> bool(tf.reduce_all(a == b))
    True

Why not seed the initializers from the scenario's generator: a module makes
its own initializers (a user's module too), and most take no generator, so
only the global seed reaches all of them. The one side effect: setting a
global seed clears TensorFlow's cache of eager kernels, so a random op given
its own `seed=` and run eagerly restarts its stream after a run (ops inside
a `tf.function` are not affected).
"""

import contextlib
from typing import Iterator

from sonnet_like.core.tf_private import eager  # TensorFlow's global seed.


@contextlib.contextmanager
def global_seed(seed: int) -> Iterator[None]:
  """Makes `seed` TensorFlow's global seed inside the block, then restores
  the global seed and its count of random ops as they were.

  Args:
    seed: The scenario's seed.
  """
  saved_seed = eager.global_seed()
  saved_ops = eager.op_seed_stream()  # Where the op seeds had come to.
  eager.set_global_seed(int(seed))
  try:
    yield
  finally:
    eager.set_global_seed(saved_seed)
    eager.set_op_seed_stream(saved_ops)
