"""Checkpointer: save, restore, fallback past an unreadable checkpoint."""

import os

import tensorflow as tf

from sonnet_like.scenarios import checkpointing


def _checkpointer(directory, value):
  variable = tf.Variable(value)
  return checkpointing.Checkpointer(str(directory), {"v": variable}), variable


def test_save_and_restore(tmp_path):
  saver, variable = _checkpointer(tmp_path, 1.0)
  assert saver.chief
  assert saver.restore() is None  # Nothing saved yet.
  variable.assign(5.0)
  path = saver.save(7)
  assert path.endswith("ckpt-7") and checkpointing.readable(path)
  loader, restored = _checkpointer(tmp_path, 0.0)
  assert loader.restore() == path and restored.numpy() == 5.0


def test_unreadable_latest_falls_back_to_the_previous(tmp_path):
  saver, variable = _checkpointer(tmp_path, 1.0)
  first = saver.save(1)
  variable.assign(2.0)
  second = saver.save(2)
  # A crash while writing: the newest data file is cut short.
  data = second + ".data-00000-of-00001"
  with open(data, "r+b") as f:
    f.truncate(os.path.getsize(data) // 2)
  assert not checkpointing.readable(second)
  loader, restored = _checkpointer(tmp_path, 0.0)
  assert loader.restore() == first and restored.numpy() == 1.0


def test_is_chief():

  class Resolver:

    def __init__(self, spec, task_type, task_id):
      self._spec, self.task_type, self.task_id = spec, task_type, task_id

    def cluster_spec(self):
      return tf.train.ClusterSpec(self._spec)

  class Strategy:

    def __init__(self, resolver):
      self.cluster_resolver = resolver

  workers = {"worker": ["a:1", "b:2"]}
  assert checkpointing.is_chief(tf.distribute.get_strategy())
  assert checkpointing.is_chief(Strategy(Resolver(workers, "worker", 0)))
  assert not checkpointing.is_chief(Strategy(Resolver(workers, "worker", 1)))
  with_chief = dict(workers, chief=["c:3"])
  assert checkpointing.is_chief(Strategy(Resolver(with_chief, "chief", 0)))
  assert not checkpointing.is_chief(
      Strategy(Resolver(with_chief, "worker", 0)))
  assert checkpointing.is_chief(Strategy(Resolver({}, None, None)))
