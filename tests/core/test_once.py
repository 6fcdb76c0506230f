"""Tests for sonnet_like/core/once.py."""

import threading
import time

import pytest
import tensorflow as tf

import sonnet_like as snt


def test_plain_function_runs_once():
  calls = []

  @snt.once
  def f():
    calls.append(1)

  f(), f()
  assert calls == [1]


def test_method_runs_once_per_instance():

  class Thing:

    def __init__(self):
      self.calls = 0

    @snt.once
    def setup(self):
      self.calls += 1

  a, b = Thing(), Thing()
  a.setup(), a.setup(), b.setup()
  assert (a.calls, b.calls) == (1, 1)


def test_returning_a_value_is_an_error():

  @snt.once
  def f():
    return 1

  with pytest.raises(ValueError, match="must return None"):
    f()


class SlowBuild(snt.Module):
  """Creates a variable slowly, so that two threads overlap."""

  def __init__(self):
    super().__init__()
    self.builds = 0

  @snt.once
  def _initialize(self):
    self.builds += 1
    time.sleep(0.2)
    self.v = tf.Variable(1., name="v")

  def __call__(self):
    self._initialize()
    return self.v


def test_two_threads_build_once():
  module = SlowBuild()
  seen = []
  threads = [threading.Thread(target=lambda: seen.append(module()))
             for _ in range(2)]
  for t in threads:
    t.start()
  for t in threads:
    t.join()
  assert module.builds == 1
  assert seen[0] is seen[1]
  assert len(module.variables) == 1


class FailsFirstTime(snt.Module):
  """Creates a variable and a submodule, then fails on its first build."""

  def __init__(self):
    super().__init__(name="flaky")
    self.fail = True

  @snt.once
  def _initialize(self, x):
    self.w = tf.Variable(tf.ones([x.shape[-1]]), name="w")
    self.head = snt.Linear(1)
    if self.fail:
      raise RuntimeError("boom")

  def __call__(self, x):
    self._initialize(x)
    return self.head(x * self.w)


def test_failed_build_leaves_nothing_behind_and_retries_cleanly(tmp_path):
  module = FailsFirstTime()
  with pytest.raises(RuntimeError, match="boom"):
    module(tf.ones([2, 3]))
  assert not hasattr(module, "w") and not hasattr(module, "head")
  assert snt.allow_empty_variables(module).variables == ()
  module.fail = False
  module(tf.ones([2, 3]))
  assert sorted(v.name for v in module.variables) == [
      "flaky/linear/b:0", "flaky/linear/w:0", "flaky/w:0"]
  path = tf.train.Checkpoint(m=module).save(str(tmp_path / "ckpt"))
  saved = sorted(name for name, _ in tf.train.list_variables(path)
                 if name.startswith("m/"))
  assert saved == ["m/head/b/.ATTRIBUTES/VARIABLE_VALUE",
                   "m/head/w/.ATTRIBUTES/VARIABLE_VALUE",
                   "m/w/.ATTRIBUTES/VARIABLE_VALUE"]


def test_failed_build_restores_replaced_attributes():

  class Replaces(snt.Module):

    def __init__(self):
      super().__init__()
      self.setting = "original"

    @snt.once
    def _initialize(self):
      self.setting = "changed"
      raise RuntimeError("boom")

  module = Replaces()
  with pytest.raises(RuntimeError):
    module._initialize()  # pylint: disable=protected-access
  assert module.setting == "original"


def test_first_call_inside_tf_function():
  module = SlowBuild()
  out = tf.function(lambda: module() * 2.)()
  assert float(out) == 2.
  assert module.builds == 1


def test_variables_created_on_a_retrace_name_the_module():
  built = snt.Linear(2, name="built_first")
  late = snt.Linear(2, name="built_late")

  @tf.function
  def f(x, use_late):
    return late(x) if use_late else built(x)

  f(tf.ones([1, 3]), False)
  with pytest.raises(ValueError, match="Linear 'built_late' tried to create"):
    f(tf.ones([1, 3]), True)
