"""Tests for Conv1D, Conv2D, Conv3D and their ConvND base.

The NumPy references here (`np_conv`, `same_pads`) are also used by the
transposed and depthwise convolution tests.
"""

import math

import numpy as np
import pytest
import sonnet
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.modules import conv as conv_lib

_CLASSES = {1: snt.Conv1D, 2: snt.Conv2D, 3: snt.Conv3D}
_SONNET = {1: sonnet.Conv1D, 2: sonnet.Conv2D, 3: sonnet.Conv3D}
_LAST = {1: "NWC", 2: "NHWC", 3: "NDHWC"}
_FIRST = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


# --- NumPy references (channels-last). ---


def same_pads(size: int, kernel: int, stride: int) -> tuple[int, int]:
  """TensorFlow's SAME padding of one dimension."""
  out = -(-size // stride)
  total = max((out - 1) * stride + kernel - size, 0)
  return total // 2, total - total // 2


def np_conv(x, w, stride, rate, pads):
  """Cross-correlation of `x` [B, *S, I] with `w` [*K, I, O], pads given."""
  n = x.ndim - 2
  xp = np.pad(x, [(0, 0)] + list(pads) + [(0, 0)])
  kernel = w.shape[:n]
  eff = [(k - 1) * r + 1 for k, r in zip(kernel, rate)]
  out = [(xp.shape[1 + i] - eff[i]) // stride[i] + 1 for i in range(n)]
  y = np.zeros([x.shape[0]] + out + [w.shape[-1]])
  for tap in np.ndindex(*kernel):
    window = tuple(slice(t * r, t * r + (o - 1) * s + 1, s)
                   for t, r, o, s in zip(tap, rate, out, stride))
    y += np.einsum("b...i,io->b...o", xp[(slice(None),) + window], w[tap])
  return y


def np_conv_padded(x, w, stride, rate, padding):
  """`np_conv` with "SAME", "VALID" or a per-dimension padding function."""
  n = x.ndim - 2
  eff = [(k - 1) * r + 1 for k, r in zip(w.shape[:n], rate)]
  if padding == "VALID":
    pads = [(0, 0)] * n
  elif padding == "SAME":
    pads = [same_pads(x.shape[1 + i], eff[i], stride[i]) for i in range(n)]
  else:
    pads = [tuple(f(e)) for f, e in zip(padding, eff)]
  return np_conv(x, w, stride, rate, pads)


def channels_first(x):
  return np.moveaxis(np.asarray(x), -1, 1)


def channels_last(x):
  return np.moveaxis(np.asarray(x), 1, -1)


def random(shape, seed=0, dtype=np.float32):
  return np.random.default_rng(seed).normal(size=shape).astype(dtype)


def assert_unknown_spatial_size(module, x, shape):
  """Traced for `[None, None, None, channels]` inputs, `module` gives on
  `x` what it gives eagerly, of shape `shape`."""
  f = tf.function(module, input_signature=[
      tf.TensorSpec([None, None, None, x.shape[-1]])])
  np.testing.assert_allclose(f(x), module(x), rtol=1e-6)
  assert f(x).shape == shape


# --- Values. ---

_CASES = [
    # n, input spatial, kernel, stride, rate, padding
    (1, (9,), 3, 1, 1, "SAME"),
    (1, (9,), 4, 2, 1, "VALID"),
    (1, (10,), 3, 1, 3, "SAME"),
    (1, (7,), 2, 3, 1, "same"),
    (2, (7, 8), (3, 2), 1, 1, "SAME"),
    (2, (7, 8), 3, (2, 1), 1, "VALID"),
    (2, (9, 9), (2, 3), 2, 1, "SAME"),
    (2, (9, 10), 3, 1, (2, 1), "VALID"),
    (2, (9, 10), 2, 1, 2, "SAME"),
    (3, (5, 6, 4), 3, 1, 1, "SAME"),
    (3, (5, 6, 7), (2, 3, 1), (1, 2, 3), 1, "VALID"),
    (3, (6, 5, 5), 2, 1, 2, "SAME"),
]


def _as_tuple(value, n):
  return tuple(value) if isinstance(value, tuple) else (value,) * n


@pytest.mark.parametrize("n, spatial, kernel, stride, rate, padding", _CASES)
@pytest.mark.parametrize("first", [False, True], ids=["last", "first"])
def test_matches_numpy(n, spatial, kernel, stride, rate, padding, first):
  x = random((2,) + spatial + (3,))
  module = _CLASSES[n](4, kernel, stride=stride, rate=rate, padding=padding,
                       b_init=snt.initializers.RandomNormal(),
                       data_format=(_FIRST if first else _LAST)[n])
  y = module(channels_first(x) if first else x)
  y = channels_last(y) if first else np.asarray(y)
  expected = np_conv_padded(x, module.w.numpy(), _as_tuple(stride, n),
                            _as_tuple(rate, n), padding.upper())
  expected += module.b.numpy()
  np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("padding", [
    snt.pad.causal, snt.pad.full, snt.pad.reverse_causal, snt.pad.same,
    [snt.pad.causal], [snt.pad.full, snt.pad.valid],
    (snt.pad.reverse_causal, snt.pad.same)
], ids=["causal", "full", "reverse_causal", "same", "list1", "full_valid",
        "tuple"])
@pytest.mark.parametrize("first", [False, True], ids=["last", "first"])
def test_padding_functions(padding, first):
  x = random((2, 6, 7, 3))
  module = snt.Conv2D(2, (3, 2), rate=(1, 2), padding=padding,
                      data_format="NCHW" if first else "NHWC")
  y = module(channels_first(x) if first else x)
  y = channels_last(y) if first else np.asarray(y)
  functions = (list(padding) * 2)[-2:] if isinstance(
      padding, (list, tuple)) else [padding] * 2
  expected = np_conv_padded(x, module.w.numpy(), (1, 1), (1, 2), functions)
  np.testing.assert_allclose(y, expected, rtol=1e-4, atol=1e-4)
  assert module.conv_padding == "VALID" and module.padding_func == padding


def test_causal_conv1d_sees_no_future():
  module = snt.Conv1D(1, 3, rate=2, padding=snt.pad.causal)
  x = random((1, 12, 1))
  y = module(x)
  x2 = x.copy()
  x2[:, 7:] += 1.
  np.testing.assert_array_equal(y[:, :7], module(x2)[:, :7])


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("case", ["default", "valid_stride", "rate", "pad_fn"])
def test_matches_sonnet(n, case):
  """Same weights give the same outputs as dm-sonnet 2.0.2."""
  kwargs = {"default": dict(),
            "valid_stride": dict(stride=2, padding="VALID"),
            "rate": dict(rate=2),
            "pad_fn": dict(padding=snt.pad.causal)}[case]
  theirs_kwargs = dict(kwargs)
  if case == "pad_fn":
    theirs_kwargs["padding"] = sonnet.pad.causal
  x = random((2,) + (7,) * n + (3,))
  ours = _CLASSES[n](4, 3, **kwargs)
  theirs = _SONNET[n](4, 3, **theirs_kwargs)
  y_ours = ours(x)
  theirs(x)
  theirs.w.assign(ours.w)
  theirs.b.assign(tf.random.normal([4]))
  ours.b.assign(theirs.b)
  np.testing.assert_allclose(y_ours.shape, theirs(x).shape)
  np.testing.assert_allclose(ours(x), theirs(x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_channels_first_matches_sonnet_channels_last(n):
  x = random((2,) + (6,) * n + (3,))
  ours = _CLASSES[n](4, 3, stride=2, data_format=_FIRST[n])
  theirs = _SONNET[n](4, 3, stride=2)
  ours(channels_first(x))
  theirs(x)
  theirs.w.assign(ours.w)
  np.testing.assert_allclose(channels_last(ours(channels_first(x))),
                             theirs(x), rtol=1e-5, atol=1e-5)


# --- Variables. ---


@pytest.mark.parametrize("n, first", [(1, False), (2, False), (2, True),
                                      (3, True)])
def test_variables(n, first):
  name = f"conv_{n}d_{'first' if first else 'last'}"
  module = _CLASSES[n](5, 3, name=name, data_format=(_FIRST if first else
                                                      _LAST)[n])
  shape = (2, 4) + (6,) * n if first else (2,) + (6,) * n + (4,)
  module(tf.zeros(shape))
  assert sorted(v.name for v in module.variables) == [f"{name}/b:0",
                                                      f"{name}/w:0"]
  assert module.w.shape == (3,) * n + (4, 5)
  assert module.b.shape == (5,)
  assert module.input_channels == 4 and module.output_channels == 5
  np.testing.assert_array_equal(module.b, np.zeros(5))


def test_no_bias():
  module = snt.Conv2D(2, 3, with_bias=False, name="nobias")
  x = random((1, 5, 5, 3))
  y = module(x)
  assert [v.name for v in module.variables] == ["nobias/w:0"]
  np.testing.assert_allclose(
      y, np_conv_padded(x, module.w.numpy(), (1, 1), (1, 1), "SAME"),
      rtol=1e-4, atol=1e-5)


def test_default_names_match_sonnet():
  assert snt.Conv1D(1, 1).name.startswith("conv1_d")
  assert snt.Conv2D(1, 1).name.startswith("conv2_d")
  assert snt.Conv3D(1, 1).name.startswith("conv3_d")


def test_default_initializer():
  tf.random.set_seed(0)
  module = snt.Conv2D(64, (5, 3))
  module(tf.zeros([1, 8, 8, 6]))
  fan_in = 5 * 3 * 6
  assert isinstance(module.w_init, snt.initializers.TruncatedNormal)
  assert module.w_init.stddev == pytest.approx(1 / math.sqrt(fan_in))
  w = module.w.numpy()
  bound = 2 / math.sqrt(fan_in)
  assert np.abs(w).max() <= bound + 1e-6
  # A normal truncated at two stddevs has 0.88 of the stddev.
  assert w.std() == pytest.approx(0.88 / math.sqrt(fan_in), rel=0.1)


def test_custom_initializers():
  module = snt.Conv1D(2, 2, w_init=snt.initializers.Ones(),
                      b_init=snt.initializers.Constant(0.5))
  y = module(tf.ones([1, 3, 2]))
  # Each output sums 2 taps x 2 channels of ones, plus 0.5 (SAME pads after).
  np.testing.assert_allclose(y[0, :, 0], [4.5, 4.5, 2.5])


def test_sonnet_attributes():
  module = snt.Conv2D(3, [2, 3], stride=2, rate=1, padding="same")
  assert module.kernel_shape == [2, 3]
  assert module.stride == 2 and module.rate == 1
  assert module.conv_padding == "SAME" and module.padding_func is None
  assert module.data_format == "NHWC" and module.with_bias


@pytest.mark.parametrize("dtype", [tf.float16, tf.bfloat16, tf.float64])
def test_dtypes(dtype):
  module = snt.Conv2D(2, 3)
  x = tf.cast(random((1, 5, 5, 3)), dtype)
  y = module(x)
  assert y.dtype == module.w.dtype == module.b.dtype == dtype
  expected = np_conv_padded(tf.cast(x, tf.float64).numpy(),
                            tf.cast(module.w, tf.float64).numpy(), (1, 1),
                            (1, 1), "SAME")
  tol = 1e-10 if dtype == tf.float64 else 1e-1
  np.testing.assert_allclose(tf.cast(y, tf.float64), expected, rtol=tol,
                             atol=tol)


def test_gradients():
  module = snt.Conv2D(2, 3, stride=2)
  x = tf.constant(random((2, 6, 6, 3)))
  with tf.GradientTape() as tape:
    tape.watch(x)
    loss = tf.reduce_sum(module(x) ** 2)
  grads = tape.gradient(loss, [x] + list(module.trainable_variables))
  assert all(g is not None and g.shape == v.shape
             for g, v in zip(grads, [x] + list(module.trainable_variables)))


def test_unknown_spatial_size():
  assert_unknown_spatial_size(snt.Conv2D(2, 3, padding="VALID"),
                              random((1, 5, 7, 3)), (1, 3, 5, 2))


# --- Bad input. ---


def test_wrong_channel_count():
  module = snt.Conv2D(4, 3, name="conv2d")
  module(tf.zeros([1, 5, 5, 3]))
  # dm-sonnet silently runs a grouped convolution here.
  with pytest.raises(ValueError, match=r"Conv2D 'conv2d' was built for input "
                     r"channels 3, got 6"):
    module(tf.zeros([1, 5, 5, 6]))


def test_wrong_channel_count_channels_first():
  module = snt.Conv1D(4, 3, data_format="NCW", name="c")
  module(tf.zeros([1, 3, 5]))
  with pytest.raises(ValueError, match="built for input channels 3, got 5"):
    module(tf.zeros([1, 5, 3]))


def test_wrong_channel_count_unknown_until_run():
  module = snt.Conv2D(4, 3, name="late")
  module(tf.zeros([1, 5, 5, 3]))
  f = tf.function(module, input_signature=[tf.TensorSpec([1, 5, 5, None])])
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match="Conv2D .*late.* was built for input channels 3, "
                     "got a different size"):
    f(tf.zeros([1, 5, 5, 6]))


@pytest.mark.parametrize("shape", [(5, 5, 3), (1, 1, 5, 5, 3)])
def test_wrong_rank(shape):
  module = snt.Conv2D(4, 3, name="r")
  with pytest.raises(ValueError, match=r"Conv2D 'r[_0-9]*' expects a rank-4 "
                     r"input \[N, H, W, C\], got shape"):
    module(tf.zeros(shape))


@pytest.mark.parametrize("data_format, fix, shape", [
    ("NHWC", "x[..., None]", "(5, 8, 8, 1)"),
    ("NCHW", "x[:, None]", "(5, 1, 8, 8)")])
def test_images_without_a_channel_axis_get_the_fix(data_format, fix, shape):
  module = snt.Conv2D(4, 3, data_format=data_format, name="c")
  with pytest.raises(ValueError) as caught:
    module(tf.zeros([5, 8, 8]))
  message = str(caught.value)
  assert message.count("(5, 8, 8)") == 1, message  # The shape, said once.
  assert message.endswith(f"(rank 3; it must have rank 4). If it has one "
                          f"channel, add the channel axis: {fix} has shape "
                          f"{shape}."), message


def test_wrong_rank_after_build():
  module = snt.Conv1D(4, 3, name="r1")
  module(tf.zeros([1, 5, 3]))
  with pytest.raises(ValueError, match=r"rank-3 input \[N, W, C\]"):
    module(tf.zeros([1, 5, 5, 3]))


@pytest.mark.parametrize("dtype", [tf.int32, tf.complex64, tf.bool])
def test_unsupported_dtype(dtype):
  module = snt.Conv2D(4, 3, name="d")
  with pytest.raises(TypeError, match=f"Conv2D 'd[_0-9]*' expects a float16, "
                     f"bfloat16, float32 or float64 input. Expected floating "
                     f"point type, got {dtype.name}"):
    module(tf.zeros([1, 5, 5, 3], dtype))
  assert not hasattr(module, "w")


def test_dtype_differs_from_build():
  module = snt.Conv2D(4, 3, name="d")
  module(tf.zeros([1, 5, 5, 3]))
  with pytest.raises(TypeError, match="Conv2D 'd[_0-9]*' was built for float32 "
                     "inputs, got float64"):
    module(tf.zeros([1, 5, 5, 3], tf.float64))


def test_unknown_channels_at_build():
  module = snt.Conv2D(4, 3, name="u")
  f = tf.function(module, input_signature=[tf.TensorSpec([None] * 4)])
  with pytest.raises(ValueError, match="needs the number of input channels "
                     r"\(axis -1\) when it is built.*Call the module once on "
                     "an example input"):
    f(tf.zeros([1, 5, 5, 3]))


@pytest.mark.parametrize("module, spatial", [
    (lambda: snt.Conv2D(2, 3, padding="VALID", name="small"), (2, 5)),
    (lambda: snt.Conv1D(2, 3, rate=2, padding="VALID", name="small"), (4,)),
    (lambda: snt.Conv2D(2, 4, padding=snt.pad.valid, name="small"), (5, 3)),
])
def test_kernel_larger_than_input(module, spatial):
  """With oneDNN TensorFlow returns a wrongly shaped tensor here."""
  with pytest.raises(ValueError, match="'small[_0-9]*' needs spatial sizes of "
                     "at least"):
    module()(tf.zeros((1,) + spatial + (3,)))


def test_kernel_larger_than_input_unknown_until_run():
  module = snt.Conv2D(2, 3, padding="VALID", name="small")
  f = tf.function(module, input_signature=[tf.TensorSpec([1, None, None, 3])])
  f(tf.zeros([1, 3, 3, 3]))
  with pytest.raises(tf.errors.InvalidArgumentError, match="small.* needs "
                     r"spatial sizes of at least \(3, 3\)"):
    f(tf.zeros([1, 2, 6, 3]))


def test_bad_padding_function_output():
  module = snt.Conv1D(2, 3, padding=lambda k: [-1, 0])
  with pytest.raises(ValueError, match=r"Conv1D: padding function .* must "
                     r"return two non-negative ints \[before, after\], got "
                     r"\[-1, 0\]"):
    module(tf.zeros([1, 5, 3]))


@pytest.mark.parametrize("kwargs, match", [
    (dict(kernel_shape=(3, 3, 3)), "Conv2D: kernel_shape must be a positive "
     r"int or a sequence of 2 positive ints: kernel_shape must be a scalar "
     r"or sequence of length 1 or sequence of length 2, got \(3, 3, 3\)."),
    (dict(kernel_shape=0), "kernel_shape must be a positive int"),
    (dict(stride=(1, 0)), "stride must be a positive int"),
    (dict(rate=1.5), "rate must be a positive int"),
    (dict(stride=2, rate=(1, 2)), r"Conv2D: stride must be 1 when rate > 1 "
     r".*got stride=2 and rate=\(1, 2\)."),
    (dict(padding="CAUSAL"), "Conv2D: padding must be 'SAME', 'VALID', a "
     "padding function such as snt.pad.causal, or a sequence of 2 of them, "
     "got 'CAUSAL'."),
    (dict(padding=[snt.pad.same] * 3), "a sequence of 2 of them"),
    (dict(padding=3), "padding must be 'SAME', 'VALID'"),
    (dict(data_format="NCW"), r"Conv2D: data_format must be one of "
     r"\['NHWC', 'NCHW'\], got 'NCW'."),
    (dict(data_format="channels_last"), "data_format must be one of"),
    (dict(output_channels=0), "Conv2D: output_channels must be a positive "
     "int, got 0."),
    (dict(with_bias=False, b_init=snt.initializers.Ones()),
     "Conv2D: b_init must be None when with_bias=False"),
])
def test_constructor_errors(kwargs, match):
  with pytest.raises(ValueError, match=match):
    snt.Conv2D(**{"output_channels": 2, "kernel_shape": 3, **kwargs})


def test_w_init_must_be_callable():
  with pytest.raises(TypeError, match="Conv1D: w_init must be None or a "
                     "callable"):
    snt.Conv1D(2, 3, w_init=0.1)


def test_conv_nd_spatial_dims():
  with pytest.raises(ValueError, match="ConvND: num_spatial_dims must be 1, "
                     "2 or 3, got 4."):
    conv_lib.ConvND(4, 2, 3)
  module = conv_lib.ConvND(1, 2, 3)  # data_format None: channels-last.
  assert module(tf.zeros([1, 5, 3])).shape == (1, 5, 2)


def test_failed_first_call_can_be_retried():
  module = snt.Conv2D(2, 3)
  with pytest.raises(TypeError):
    module(tf.zeros([1, 5, 5, 3], tf.int32))
  assert module(tf.zeros([1, 5, 5, 3])).shape == (1, 5, 5, 2)
  assert module.w.dtype == tf.float32
