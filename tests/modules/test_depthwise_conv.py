"""Tests for DepthwiseConv2D."""

import math

import numpy as np
import pytest
import sonnet
import tensorflow as tf

import sonnet_like as snt
from tests.modules.test_conv import assert_unknown_spatial_size
from tests.modules.test_conv import channels_first
from tests.modules.test_conv import channels_last
from tests.modules.test_conv import np_conv_padded
from tests.modules.test_conv import random


def np_depthwise(x, w, stride, rate, padding):
  """Each channel `c` convolved with `w[..., c, :]`; outputs `c * M + m`."""
  per_channel = [np_conv_padded(x[..., c:c + 1], w[:, :, c:c + 1, :], stride,
                                rate, padding) for c in range(x.shape[-1])]
  return np.concatenate(per_channel, axis=-1)


_CASES = [
    # kernel, multiplier, stride, rate, padding
    (3, 1, 1, 1, "SAME"),
    ((3, 2), 2, 1, 1, "VALID"),
    (3, 3, 2, 1, "SAME"),
    (2, 1, 3, 1, "valid"),
    (3, 2, 1, 2, "SAME"),
    ((2, 3), 1, 1, (1, 2), "VALID"),
    (3, 2, (1, 2), 1, "SAME"),   # Unequal strides: the fallback path.
    ((3, 2), 1, (3, 2), 1, "SAME"),
    (3, 2, (2, 1), 1, "VALID"),
]


@pytest.mark.parametrize("kernel, multiplier, stride, rate, padding", _CASES)
@pytest.mark.parametrize("first", [False, True], ids=["last", "first"])
def test_matches_numpy(kernel, multiplier, stride, rate, padding, first):
  x = random((2, 8, 7, 3))
  module = snt.DepthwiseConv2D(kernel, channel_multiplier=multiplier,
                               stride=stride, rate=rate, padding=padding,
                               b_init=snt.initializers.RandomNormal(),
                               data_format="NCHW" if first else "NHWC")
  y = module(channels_first(x) if first else x)
  y = channels_last(y) if first else np.asarray(y)
  pair = lambda v: v if isinstance(v, tuple) else (v, v)
  expected = np_depthwise(x, module.w.numpy(), pair(stride), pair(rate),
                          padding.upper()) + module.b.numpy()
  assert y.shape == expected.shape
  np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("stride, padding", [(1, "SAME"), (2, "VALID"),
                                             (3, "SAME")])
def test_matches_raw_tensorflow(stride, padding):
  x = random((2, 9, 9, 4))
  module = snt.DepthwiseConv2D(3, channel_multiplier=2, stride=stride,
                               padding=padding, with_bias=False)
  y = module(x)
  expected = tf.nn.depthwise_conv2d(x, module.w, (1, stride, stride, 1),
                                    padding)
  np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("kwargs", [
    dict(), dict(channel_multiplier=3, padding="VALID"), dict(stride=2),
    dict(rate=2)], ids=["default", "multiplier", "stride", "rate"])
def test_matches_sonnet(kwargs):
  """Same weights give the same outputs as dm-sonnet 2.0.2."""
  x = tf.constant(random((2, 8, 8, 3)))
  ours = snt.DepthwiseConv2D(3, **kwargs)
  theirs = sonnet.DepthwiseConv2D(3, **kwargs)
  ours(x)
  theirs(x)
  assert ours.w.shape == theirs.w.shape and ours.b.shape == theirs.b.shape
  assert ours.stride == theirs.stride and ours.rate == theirs.rate
  theirs.w.assign(ours.w)
  ours.b.assign(tf.random.normal(ours.b.shape))
  theirs.b.assign(ours.b)
  np.testing.assert_allclose(ours(x), theirs(x), rtol=1e-5, atol=1e-5)


def test_channels_first_matches_sonnet_channels_last():
  x = random((2, 6, 6, 3))
  ours = snt.DepthwiseConv2D(3, 2, stride=2, data_format="NCHW")
  theirs = sonnet.DepthwiseConv2D(3, 2, stride=2)
  ours(channels_first(x))
  theirs(tf.constant(x))
  theirs.w.assign(ours.w)
  assert ours.stride == (1, 1, 2, 2)
  np.testing.assert_allclose(channels_last(ours(channels_first(x))),
                             theirs(tf.constant(x)), rtol=1e-5, atol=1e-5)


