"""The one `Replicator` the distribute tests share.

It runs over the two logical CPUs that conftest.py makes. One serves every
test of the process (strategies created in one process can clash); it
reduces through one device, so it uses no collective ops at all.
"""

import functools

import pytest
import tensorflow as tf

import sonnet_like as snt


@functools.lru_cache(maxsize=None)
def _cached_replicator() -> snt.distribute.Replicator:
  devices = [d.name for d in tf.config.list_logical_devices("CPU")][:2]
  return snt.distribute.Replicator(
      devices, cross_device_ops=tf.distribute.ReductionToOneDevice())


def replicator() -> snt.distribute.Replicator:
  """The shared Replicator; skips the test without two logical CPUs."""
  if len(tf.config.list_logical_devices("CPU")) < 2:
    pytest.skip("needs two logical CPUs (see conftest.py)")
  return _cached_replicator()
