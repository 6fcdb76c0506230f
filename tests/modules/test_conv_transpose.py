"""Tests for Conv1DTranspose, Conv2DTranspose, Conv3DTranspose."""

import math

import numpy as np
import pytest
import sonnet
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.modules import conv_transpose
from tests.modules.test_conv import assert_unknown_spatial_size
from tests.modules.test_conv import channels_first
from tests.modules.test_conv import channels_last
from tests.modules.test_conv import random
from tests.modules.test_conv import same_pads

_CLASSES = {1: snt.Conv1DTranspose, 2: snt.Conv2DTranspose,
            3: snt.Conv3DTranspose}
_SONNET = {1: sonnet.Conv1DTranspose, 2: sonnet.Conv2DTranspose,
           3: sonnet.Conv3DTranspose}
_FIRST = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


def np_conv_transpose(x, w, stride, rate, out_sizes, padding):
  """Gradient of a convolution, `x` [B, *I, Cin], `w` [*K, Cout, Cin].

  Each input element adds `x * w[tap]` at output position
  `i * stride + tap * rate - pad_before`, where `pad_before` is what the
  forward convolution (output -> input) pads before.
  """
  n = x.ndim - 2
  kernel = w.shape[:n]
  eff = [(k - 1) * r + 1 for k, r in zip(kernel, rate)]
  sizes = x.shape[1:-1]
  before = [0 if padding == "VALID" else same_pads(o, e, s)[0]
            for o, e, s in zip(out_sizes, eff, stride)]
  full = [max((i - 1) * s + e, b + o)
          for i, s, e, b, o in zip(sizes, stride, eff, before, out_sizes)]
  buf = np.zeros([x.shape[0]] + full + [w.shape[-2]])
  for tap in np.ndindex(*kernel):
    window = tuple(slice(t * r, t * r + (i - 1) * s + 1, s)
                   for t, r, i, s in zip(tap, rate, sizes, stride))
    buf[(slice(None),) + window] += np.einsum("b...i,oi->b...o", x, w[tap])
  crop = tuple(slice(b, b + o) for b, o in zip(before, out_sizes))
  return buf[(slice(None),) + crop]


def _formula(size, stride, kernel, rate, padding):
  """Sonnet's default output size."""
  eff = (kernel - 1) * rate + 1
  return size * stride + (eff - 1 if padding == "VALID" else 0)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("stride", [1, 2, 3])
@pytest.mark.parametrize("kernel, rate", [(1, 1), (3, 1), (2, 1), (3, 2)])
@pytest.mark.parametrize("n", [1, 2])
def test_default_output_shape_and_values(n, kernel, rate, stride, padding):
  sizes = (4, 5)[:n]
  x = random((2,) + sizes + (3,))
  module = _CLASSES[n](2, kernel, stride=stride, rate=rate, padding=padding,
                       b_init=snt.initializers.RandomNormal())
  y = module(x)
  out = [_formula(s, stride, kernel, rate, padding) for s in sizes]
  assert y.shape == (2, *out, 2)
  expected = np_conv_transpose(x, module.w.numpy(), (stride,) * n,
                               (rate,) * n, out, padding) + module.b.numpy()
  np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
def test_3d_output_shape_and_values(padding):
  x = random((1, 3, 4, 2, 2))
  module = snt.Conv3DTranspose(2, (2, 3, 1), stride=(1, 2, 3),
                               rate=(2, 1, 1), padding=padding)
  y = module(x)
  out = [_formula(s, st, k, r, padding)
         for s, st, k, r in zip((3, 4, 2), (1, 2, 3), (2, 3, 1), (2, 1, 1))]
  assert y.shape == (1, *out, 2)
  expected = np_conv_transpose(x, module.w.numpy(), (1, 2, 3), (2, 1, 1), out,
                               padding)
  np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("padding, output_shape", [
    ("SAME", (9, 10)), ("SAME", (10, 9)), ("VALID", (9, 10)),
    ("VALID", (10, 9))])
def test_explicit_output_shape(padding, output_shape):
  x = random((2, 5, 5, 3)) if padding == "SAME" else random((2, 4, 4, 3))
  module = snt.Conv2DTranspose(2, 3, output_shape=output_shape, stride=2,
                               padding=padding)
  y = module(x)
  assert y.shape == (2, *output_shape, 2)
  expected = np_conv_transpose(x, module.w.numpy(), (2, 2), (1, 1),
                               output_shape, padding)
  np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("output_shape", [7, [7], tf.TensorShape([7])])
