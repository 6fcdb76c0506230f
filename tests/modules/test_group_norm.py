"""Tests for sonnet_like/modules/group_norm.py."""

import numpy as np
import pytest
import sonnet
import tensorflow as tf

import sonnet_like as snt
from tests.modules import norm_common


_x = norm_common.normal_input


def _group_norm_nhwc(x, groups, eps=1e-5):
  """Reference: statistics over spatial axes and each group's channels."""
  n, c = x.shape[0], x.shape[-1]
  g = x.astype(np.float64).reshape(n, -1, groups, c // groups)
  mean = g.mean(axis=(1, 3), keepdims=True)
  var = g.var(axis=(1, 3), keepdims=True)
  return ((g - mean) / np.sqrt(var + eps)).reshape(x.shape)


@pytest.mark.parametrize("shape,groups", [((2, 3, 3, 8), 4), ((2, 5, 6), 3),
                                          ((3, 6), 2), ((2, 4), 4)])
def test_matches_numpy(shape, groups):
  x = _x(shape)
  gn = snt.GroupNorm(groups, create_scale=False, create_offset=False)
  np.testing.assert_allclose(gn(x), _group_norm_nhwc(x, groups), rtol=1e-4,
                             atol=1e-4)


def test_channels_first_equals_transposed_channels_last():
  x = _x((2, 3, 4, 6))
  last = snt.GroupNorm(3)(x)
  first = snt.GroupNorm(3, data_format="NCHW")(np.transpose(x, (0, 3, 1, 2)))
  np.testing.assert_allclose(np.transpose(first, (0, 2, 3, 1)), last,
                             rtol=1e-5, atol=1e-5)


def test_scale_and_offset_after_normalization():
  x = _x((2, 4))
  gn = snt.GroupNorm(2, scale_init=snt.initializers.Constant(3.),
                     offset_init=snt.initializers.Constant(1.), name="gn_so")
  np.testing.assert_allclose(gn(x), 3 * _group_norm_nhwc(x, 2) + 1,
                             rtol=1e-4, atol=1e-4)
  assert [v.name for v in gn.variables] == ["gn_so/offset:0", "gn_so/scale:0"]


def test_scale_and_offset_at_call_time():
  x = _x((2, 4))
  scale = _x((2, 4), 1)
  gn = snt.GroupNorm(2, create_scale=False, create_offset=False)
  np.testing.assert_allclose(gn(x, scale=scale, offset=2.),
                             _group_norm_nhwc(x, 2) * scale + 2., rtol=1e-4,
                             atol=1e-4)


@pytest.mark.parametrize("make", [
    lambda m: m.GroupNorm(2),
    lambda m: m.GroupNorm(4, axis=slice(2, None)),
    lambda m: m.GroupNorm(2, axis=[1, 3]),
    lambda m: m.GroupNorm(2, axis=-1),
    lambda m: m.GroupNorm(1, data_format="NCHW"),
    lambda m: m.GroupNorm(2, axis=(2, 3), data_format="NCHW", eps=1e-2),
])
def test_matches_dm_sonnet(make):
  norm_common.assert_matches_sonnet(make(snt), make(sonnet), _x((2, 4, 3, 4)))


def test_unknown_batch_and_spatial_in_tf_function():
  gn = snt.GroupNorm(2)
  f = tf.function(gn, input_signature=[tf.TensorSpec([None, None, 4])])
  x = _x((3, 5, 4))
  out = f(x)
  np.testing.assert_allclose(out, _group_norm_nhwc(x, 2), rtol=1e-4,
                             atol=1e-4)
  assert f.get_concrete_function().structured_outputs.shape.as_list() == [
      None, None, 4]


def test_stateless_group_norm_has_no_variables_as_in_sonnet():
  gn = snt.GroupNorm(2, create_scale=False, create_offset=False)
  gn(_x((2, 4)))
  with pytest.raises(ValueError, match="does not currently contain any"):
    gn.variables  # pylint: disable=pointless-statement


# Errors.


def test_channels_not_divisible_by_groups():
  with pytest.raises(ValueError, match="GroupNorm 'gn_split' cannot split 6 "
                     "channels into 4 groups"):
    snt.GroupNorm(4, name="gn_split")(_x((2, 6)))


def test_failed_build_can_be_retried_with_good_input():
  gn = snt.GroupNorm(4)
  with pytest.raises(ValueError):
    gn(_x((2, 6)))
  assert gn(_x((2, 8))).shape == [2, 8]
  assert gn.scale.shape == [8]


@pytest.mark.parametrize("groups", [0, -2, 1.5, "2", True])
def test_bad_groups(groups):
  with pytest.raises(ValueError, match="GroupNorm: groups must be a positive "
                     "int"):
    snt.GroupNorm(groups)


def test_bad_axis():
  with pytest.raises(ValueError, match="GroupNorm: `axis` should be an int"):
    snt.GroupNorm(2, axis="1")


def test_channel_mismatch():
  gn = snt.GroupNorm(2, name="gn_ch")
  gn(_x((2, 4)))
  with pytest.raises(ValueError, match="GroupNorm 'gn_ch' was built for "
                     "channels 4, got 6"):
    gn(_x((2, 6)))


def test_rank_mismatch():
  gn = snt.GroupNorm(2, name="gn_rank")
  gn(_x((2, 4)))
  with pytest.raises(ValueError, match="'gn_rank' expects a rank-2 input"):
    gn(_x((2, 3, 4)))


def test_rank1_input_rejected():
  with pytest.raises(ValueError, match="expects an input of rank >= 2"):
    snt.GroupNorm(2)(_x((4,)))


def test_scale_passed_when_created():
  with pytest.raises(ValueError, match="learns its own scale"):
    snt.GroupNorm(2)(_x((2, 4)), scale=tf.ones([4]))


def test_scale_init_without_scale():
  with pytest.raises(ValueError, match="GroupNorm: Cannot set `scale_init` "
                     "if `create_scale=False`"):
    snt.GroupNorm(2, create_scale=False, scale_init=snt.initializers.Ones())
