"""Tests for sonnet_like/modules/metrics.py."""

import copy

import numpy as np
import pytest
import sonnet as reference
import tensorflow as tf

import sonnet_like as snt

VALUES = np.random.default_rng(0).normal(size=(5, 2, 3)).astype(np.float32)


@pytest.mark.parametrize("cls,numpy_fn", [(snt.Sum, np.sum),
                                          (snt.Mean, np.mean)])
def test_maths_against_numpy_and_sonnet(cls, numpy_fn):
  ours = cls()
  theirs = getattr(reference, cls.__name__)()
  for i, value in enumerate(VALUES):
    out = ours(tf.constant(value))
    np.testing.assert_allclose(out, numpy_fn(VALUES[:i + 1], axis=0),
                               rtol=1e-5)
    np.testing.assert_allclose(out, theirs(tf.constant(value)), rtol=1e-6)


@pytest.mark.parametrize("cls", [snt.Sum, snt.Mean])
def test_variables_and_names_match_sonnet(cls):
  ours = cls(name="acc")
  theirs = getattr(reference, cls.__name__)(name="acc")
  ours.update(tf.ones([2]))
  theirs.update(tf.ones([2]))
  # Ours are uniquified (acc, acc_1, ...): compare inside the module scope.
  names = lambda m: sorted(v.name.split("/", 1)[1] for v in m.variables)
  assert names(ours) == names(theirs)
  assert all(not v.trainable for v in ours.variables)


def test_mean_counts_updates_not_entries():
  mean = snt.Mean()
  mean.update(tf.constant([1., 3.]))
  mean.update(tf.constant([3., 5.]))
  np.testing.assert_allclose(mean.value, [2., 4.])
  assert mean.count.dtype == tf.int64 and int(mean.count) == 2


def test_mean_of_integers_matches_sonnet():
  ours, theirs = snt.Mean(), reference.Mean()
  for value in ([1, 2], [2, 2]):
    ours.update(tf.constant(value))
    theirs.update(tf.constant(value))
  assert ours.value.dtype == theirs.value.dtype == tf.float64
  np.testing.assert_allclose(ours.value, [1.5, 2.])


@pytest.mark.parametrize("cls", [snt.Sum, snt.Mean])
def test_reset(cls):
  metric = cls()
  metric.reset()  # Nothing to reset yet: no error.
  metric(tf.constant([5., 7.]))
  metric.reset()
  out = metric(tf.constant([1., 2.]))
  np.testing.assert_allclose(out, [1., 2.])


@pytest.mark.parametrize("cls", [snt.Sum, snt.Mean])
def test_value_before_update(cls):
  metric = cls(name="early")
  # As in Sonnet 2: Mean's count exists from the start, Sum has no variable.
  if cls is snt.Mean:
    assert [v.name for v in metric.variables] == ["early/count:0"]
  else:
    with pytest.raises(ValueError, match="does not currently contain any"):
      metric.variables  # pylint: disable=pointless-statement
  with pytest.raises(ValueError,
                     match=rf"{cls.__name__} 'early(_\d+)?' has no value yet"):
    _ = metric.value


@pytest.mark.parametrize("cls", [snt.Sum, snt.Mean])
def test_shape_mismatch(cls):
  metric = cls(name="shaped")
  metric(tf.ones([2, 3]))
  with pytest.raises(ValueError, match=rf"{cls.__name__} 'shaped(_\d+)?' was "
                     r"built for values of shape \(2, 3\), got \(3,\)"):
    metric(tf.ones([3]))


@pytest.mark.parametrize("cls", [snt.Sum, snt.Mean])
def test_dtype_mismatch(cls):
  metric = cls(name="typed")
  metric(tf.ones([2]))
  with pytest.raises(TypeError, match=rf"{cls.__name__} 'typed(_\d+)?' was "
                     "built for float32 inputs, got float64"):
    metric(tf.ones([2], tf.float64))


