"""AutoGraph's control status, its conversion and its do-not-convert mark.

`core/autograph.py` rewrites user code as AutoGraph would from converted
code, and marks library code to be called as written. Public replacements:
`tf.autograph.to_graph` converts but ignores the caller's status;
`tf.autograph.experimental.do_not_convert` marks, but through a wrapper
that costs every eager call.
"""

from typing import Any, Callable, ContextManager

import tensorflow as tf
# pylint: disable-next=g-direct-tensorflow-import
from tensorflow.python.autograph.core import ag_ctx

# The attribute AutoGraph looks for on what it calls: whatever carries it
# is called without rewriting (`do_not_convert` puts it on its wrapper).
DO_NOT_CONVERT_MARK = "autograph_info__"


def control_status() -> Any:
  """AutoGraph's status where this is called (`ag_ctx.control_status_ctx()`:
  an object with `status` and `options`)."""
  return ag_ctx.control_status_ctx()


def enabled(status: Any) -> bool:
  """Whether `status` (from `control_status`) is AutoGraph's ENABLED."""
  return status.status == ag_ctx.Status.ENABLED


def status_scope(status: Any) -> ContextManager[Any]:
  """A block under `status` (from `control_status`), wherever it runs."""
  return ag_ctx.ControlStatusCtx(status.status, status.options)


def convert(fn: Callable, status: Any) -> Callable:
  """`fn` rewritten by AutoGraph as converted code under `status` would
  call it (`tf.__internal__.autograph.tf_convert`)."""
  return tf.__internal__.autograph.tf_convert(fn, status)
