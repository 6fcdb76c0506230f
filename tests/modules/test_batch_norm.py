"""Tests for sonnet_like/modules/batch_norm.py."""

import numpy as np
import pytest
import sonnet
import tensorflow as tf

import sonnet_like as snt


def _x(shape, seed=0, dtype=np.float32):
  rng = np.random.default_rng(seed)
  return (rng.normal(size=shape) * 3 + 1).astype(dtype)


def _normalize(x, axes, eps=1e-5):
  mean = x.mean(axis=axes, keepdims=True)
  var = x.var(axis=axes, keepdims=True)
  return (x - mean) / np.sqrt(var + eps), mean, var


# (shape, data_format, reduction axes, Bessel-corrected moving variance)
_LAYOUTS = [
    ((6, 4), "channels_last", (0,), False),
    ((3, 5, 4), "channels_last", (0, 1), False),
    ((2, 3, 3, 4), "channels_last", (0, 1, 2), True),  # The fused kernel.
    ((2, 4, 3, 3), "NCHW", (0, 2, 3), False),
]


@pytest.mark.parametrize("shape,data_format,axes,bessel", _LAYOUTS)
def test_training_output_and_moving_statistics(shape, data_format, axes,
                                               bessel):
  bn = snt.BatchNorm(False, False, decay_rate=0.5, data_format=data_format)
  xs = [_x(shape, seed) for seed in range(3)]
  hidden_mean = hidden_var = 0.
  for t, x in enumerate(xs, start=1):
    expected, mean, var = _normalize(x.astype(np.float64), axes)
    np.testing.assert_allclose(bn(x, is_training=True), expected, rtol=1e-4,
                               atol=1e-5)
    n = x.size // var.size
    if bessel:
      var = var * n / (n - 1)
    hidden_mean = 0.5 * hidden_mean + 0.5 * mean
    hidden_var = 0.5 * hidden_var + 0.5 * var
    np.testing.assert_allclose(bn.moving_mean.value,
                               hidden_mean / (1 - 0.5**t), rtol=1e-5)
    np.testing.assert_allclose(bn.moving_variance.value,
                               hidden_var / (1 - 0.5**t), rtol=1e-5)
  x = _x(shape, 9)
  mean, var = bn.moving_mean.value.numpy(), bn.moving_variance.value.numpy()
  np.testing.assert_allclose(bn(x, is_training=False),
                             (x - mean) / np.sqrt(var + 1e-5), rtol=1e-4,
                             atol=1e-5)


