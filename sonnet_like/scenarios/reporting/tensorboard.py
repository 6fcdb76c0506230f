"""`TensorBoard`: scalars for TensorBoard via tf.summary, chief only.

Scalars are written with the core `tf.summary.write` op and the "scalars"
plugin tag, so the `tensorboard` package is needed only to view them.
"""

import os

import tensorflow as tf
from tensorflow.core.framework import summary_pb2

_SCALAR_METADATA = summary_pb2.SummaryMetadata(
    plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"))

from sonnet_like.scenarios import hooks


class TensorBoard(hooks.Hook):
  """Writes train logs every `log_every` steps and every eval's metrics.

  Files go to `<log_dir>/train` and `<log_dir>/eval`; view them with
  `tensorboard --logdir <log_dir>`.
  """

  def __init__(self, log_dir: str, log_every: int = 100):
    self.log_dir, self.log_every = log_dir, log_every
    self._writers: dict[str, tf.summary.SummaryWriter] = {}

  def _write(self, kind: str, step: int, values: dict[str, float]) -> None:
    writer = self._writers.get(kind)
    if writer is None:
      writer = self._writers[kind] = tf.summary.create_file_writer(
          os.path.join(self.log_dir, kind))
    with writer.as_default():
      for key, value in values.items():
        tf.summary.write(key, tf.constant(value, tf.float32), step=step,
                         metadata=_SCALAR_METADATA)
    writer.flush()

  def step_end(self, scenario, step, logs):
    if scenario.is_chief and (step % self.log_every == 0
                              or step == scenario.num_steps):
      self._write("train", step, logs)

  def eval_end(self, scenario, step, metrics):
    if scenario.is_chief:
      self._write("eval", step, metrics)

  def end(self, scenario):
    for writer in self._writers.values():
      writer.close()
    self._writers = {}