def test_output_shape_forms(output_shape):
  module = snt.Conv1DTranspose(2, 3, output_shape=output_shape, stride=2)
  assert module.output_shape == (7,)
  assert module(tf.zeros([1, 4, 1])).shape == (1, 7, 2)


@pytest.mark.parametrize("padding", ["SAME", "VALID"])
@pytest.mark.parametrize("stride", [1, 2])
def test_matches_raw_tensorflow(padding, stride):
  x = random((2, 5, 6, 3))
  module = snt.Conv2DTranspose(4, (3, 2), stride=stride, padding=padding,
                               with_bias=False)
  y = module(x)
  reference = tf.nn.conv_transpose(x, module.w, y.shape, strides=stride,
                                   padding=padding)
  np.testing.assert_allclose(y, reference, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("kwargs", [
    dict(), dict(stride=2, padding="VALID"), dict(rate=2),
    dict(stride=2, output_shape="odd")], ids=["default", "valid_stride",
                                              "rate", "output_shape"])
def test_matches_sonnet(n, kwargs):
  """Same weights give the same outputs as dm-sonnet 2.0.2."""
  kwargs = dict(kwargs)
  if kwargs.get("output_shape") == "odd":
    kwargs["output_shape"] = (9,) * n
  x = tf.constant(random((2,) + (5,) * n + (3,)))
  ours = _CLASSES[n](4, 3, **kwargs)
  theirs = _SONNET[n](4, 3, **kwargs)
  ours(x)
  try:
    theirs(x)
  except tf.errors.InvalidArgumentError:
    # Without oneDNN, TensorFlow's CPU kernels have no dilated transposed
    # convolution, which dm-sonnet calls directly.
    pytest.skip("dm-sonnet's dilated transposed convolution needs oneDNN.")
  assert ours.w.shape == theirs.w.shape and ours.b.shape == theirs.b.shape
  theirs.w.assign(ours.w)
  ours.b.assign(tf.random.normal([4]))
  theirs.b.assign(ours.b)
  np.testing.assert_allclose(ours(x), theirs(x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_channels_first(n):
  x = random((2,) + (4,) * n + (3,))
  last = _CLASSES[n](2, 3, stride=2)
  first = _CLASSES[n](2, 3, stride=2, data_format=_FIRST[n])
  y_last = last(x)
  first(channels_first(x))
  first.w.assign(last.w)
  y_first = first(channels_first(x))
  assert y_first.shape == (2, 2) + (8,) * n
  np.testing.assert_allclose(channels_last(y_first), y_last, rtol=1e-5,
                             atol=1e-5)


def test_dilate():
  w = random((2, 3, 1, 1))
  dilated = conv_transpose.dilate(tf.constant(w), (3, 2)).numpy()
  expected = np.zeros((4, 5, 1, 1), np.float32)
  expected[::3, ::2] = w
  np.testing.assert_array_equal(dilated, expected)
  assert conv_transpose.dilate(tf.constant(w), (1, 1)).shape == w.shape


def test_strided_dilated():
  """stride > 1 with rate > 1: TensorFlow's CPU kernels have none."""
  x = random((1, 4, 5, 2))
  module = snt.Conv2DTranspose(3, 2, stride=2, rate=2)
  y = module(x)
  expected = np_conv_transpose(x, module.w.numpy(), (2, 2), (2, 2), (8, 10),
                               "SAME")
  np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)


def test_unknown_spatial_size():
  assert_unknown_spatial_size(
      snt.Conv2DTranspose(2, 3, stride=2, padding="VALID"),
      random((1, 4, 3, 3)), (1, 10, 8, 2))


def test_variables_and_initializer():
  tf.random.set_seed(0)
  module = snt.Conv2DTranspose(50, (3, 2), name="up")
  module(tf.zeros([1, 4, 4, 7]))
  assert sorted(v.name for v in module.variables) == ["up/b:0", "up/w:0"]
  assert module.w.shape == (3, 2, 50, 7) and module.b.shape == (50,)
  fan_in = 3 * 2 * 7
  assert module.w_init.stddev == pytest.approx(1 / math.sqrt(fan_in))
  assert np.abs(module.w.numpy()).max() <= 2 / math.sqrt(fan_in) + 1e-6
  assert module.input_channels == 7


def test_no_bias_and_default_names():
  module = snt.Conv3DTranspose(2, 1, with_bias=False)
  module(tf.zeros([1, 2, 2, 2, 1]))
  assert [v.name.split("/")[-1] for v in module.variables] == ["w:0"]
  assert module.name.startswith("conv3_d_transpose")
  assert snt.Conv1DTranspose(1, 1).name.startswith("conv1_d_transpose")


@pytest.mark.parametrize("dtype", [tf.float16, tf.float64])
def test_dtypes(dtype):
  module = snt.Conv1DTranspose(2, 3, stride=2)
  y = module(tf.ones([1, 4, 3], dtype))
  assert y.dtype == dtype and module.w.dtype == dtype


# --- Bad input. ---


def test_output_shape_inconsistent_with_input():
  module = snt.Conv2DTranspose(2, 3, output_shape=(9, 10), stride=2,
                               name="up")
  with pytest.raises(ValueError, match=r"Conv2DTranspose 'up[_0-9]*' cannot "
                     r"produce "
                     r"spatial output shape \(9, 10\) from spatial input "
                     r"sizes \(4, 5\).*needs input sizes \(5, 5\)"):
    module(tf.zeros([1, 4, 5, 3]))


def test_output_shape_inconsistent_unknown_until_run():
  module = snt.Conv1DTranspose(2, 3, output_shape=9, stride=2, name="up")
  f = tf.function(module, input_signature=[tf.TensorSpec([1, None, 3])])
  assert f(tf.zeros([1, 5, 3])).shape == (1, 9, 2)
  with pytest.raises(tf.errors.InvalidArgumentError, match="up.* cannot "
                     r"produce spatial output shape \(9,\)"):
    f(tf.zeros([1, 4, 3]))


def test_wrong_channel_count():
  module = snt.Conv2DTranspose(2, 3, name="up")
  module(tf.zeros([1, 4, 4, 3]))
  with pytest.raises(ValueError, match="Conv2DTranspose 'up[_0-9]*' was built "
                     "for input channels 3, got 6"):
    module(tf.zeros([1, 4, 4, 6]))


def test_wrong_rank():
  module = snt.Conv3DTranspose(2, 3, name="up")
  with pytest.raises(ValueError, match=r"expects a rank-5 input \[N, D, H, W, "
                     r"C\], got shape \(1, 4, 4, 3\)"):
    module(tf.zeros([1, 4, 4, 3]))


def test_bad_dtypes():
  module = snt.Conv1DTranspose(2, 3, name="up")
  with pytest.raises(TypeError, match="expects a float16, bfloat16, float32 "
                     "or float64 input. Expected floating point type, got "
                     "int64"):
    module(tf.zeros([1, 4, 3], tf.int64))
  module(tf.zeros([1, 4, 3]))
  with pytest.raises(TypeError, match="was built for float32 inputs, got "
                     "float16"):
    module(tf.zeros([1, 4, 3], tf.float16))


def test_unknown_channels_at_build():
  module = snt.Conv1DTranspose(2, 3)
  f = tf.function(module, input_signature=[tf.TensorSpec([1, 4, None])])
  with pytest.raises(ValueError, match="needs the number of input channels"):
    f(tf.zeros([1, 4, 3]))


@pytest.mark.parametrize("kwargs, match", [
    (dict(padding="FULL"), "Conv2DTranspose only takes string padding, "
     "please provide either `SAME` or `VALID`, got 'FULL'."),
    (dict(padding=snt.pad.same), "only takes string padding"),
    (dict(kernel_shape=(1, 2, 3)), "kernel_shape must be a positive int or "
     "a sequence of 2 positive ints"),
    (dict(output_shape=(4, 4, 4)), "The output_shape must be of length 2 "
     r"but instead was 3 \(output_shape=\(4, 4, 4\)\)."),
    (dict(output_shape=(2, 8), padding="VALID"), "output_shape must be at "
     r"least the effective kernel size \(3, 3\) with VALID padding"),
    (dict(stride=0), "stride must be a positive int"),
    (dict(rate=(1, -1)), "rate must be a positive int"),
    (dict(data_format="NDHWC"), "data_format must be one of"),
    (dict(output_channels=-2), "output_channels must be a positive int"),
    (dict(with_bias=False, b_init=snt.initializers.Zeros()),
     "b_init must be None when with_bias=False"),
])
def test_constructor_errors(kwargs, match):
  with pytest.raises(ValueError, match=match):
    snt.Conv2DTranspose(**{"output_channels": 2, "kernel_shape": 3, **kwargs})
