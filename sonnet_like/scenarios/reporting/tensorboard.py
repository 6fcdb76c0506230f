"""`TensorBoard`: scalars for TensorBoard via tf.summary, chief only.

Scalars are written with the core `tf.summary.write` op and the "scalars"
plugin tag, so the `tensorboard` package is needed only to view them (it
comes with the `examples` extra).
"""

import tensorflow as tf

from sonnet_like.core import files
from sonnet_like.core.tf_private import summary
from sonnet_like.scenarios.reporting import logger

_SCALAR_METADATA = summary.scalar_metadata()


class TensorBoard(logger.Logger):
  """Writes train logs every `log_every` steps and every eval's metrics.

  Files go to `<log_dir>/train` and `<log_dir>/eval`; view them with
  `tensorboard --logdir <log_dir>`. A scenario with a `save_dir` has one
  already (`tensorboard=True`, in `save_dir/logs`).

  Args:
    log_dir: The folder of the event files (local or cloud).
    log_every: Write the train logs every this many steps.
  """

  def __init__(self, log_dir: str, log_every: int = 100):
    super().__init__(log_every)
    self.log_dir = log_dir
    self._writers: dict[str, tf.summary.SummaryWriter] = {}

  def write(self, kind, step, values):
    writer = self._writers.get(kind)
    if writer is None:
      writer = self._writers[kind] = tf.summary.create_file_writer(
          files.join(self.log_dir, kind))
    with writer.as_default():
      for key, value in values.items():
        tf.summary.write(key, tf.constant(value, tf.float32), step=step,
                         metadata=_SCALAR_METADATA)
    writer.flush()

  def close(self, scenario):
    for writer in self._writers.values():
      writer.close()
    self._writers = {}
