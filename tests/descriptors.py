"""One table of every public module with an example input.

It drives the cross-cutting tests in `test_conformance.py` (eager equals
tf.function, unknown batch size, XLA, Checkpoint, SavedModel, deepcopy), and
`test_conformance.py` also checks that the table covers every public module.
To add a module: add a `Descriptor` to `DESCRIPTORS` (or, for a module that
cannot take part, a reason to `NOT_DESCRIBED`).
"""

import dataclasses
from typing import Any, Callable

import tensorflow as tf

import sonnet_like as snt


def _call(module: Any, x: tf.Tensor) -> Any:
  return module(x)


@dataclasses.dataclass(frozen=True)
class Descriptor:
  """How to build a module and call it on an example input.

  Attributes:
    name: Test id.
    create: Builds a fresh, unbuilt module.
    shape: Example input shape; the first axis is the batch.
    dtype: Example input dtype.
    call: `call(module, inputs)`, for modules that need more than `m(x)`.
    xla: Whether the module compiles with jit_compile=True.
  """
  name: str
  create: Callable[[], snt.Module]
  shape: tuple[int, ...]
  dtype: tf.DType = tf.float32
  call: Callable[[Any, tf.Tensor], Any] = _call
  xla: bool = True


DESCRIPTORS: list[Descriptor] = [
    # --- core layers ---
    Descriptor("Linear", lambda: snt.Linear(3), (2, 4)),
    Descriptor("Linear_no_bias", lambda: snt.Linear(3, with_bias=False),
               (2, 4)),
    Descriptor("Linear_rank3", lambda: snt.Linear(3), (2, 5, 4)),
    # --- conv ---
    # --- normalization, dropout, containers, reshape ---
    # --- nets ---
    # --- recurrent ---
    # --- other modules ---
]

# Public Module subclasses that the table does not instantiate, and why.
NOT_DESCRIBED: dict[str, str] = {
    "Module": "the abstract base class; every row exercises it.",
}
