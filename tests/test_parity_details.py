"""Side by side with dm-sonnet 2.0.2: the last public details (issue 29).

Every expected value here is what dm-sonnet computes on this machine when
the test runs, never a written-down number: other CPUs (with or without
AVX-512 or oneDNN) run other kernels.
"""

import pathlib
import re

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt

sonnet = pytest.importorskip("sonnet")
version = pytest.importorskip("packaging.version")

_ROOT = pathlib.Path(__file__).parent.parent

# --- Initializers on a shape known only when the graph runs. ---

_INITIALIZERS = [
    "Zeros()", "Ones()", "Constant(2.5)", "RandomUniform(-1., 2., seed=3)",
    "RandomNormal(1., 2., seed=3)", "TruncatedNormal(0., 0.5, seed=3)",
    "Identity(gain=2.)", "Orthogonal(gain=1.5, seed=3)",
    "VarianceScaling(2., seed=3)",
    "VarianceScaling(1., 'fan_out', 'normal', seed=3)",
    "VarianceScaling(1., 'fan_avg', 'uniform', seed=3)",
]


def _on_dynamic_shape(lib, make, shape, dynamic=True):
  """`initializer(tf.shape(t), t.dtype)` in a tf.function where `t`'s sizes
  are unknown while tracing (`dynamic=False`: the static shape instead)."""
  initializer = eval(f"lib.initializers.{make}")  # pylint: disable=eval-used

  @tf.function(input_signature=[tf.TensorSpec([None] * len(shape))])
  def initial_value(t):
    return initializer(tf.shape(t) if dynamic else shape, t.dtype)

  tf.random.set_seed(0)
  return initial_value(tf.zeros(shape)).numpy()


@pytest.mark.parametrize("make", _INITIALIZERS)
@pytest.mark.parametrize("shape", [(6, 5), (5, 6), (7,)], ids=str)
def test_initializers_take_a_shape_tensor(make, shape):
  if len(shape) < 2 and make.startswith(("Identity", "Orthogonal")):
    pytest.skip("needs two dimensions in both libraries")
  theirs = _on_dynamic_shape(sonnet, make, shape)
  ours = _on_dynamic_shape(snt, make, shape)
  np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("make", _INITIALIZERS)
def test_initializers_take_a_kernel_shape_tensor(make):
  """A rank-4 shape tensor. dm-sonnet 2.0.2's VarianceScaling raises a
  TypeError there (a float receptive field times an int tensor); ours
  gives dm-sonnet's values for the same shape known while tracing, up to
  TensorFlow folding its constant arithmetic in another order."""
  shape = (3, 3, 2, 4)
  ours = _on_dynamic_shape(snt, make, shape)
  if make.startswith("VarianceScaling"):
    with pytest.raises(TypeError):
      _on_dynamic_shape(sonnet, make, shape)
    theirs = _on_dynamic_shape(sonnet, make, shape, dynamic=False)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
  else:
    np.testing.assert_array_equal(ours, _on_dynamic_shape(sonnet, make, shape))


@pytest.mark.parametrize("make", ["Identity()", "Orthogonal(seed=3)"])
def test_initializers_one_dimensional_shape_tensor(make):
  """Both libraries refuse it with the same words; ours names the class."""
  errors = []
  for lib in (sonnet, snt):
    with pytest.raises(ValueError) as error:
      _on_dynamic_shape(lib, make, (7,))
    errors.append(str(error.value))
  phrase = "The tensor to initialize must be at least two-dimensional"
  assert phrase in errors[0] and phrase in errors[1]
  assert make.split("(")[0] in errors[1]


# --- BatchNorm with moving statistics: Sonnet's kernels, bit for bit. ---


def _copy(source, target):
  names = [v.name for v in source.variables]
  assert names == [v.name for v in target.variables]
  for a, b in zip(source.variables, target.variables):
    b.assign(a)


def _trained_pair(make, x):
  """The module from both libraries, trained once on `x`, same values."""
  ours, theirs = make(snt), make(sonnet)
  ours(x, is_training=True)
  theirs(x, is_training=True)
  rng = np.random.default_rng(1)
  for v in ours.variables:
    if "counter" not in v.name:
      v.assign(tf.cast(rng.uniform(0.5, 2., size=v.shape), v.dtype))
  _copy(ours, theirs)
  return ours, theirs