@pytest.mark.parametrize("shape,data_format,axes,bessel", _LAYOUTS)
def test_matches_dm_sonnet(shape, data_format, axes, bessel):
  del axes, bessel
  ours = snt.BatchNorm(True, True, decay_rate=0.9, data_format=data_format,
                       name="bn_cmp")
  theirs = sonnet.BatchNorm(True, True, decay_rate=0.9,
                            data_format=data_format, name="bn_cmp")
  for seed in range(3):
    x = _x(shape, seed)
    np.testing.assert_allclose(ours(x, is_training=True),
                               theirs(x, is_training=True), rtol=1e-5,
                               atol=1e-5)
    if seed == 0:  # Same non-trivial scale and offset from here on.
      for module in (ours, theirs):
        module.scale.assign(_x(module.scale.shape, 10))
        module.offset.assign(_x(module.offset.shape, 11))
  x = _x(shape, 7)
  for kwargs in ({"is_training": False},
                 {"is_training": False, "test_local_stats": True}):
    np.testing.assert_allclose(ours(x, **kwargs), theirs(x, **kwargs),
                               rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(ours.moving_variance.value,
                             theirs.moving_variance.value, rtol=1e-6)
  def names(module, variables):  # Ours are uniquified: bn_cmp_1, ...
    return [v.name.replace(module.name, "bn", 1) for v in variables]
  assert (names(ours, ours.variables) == names(theirs, theirs.variables))
  assert (names(ours, ours.trainable_variables) ==
          names(theirs, theirs.trainable_variables))


def test_restores_a_dm_sonnet_checkpoint(tmp_path):
  theirs = sonnet.BatchNorm(True, True, decay_rate=0.5)
  for seed in range(2):
    theirs(_x((2, 3, 3, 4), seed), is_training=True)
  path = tf.train.Checkpoint(bn=theirs).save(str(tmp_path / "ckpt"))
  ours = snt.BatchNorm(True, True, decay_rate=0.5)
  status = tf.train.Checkpoint(bn=ours).restore(path)
  x = _x((2, 3, 3, 4), 5)
  np.testing.assert_allclose(ours(x, is_training=False),
                             theirs(x, is_training=False), rtol=1e-5,
                             atol=1e-6)
  status.assert_consumed()


def test_variables_and_trainability():
  bn = snt.BatchNorm(True, False, name="bn_vars")
  bn(_x((2, 3)), is_training=True)
  assert [v.name for v in bn.trainable_variables] == ["bn_vars/scale:0"]
  np.testing.assert_array_equal(bn.offset, np.zeros(3))
  assert bn.moving_mean.counter.numpy() == 1


def test_channels_first_parameters_broadcast():
  bn = snt.BatchNorm(True, True, data_format="channels_first")
  bn(_x((2, 4, 3)), is_training=True)
  assert bn.scale.shape == [4, 1]


def test_test_local_stats_uses_batch_and_does_not_update():
  bn = snt.BatchNorm(False, False)
  bn(_x((8, 3), 0), is_training=True)
  before = bn.moving_mean.value.numpy()
  x = _x((8, 3), 1)
  np.testing.assert_allclose(
      bn(x, is_training=False, test_local_stats=True), _normalize(x, (0,))[0],
      rtol=1e-4, atol=1e-5)
  np.testing.assert_array_equal(bn.moving_mean.value, before)
  assert bn.moving_mean.counter.numpy() == 1


@pytest.mark.parametrize("shape", [(4, 3), (2, 2, 2, 3)])
def test_scale_and_offset_at_call_time(shape):
  x = _x(shape)
  scale = _x((shape[0],) + (1,) * (len(shape) - 2) + (3,), 4)
  offset = _x((3,), 5)
  bn = snt.BatchNorm(False, False, decay_rate=0.5)
  out = bn(x, is_training=True, scale=scale, offset=offset)
  axes = tuple(range(len(shape) - 1))
  np.testing.assert_allclose(out, _normalize(x, axes)[0] * scale + offset,
                             rtol=1e-4, atol=1e-4)
  # Per-example scales cannot use the fused kernel; the statistics agree.
  reference = snt.BatchNorm(False, False, decay_rate=0.5)
  reference(x, is_training=True)
  np.testing.assert_allclose(bn.moving_variance.value,
                             reference.moving_variance.value, rtol=1e-5)


def test_float64_inputs():
  x = _x((2, 3, 3, 2), dtype=np.float64)
  bn = snt.BatchNorm(True, True)
  np.testing.assert_allclose(bn(x, is_training=True),
                             _normalize(x, (0, 1, 2))[0], rtol=1e-6)
  assert bn.scale.dtype == tf.float64


def test_boolean_tensor_is_training_in_tf_function():
  bn = snt.BatchNorm(False, False, decay_rate=0.5)
  step = tf.function(lambda x, t: bn(x, is_training=t))
  x = _x((8, 3))
  np.testing.assert_allclose(step(x, tf.constant(True)),
                             _normalize(x, (0,))[0], rtol=1e-4, atol=1e-5)
  assert bn.moving_mean.counter.numpy() == 1
  y = _x((8, 3), 1)
  mean, var = bn.moving_mean.value.numpy(), bn.moving_variance.value.numpy()
  np.testing.assert_allclose(step(y, tf.constant(False)),
                             (y - mean) / np.sqrt(var + 1e-5), rtol=1e-4,
                             atol=1e-5)
  assert bn.moving_mean.counter.numpy() == 1


def test_numpy_bool_is_training():
  bn = snt.BatchNorm(False, False)
  bn(_x((4, 2)), is_training=np.bool_(True))
  assert bn.moving_mean.counter.numpy() == 1


# Errors.


@pytest.mark.parametrize("decay_rate", [0., 1., -0.5, 1.5])
def test_bad_decay_rate(decay_rate):
  with pytest.raises(ValueError, match=r"BatchNorm: decay_rate must be in "
                     r"range \(0, 1\), got"):
    snt.BatchNorm(True, True, decay_rate=decay_rate)


@pytest.mark.parametrize("flag", ["False", None, 1., tf.constant([True, False]),
                                  tf.constant(1.)])
def test_bad_is_training(flag):
  bn = snt.BatchNorm(True, True, name="bn_flag")
  with pytest.raises(TypeError, match=r"'bn_flag\w*': is_training must be a "
                     "bool, an int or a scalar boolean tensor"):
    bn(_x((2, 3)), is_training=flag)


def test_int_is_training_is_taken_as_sonnet_takes_it():
  trained = snt.BatchNorm(True, True, decay_rate=0.5, name="bn_int")
  reference = snt.BatchNorm(True, True, decay_rate=0.5, name="bn_bool")
  x = _x((4, 3))
  np.testing.assert_allclose(trained(x, is_training=1),
                             reference(x, is_training=True))
  np.testing.assert_allclose(trained(x, is_training=0),
                             reference(x, is_training=False))


def test_bad_test_local_stats():
  bn = snt.BatchNorm(True, True, name="bn_local")
  with pytest.raises(TypeError, match="'bn_local': test_local_stats must be"):
    bn(_x((2, 3)), is_training=False, test_local_stats="yes")


def test_eval_before_training_eagerly():
  bn = snt.BatchNorm(True, True, name="untrained")
  with pytest.raises(ValueError, match="BatchNorm 'untrained' was called with "
                     "is_training=False before any call with is_training=True"
                     ".*test_local_stats=True"):
    bn(_x((2, 3)), is_training=False)


def test_eval_before_training_in_tf_function():
  bn = snt.BatchNorm(True, True, name="untrained_graph")
  evaluate = tf.function(lambda x: bn(x, is_training=False))
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match=r"untrained_graph\W+ was called with "
                     "is_training=False before any call"):
    evaluate(_x((2, 3)))
  bn(_x((2, 3)), is_training=True)
  assert np.isfinite(evaluate(_x((2, 3))).numpy()).all()


