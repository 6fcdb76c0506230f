"""Test set-up: quiet TensorFlow, two logical CPUs for tf.distribute tests,
and work stealing between pytest-xdist's workers."""

import os

import pytest

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


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
  """`-n N` hands the tests out by work stealing: a worker that runs dry
  takes half of another's queue. xdist's default ("load") hands out fixed
  chunks; the suite's multi-process tests sit together, and one worker ran
  them 4.6 minutes after the other had finished (2026-11-28). Another
  `--dist` than the default is kept."""
  if config.getoption("dist") != "load":
    return None
  from xdist.scheduler import WorkStealingScheduling  # pylint: disable=g-import-not-at-top
  return WorkStealingScheduling(config, log)
