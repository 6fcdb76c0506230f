"""Entering the default strategy's replica context on one thread.

A population on several replicas traces each member's step as on one
device, inside a replica of a `MirroredStrategy`. Public replacement: none
(`tf.distribute` offers no way to leave a strategy's replica context for a
block; `experimental_run` and `scope()` only enter one).
"""

import contextlib
from typing import Iterator

# pylint: disable-next=g-direct-tensorflow-import
from tensorflow.python.distribute import distribute_lib


@contextlib.contextmanager
def default_replica_context() -> Iterator[None]:
  """Inside the block no strategy is current (the default one's replica
  context) on this thread (`distribute_lib._push_per_thread_mode`,
  `_get_default_replica_mode`, `_pop_per_thread_mode`)."""
  # pylint: disable=protected-access
  distribute_lib._push_per_thread_mode(
      distribute_lib._get_default_replica_mode())
  try:
    yield
  finally:
    distribute_lib._pop_per_thread_mode()