def test_eval_before_training_under_xla_gives_nan_not_garbage():
  bn = snt.BatchNorm(True, True)
  evaluate = tf.function(lambda x: bn(x, is_training=False), jit_compile=True)
  assert np.isnan(evaluate(_x((2, 3))).numpy()).all()


def test_eval_after_checkpoint_restore(tmp_path):
  trained = snt.BatchNorm(True, True)
  trained(_x((4, 3)), is_training=True)
  path = tf.train.Checkpoint(m=trained).save(str(tmp_path / "c"))
  fresh = snt.BatchNorm(True, True)
  tf.train.Checkpoint(m=fresh).restore(path)
  x = _x((4, 3), 1)
  np.testing.assert_allclose(fresh(x, is_training=False),
                             trained(x, is_training=False))


def test_channel_mismatch():
  bn = snt.BatchNorm(True, True, name="bn_ch")
  bn(_x((2, 3)), is_training=True)
  with pytest.raises(ValueError, match="BatchNorm 'bn_ch' was built for "
                     "channels 3, got 5"):
    bn(_x((2, 5)), is_training=True)


def test_channel_mismatch_unknown_at_trace():
  bn = snt.BatchNorm(True, True, name="bn_dyn")
  bn(_x((2, 3)), is_training=True)
  f = tf.function(lambda x: bn(x, is_training=True),
                  input_signature=[tf.TensorSpec([None, None], tf.float32)])
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match=r"bn_dyn\W+ was built for channels 3"):
    f(_x((2, 5)))


def test_rank_and_dtype_mismatch():
  bn = snt.BatchNorm(True, True, name="bn_rank")
  bn(_x((2, 3)), is_training=True)
  with pytest.raises(ValueError, match="'bn_rank' expects a rank-2 input"):
    bn(_x((2, 2, 3)), is_training=True)
  with pytest.raises(TypeError, match="'bn_rank' was built for float32"):
    bn(_x((2, 3), dtype=np.float64), is_training=True)


def test_integer_input_rejected():
  with pytest.raises(TypeError, match="floating-point input"):
    snt.BatchNorm(True, True)(tf.ones([2, 3], tf.int32), is_training=True)


def test_scale_passed_when_created():
  bn = snt.BatchNorm(True, False, name="bn_own")
  with pytest.raises(ValueError, match="'bn_own' learns its own scale"):
    bn(_x((2, 3)), is_training=True, scale=tf.ones([3]))
  bn = snt.BatchNorm(False, True, name="bn_own_offset")
  with pytest.raises(ValueError, match="learns its own offset"):
    bn(_x((2, 3)), is_training=True, offset=tf.ones([3]))


@pytest.mark.parametrize("kwargs,match", [
    ({"create_scale": False, "scale_init": snt.initializers.Ones()},
     "BatchNorm: Cannot set `scale_init` if `create_scale=False`"),
    ({"create_offset": False, "offset_init": snt.initializers.Ones()},
     "BatchNorm: Cannot set `offset_init` if `create_offset=False`"),
    ({"eps": -1.}, "BatchNorm: eps must be a non-negative number, got -1.0."),
    ({"data_format": "HWCN"}, "BatchNorm: Unable to extract channel "
     "information from 'HWCN'. data_format must be"),
])
def test_bad_constructor_arguments(kwargs, match):
  arguments = {"create_scale": True, "create_offset": True, **kwargs}
  with pytest.raises(ValueError, match=match):
    snt.BatchNorm(**arguments)


def test_base_batch_norm_with_other_metrics():
  bn = snt.BaseBatchNorm(False, False, snt.Mean(), snt.Mean())
  x, y = _x((4, 2), 0), _x((4, 2), 1)
  bn(x, is_training=True)
  bn(y, is_training=True)
  expected = (x.mean(0) + y.mean(0)) / 2
  np.testing.assert_allclose(bn.moving_mean.value[0], expected, rtol=1e-5)