def test_unknown_shape_on_first_update():
  metric = snt.Sum(name="unknown")
  f = tf.function(metric, input_signature=[tf.TensorSpec([None])])
  with pytest.raises(ValueError, match="Sum 'unknown' needs a value of known "
                     r"shape on its first update, got shape \(None,\)"):
    f(tf.ones([2]))
  metric(tf.ones([2]))  # The failed first call left no half-built state.
  np.testing.assert_allclose(f(tf.ones([2])), [2., 2.])


@pytest.mark.parametrize("jit", [False, True], ids=["tf_function", "xla"])
@pytest.mark.parametrize("cls", [snt.Sum, snt.Mean])
def test_compiled_matches_eager(cls, jit):
  eager, compiled = cls(), cls()
  step = tf.function(compiled, jit_compile=jit)  # Built inside the function.
  for value in VALUES:
    np.testing.assert_allclose(step(tf.constant(value)),
                               eager(tf.constant(value)), rtol=1e-6)
  reset = tf.function(compiled.reset)
  reset()
  np.testing.assert_array_equal(compiled.sum.numpy(), 0.)


@pytest.mark.parametrize("cls", [snt.Sum, snt.Mean])
def test_checkpoint_restore_before_first_update(cls, tmp_path):
  metric = cls()
  for value in VALUES[:3]:
    metric(tf.constant(value))
  path = tf.train.Checkpoint(metric=metric).save(str(tmp_path / "ckpt"))
  fresh = cls()
  status = tf.train.Checkpoint(metric=fresh).restore(path)
  for value in VALUES[3:]:
    expected = metric(tf.constant(value))
    np.testing.assert_allclose(fresh(tf.constant(value)), expected,
                               rtol=1e-6)
  status.assert_consumed()


def test_saved_model_round_trip(tmp_path):
  metric = snt.Mean()
  metric(tf.constant(VALUES[0]))
  holder = tf.Module()
  holder.metric = metric
  holder.call = tf.function(metric, input_signature=[
      tf.TensorSpec(VALUES.shape[1:], tf.float32)])
  tf.saved_model.save(holder, str(tmp_path))
  loaded = tf.saved_model.load(str(tmp_path))
  np.testing.assert_allclose(loaded.call(tf.constant(VALUES[1])),
                             VALUES[:2].mean(axis=0), rtol=1e-6)


def test_deepcopy_is_independent():
  metric = snt.Sum()
  metric(tf.constant([1.]))
  clone = copy.deepcopy(metric)
  clone(tf.constant([5.]))
  np.testing.assert_allclose(metric.value, [1.])
  np.testing.assert_allclose(clone.value, [6.])


def test_metric_is_abstract():
  with pytest.raises(TypeError):
    snt.Metric()  # pylint: disable=abstract-class-instantiated

  class Last(snt.Metric):

    def initialize(self, value):
      pass

    def update(self, value):
      self.last = value

    @property
    def value(self):
      return self.last

    def reset(self):
      pass

  assert Last()(3) == 3


def test_metric_without_value_can_be_created_like_sonnet():
  # Sonnet 2 allows it (BaseBatchNorm's custom metrics define only
  # initialize, update and reset); `value` is then None.

  class Accumulate(snt.Metric):

    def initialize(self, value):
      pass

    def update(self, value):
      self.seen = value

    def reset(self):
      pass

  metric = Accumulate()
  assert metric(3) is None and metric.seen == 3

  class MissingReset(snt.Metric):

    def initialize(self, value):
      pass

    def update(self, value):
      pass

  # Only Metric itself is abstract, as in Sonnet 2 (whose metaclass wraps
  # the abstract methods): a subclass may leave any of them out.
  assert MissingReset().reset() is None


def test_metric_abstractness_matches_sonnet():
  sonnet = pytest.importorskip("sonnet")
  for lib in (snt, sonnet):

    class NoValue(lib.Metric):

      def initialize(self, value):
        pass

      def update(self, value):
        pass

      def reset(self):
        pass

    assert NoValue().value is None
    with pytest.raises(TypeError):
      lib.Metric()  # pylint: disable=abstract-class-instantiated
