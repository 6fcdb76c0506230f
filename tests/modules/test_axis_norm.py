"""Tests for sonnet_like/modules/axis_norm.py (LayerNorm, InstanceNorm)."""

import numpy as np
import pytest
import sonnet
import tensorflow as tf

import sonnet_like as snt
from tests.modules import norm_common


_x = norm_common.normal_input


def _normalize(x, axes, eps=1e-5):
  x = x.astype(np.float64)
  mean = x.mean(axis=axes, keepdims=True)
  return (x - mean) / np.sqrt(x.var(axis=axes, keepdims=True) + eps)


@pytest.mark.parametrize("axis,axes", [
    (-1, (2,)), (1, (1,)), ([1, 2], (1, 2)), ((-2, -1), (1, 2)),
    (slice(1, None), (1, 2)), (slice(0, 1), (0,))])
def test_layer_norm_matches_numpy(axis, axes):
  x = _x((2, 3, 4))
  ln = snt.LayerNorm(axis, create_scale=False, create_offset=False)
  np.testing.assert_allclose(ln(x), _normalize(x, axes), rtol=1e-4, atol=1e-5)


def test_scale_and_offset_are_per_channel():
  x = _x((2, 3, 4))
  ln = snt.LayerNorm(-1, True, True, scale_init=snt.initializers.Constant(2.),
                     offset_init=snt.initializers.Constant(-1.), name="ln_so")
  np.testing.assert_allclose(ln(x), 2 * _normalize(x, (2,)) - 1, rtol=1e-4,
                             atol=1e-5)
  assert [v.name for v in ln.trainable_variables] == ["ln_so/offset:0",
                                                      "ln_so/scale:0"]
  assert ln.scale.shape == [4]


def test_channels_first_parameter_shape():
  ln = snt.LayerNorm(slice(1, None), True, True, data_format="NCHW")
  ln(_x((2, 4, 3, 3)))
  assert ln.scale.shape == [4, 1, 1]


def test_scale_and_offset_at_call_time():
  x = _x((2, 5))
  scale, offset = _x((2, 1), 1), _x((5,), 2)
  ln = snt.LayerNorm(-1, False, False)
  np.testing.assert_allclose(ln(x, scale=scale, offset=offset),
                             _normalize(x, (1,)) * scale + offset, rtol=1e-4,
                             atol=1e-4)


def test_stateless_layer_norm_has_no_variables_as_in_sonnet():
  ln = snt.LayerNorm(-1, False, False)
  ln(_x((2, 3)))
  with pytest.raises(ValueError, match="does not currently contain any"):
    ln.variables  # pylint: disable=pointless-statement
  assert ln.scale is None and ln.offset is None


def test_layer_norm_with_parameters_refuses_empty_variables_before_build():
  with pytest.raises(ValueError, match="does not currently contain any variables"):
    snt.LayerNorm(-1, True, False).variables  # pylint: disable=W0104


@pytest.mark.parametrize("data_format,shape,axes", [
    ("channels_last", (2, 3, 4, 5), (1, 2)),
    ("NCHW", (2, 5, 3, 4), (2, 3)),
    ("NWC", (2, 6, 3), (1,)),
])
def test_instance_norm_matches_numpy(data_format, shape, axes):
  x = _x(shape)
  norm = snt.InstanceNorm(True, True, data_format=data_format)
  np.testing.assert_allclose(norm(x), _normalize(x, axes), rtol=1e-4,
                             atol=1e-5)


@pytest.mark.parametrize("make", [
    lambda m: m.LayerNorm(-1, True, True),
    lambda m: m.LayerNorm(slice(1, None), True, False, eps=1e-3),
    lambda m: m.LayerNorm([1, 2], False, True, data_format="NCHW"),
    lambda m: m.InstanceNorm(True, True),
    lambda m: m.InstanceNorm(True, True, data_format="channels_first"),
])
def test_matches_dm_sonnet(make):
  norm_common.assert_matches_sonnet(make(snt), make(sonnet), _x((2, 4, 3, 5)))