def test_variables_and_initializer():
  tf.random.set_seed(0)
  module = snt.DepthwiseConv2D((5, 3), channel_multiplier=4, name="dw")
  module(tf.zeros([1, 6, 6, 20]))
  assert sorted(v.name for v in module.variables) == ["dw/b:0", "dw/w:0"]
  assert module.w.shape == (5, 3, 20, 4) and module.b.shape == (80,)
  assert module.input_channels == 20
  # Sonnet's fan-in is the kernel area only.
  assert module.w_init.stddev == pytest.approx(1 / math.sqrt(15))
  assert np.abs(module.w.numpy()).max() <= 2 / math.sqrt(15) + 1e-6


def test_no_bias_and_default_name():
  module = snt.DepthwiseConv2D(3, with_bias=False)
  module(tf.zeros([1, 4, 4, 2]))
  assert [v.name.split("/")[-1] for v in module.variables] == ["w:0"]
  assert module.name.startswith("depthwise_conv2_d")


@pytest.mark.parametrize("dtype", [tf.float16, tf.float64])
def test_dtypes(dtype):
  module = snt.DepthwiseConv2D(3)
  y = module(tf.ones([1, 4, 4, 2], dtype))
  assert y.dtype == dtype and module.w.dtype == dtype


def test_unknown_spatial_size_with_unequal_strides():
  assert_unknown_spatial_size(snt.DepthwiseConv2D(3, stride=(2, 1)),
                              random((1, 7, 6, 2)), (1, 4, 6, 2))


# --- Bad input. ---


def test_wrong_channel_count():
  module = snt.DepthwiseConv2D(3, name="dw")
  module(tf.zeros([1, 5, 5, 3]))
  with pytest.raises(ValueError, match="DepthwiseConv2D 'dw[_0-9]*' was built "
                     "for input channels 3, got 6"):
    module(tf.zeros([1, 5, 5, 6]))


def test_wrong_rank():
  module = snt.DepthwiseConv2D(3, data_format="NCHW")
  with pytest.raises(ValueError, match=r"expects a rank-4 input \[N, C, H, "
                     r"W\], got shape \(1, 5, 3\)"):
    module(tf.zeros([1, 5, 3]))


def test_bad_dtypes():
  module = snt.DepthwiseConv2D(3)
  with pytest.raises(TypeError, match="expects a float16, bfloat16, float32 "
                     "or float64 input. Expected floating point type, got uint8"):
    module(tf.zeros([1, 4, 4, 3], tf.uint8))
  module(tf.zeros([1, 4, 4, 3]))
  with pytest.raises(TypeError, match="was built for float32 inputs, got "
                     "float64"):
    module(tf.zeros([1, 4, 4, 3], tf.float64))


def test_unknown_channels_at_build():
  module = snt.DepthwiseConv2D(3)
  f = tf.function(module, input_signature=[tf.TensorSpec([1, 4, 4, None])])
  with pytest.raises(ValueError, match="needs the number of input channels"):
    f(tf.zeros([1, 4, 4, 3]))


def test_kernel_larger_than_input():
  module = snt.DepthwiseConv2D(3, rate=2, padding="VALID")
  with pytest.raises(ValueError, match=r"needs spatial sizes of at least "
                     r"\(5, 5\).*got spatial sizes \(4, 9\)"):
    module(tf.zeros([1, 4, 9, 3]))


@pytest.mark.parametrize("kwargs, match", [
    (dict(stride=2, rate=2), "DepthwiseConv2D: stride must be 1 when rate > 1"),
    (dict(padding="FULL"), "padding must be 'SAME' or 'VALID', got 'FULL'."),
    (dict(padding=snt.pad.same), "padding must be 'SAME' or 'VALID'"),
    (dict(kernel_shape=(3, 3, 3)), "kernel_shape must be a positive int or a "
     "sequence of 2 positive ints"),
    (dict(channel_multiplier=0), "channel_multiplier must be a positive int, "
     "got 0."),
    (dict(data_format="NCDHW"), "data_format must be one of"),
    (dict(with_bias=False, b_init=snt.initializers.Zeros()),
     "b_init must be None when with_bias=False"),
])
def test_constructor_errors(kwargs, match):
  with pytest.raises(ValueError, match=match):
    snt.DepthwiseConv2D(**{"kernel_shape": 3, **kwargs})