_RANK4 = [
    pytest.param("channels_last", (4, 5, 6, 3), id="NHWC"),
    pytest.param("channels_first", (4, 3, 5, 6), id="NCHW"),
    pytest.param("channels_last", (4, 3), id="rank2"),
    pytest.param("channels_last", (4, 5, 3), id="rank3"),
]


@pytest.mark.parametrize("data_format,shape", _RANK4)
@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "function"])
def test_batch_norm_eval_agrees_bit_for_bit(data_format, shape, compiled):
  rng = np.random.default_rng(0)
  x = tf.constant(rng.normal(2., 3., size=shape), tf.float32)
  ours, theirs = _trained_pair(
      lambda lib: lib.BatchNorm(True, True, data_format=data_format), x)
  y = tf.constant(rng.normal(1., 2., size=shape), tf.float32)
  outputs = []
  for module in (ours, theirs):
    call = lambda v, m=module: m(v, is_training=False)
    outputs.append((tf.function(call) if compiled else call)(y).numpy())
  np.testing.assert_array_equal(outputs[0], outputs[1])


def test_resnet50_eval_agrees_bit_for_bit():
  x = tf.random.stateless_normal([2, 32, 32, 3], seed=[0, 1])
  ours, theirs = snt.nets.ResNet50(10), sonnet.nets.ResNet50(10)
  ours(x, is_training=True)
  theirs(x, is_training=True)
  rng = np.random.default_rng(2)
  for v in ours.trainable_variables:  # Sonnet starts some at zero.
    fan_in = np.prod(v.shape[:-1]) if len(v.shape) > 1 else 1
    v.assign(rng.normal(size=v.shape) / np.sqrt(fan_in))
  ours(x, is_training=True)  # Moving statistics of these weights.
  _copy(ours, theirs)
  y = tf.random.stateless_normal([2, 32, 32, 3], seed=[2, 3])
  np.testing.assert_array_equal(ours(y, is_training=False).numpy(),
                                theirs(y, is_training=False).numpy())


# --- BatchNorm._axis, which subclasses read. ---


@pytest.mark.parametrize("data_format,shape", _RANK4)
def test_batch_norm_axis_as_in_sonnet(data_format, shape):
  axes = []
  for lib in (snt, sonnet):

    class Norm(lib.BatchNorm):
      """Reads `_axis` as subclasses (and Sonnet's own tests) do."""

      def __call__(self, inputs, is_training):
        outputs = super().__call__(inputs, is_training)
        return outputs, tf.reduce_mean(inputs, self._axis)

    module = Norm(True, True, data_format=data_format)
    _, mean = module(tf.ones(shape), is_training=True)
    axes.append((module._axis, mean.shape))  # pylint: disable=protected-access
  assert axes[0] == axes[1]


def test_cross_replica_batch_norm_axis_as_in_sonnet():
  axes = []
  for lib in (snt, sonnet):
    module = lib.distribute.CrossReplicaBatchNorm(
        False, False, lib.ExponentialMovingAverage(0.9),
        lib.ExponentialMovingAverage(0.9))
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    with strategy.scope():
      strategy.run(lambda m=module: m(tf.ones([2, 3, 3, 4]), is_training=True))
    axes.append(module._axis)  # pylint: disable=protected-access
  assert axes[0] == axes[1]


# --- snt.__version__. ---


def test_version_takes_the_sonnet_2_branch():
  ours = version.Version(snt.__version__)
  theirs = version.Version(sonnet.__version__)
  assert ours.major == theirs.major == 2
  assert ours.public == theirs.public  # The Sonnet API followed.
  assert theirs.local is None
  assert ours.local == f"sonnetlike.{snt.__sonnet_like_version__}"
  assert not hasattr(sonnet, "__sonnet_like_version__")


def test_setup_reads_the_package_version():
  setup = (_ROOT / "setup.py").read_text()
  pattern = re.search(r"re\.search\(r'(.+?)',", setup)[1]
  init = (_ROOT / "sonnet_like" / "__init__.py").read_text()
  assert re.search(pattern, init)[1] == snt.__sonnet_like_version__
  assert version.Version(snt.__sonnet_like_version__)