def test_unknown_batch_in_tf_function():
  ln = snt.LayerNorm(slice(1, None), True, True)
  f = tf.function(ln, input_signature=[tf.TensorSpec([None, 3, 4])])
  x = _x((5, 3, 4))
  np.testing.assert_allclose(f(x), _normalize(x, (1, 2)), rtol=1e-4,
                             atol=1e-5)


# Errors.


@pytest.mark.parametrize("axis", ["1", 1.5, [1, "2"], None])
def test_bad_axis(axis):
  with pytest.raises(ValueError, match="LayerNorm: `axis` should be an int, "
                     "slice or iterable of ints"):
    snt.LayerNorm(axis, True, True)


def test_bool_axis_is_an_int_like_in_sonnet():
  x = tf.reshape(tf.range(24.), [2, 3, 4])
  by_bool = snt.LayerNorm(True, True, True, name="ln_bool")(x)
  by_int = snt.LayerNorm(1, True, True, name="ln_int")(x)
  np.testing.assert_allclose(by_bool, by_int)


def test_axis_out_of_range():
  with pytest.raises(ValueError, match="'ln_range' normalizes over axis 3, "
                     "which a rank-2 input does not have"):
    snt.LayerNorm(3, True, True, name="ln_range")(_x((2, 3)))


def test_instance_norm_without_spatial_axes():
  with pytest.raises(ValueError, match="InstanceNorm 'in_flat' has no axis to "
                     "normalize over"):
    snt.InstanceNorm(True, True, name="in_flat")(_x((2, 3)))


def test_channel_mismatch():
  ln = snt.LayerNorm(-1, True, True, name="ln_ch")
  ln(_x((2, 3)))
  with pytest.raises(ValueError, match="LayerNorm 'ln_ch' was built for "
                     "channels 3, got 4"):
    ln(_x((2, 4)))


def test_rank_and_dtype_mismatch():
  ln = snt.LayerNorm(-1, True, True, name="ln_rank")
  ln(_x((2, 3)))
  with pytest.raises(ValueError, match="'ln_rank' expects a rank-2 input"):
    ln(_x((2, 2, 3)))
  with pytest.raises(TypeError, match="'ln_rank' was built for float32"):
    ln(_x((2, 3), dtype=np.float64))


def test_integer_input_rejected():
  with pytest.raises(TypeError, match="floating-point input"):
    snt.LayerNorm(-1, True, True)(tf.ones([2, 3], tf.int32))


def test_scale_passed_when_created():
  ln = snt.LayerNorm(-1, True, False, name="ln_own")
  with pytest.raises(ValueError, match="'ln_own' learns its own scale"):
    ln(_x((2, 3)), scale=tf.ones([3]))
  with pytest.raises(ValueError, match="learns its own offset"):
    snt.LayerNorm(-1, False, True)(_x((2, 3)), offset=tf.ones([3]))


@pytest.mark.parametrize("kwargs,match", [
    ({"create_scale": False, "scale_init": snt.initializers.Ones()},
     "LayerNorm: Cannot set `scale_init` if `create_scale=False`"),
    ({"create_offset": False, "offset_init": snt.initializers.Ones()},
     "LayerNorm: Cannot set `offset_init` if `create_offset=False`"),
    ({"eps": -1e-3}, "LayerNorm: eps must be a non-negative number"),
    ({"data_format": "HWC"}, "LayerNorm: Unable to extract channel "
     "information from 'HWC'. data_format must be"),
])
def test_bad_constructor_arguments(kwargs, match):
  arguments = {"axis": -1, "create_scale": True, "create_offset": True,
               **kwargs}
  with pytest.raises(ValueError, match=match):
    snt.LayerNorm(**arguments)


def test_instance_norm_bad_data_format():
  with pytest.raises(ValueError, match="InstanceNorm: Unable to extract channel information"):
    snt.InstanceNorm(True, True, data_format="bad")
