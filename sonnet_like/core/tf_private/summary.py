"""The "scalars" plugin's summary metadata, for `tf.summary.write`.

Public replacement: `tf.summary.scalar`, which comes with the
`tensorboard` package (an optional extra here); the metadata proto itself
lives in `tensorflow.core`.
"""

from typing import Any

# pylint: disable-next=g-direct-tensorflow-import
from tensorflow.core.framework import summary_pb2


def scalar_metadata() -> Any:
  """A `SummaryMetadata` proto that makes TensorBoard show a summary as a
  scalar (plugin "scalars")."""
  return summary_pb2.SummaryMetadata(
      plugin_data=summary_pb2.SummaryMetadata.PluginData(
          plugin_name="scalars"))
