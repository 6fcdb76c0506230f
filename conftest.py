"""Test set-up: quiet TensorFlow, two logical CPUs for tf.distribute tests."""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # pylint: disable=g-import-not-at-top

_cpus = tf.config.list_physical_devices("CPU")
# `get_logical_device_configuration` does not initialise the runtime
# (`list_logical_devices` would, making the split below impossible).
if _cpus and len(tf.config.get_logical_device_configuration(_cpus[0]) or
                 ()) < 2:
  try:
    tf.config.set_logical_device_configuration(
        _cpus[0], [tf.config.LogicalDeviceConfiguration()] * 2)
  except RuntimeError:  # Already initialised by an earlier import.
    pass

