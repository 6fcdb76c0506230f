"""Tests for sonnet_like/nets/cifar10_convnet.py."""

import numpy as np
import pytest
import sonnet
import tensorflow as tf

import sonnet_like as snt

_SMALL = {"num_classes": 5, "output_channels": (4, 6, 8),
          "strides": (1, 2, 1)}


def _assert_outputs_close(ours, theirs, **kw):
  assert sorted(ours) == sorted(theirs) == ["activations", "logits"]
  np.testing.assert_allclose(ours["logits"], theirs["logits"], **kw)
  assert len(ours["activations"]) == len(theirs["activations"])
  for a, b in zip(ours["activations"], theirs["activations"]):
    np.testing.assert_allclose(a, b, **kw)


def _names(module):
  return [(v.name, tuple(v.shape), v.trainable) for v in module.variables]


def test_matches_dm_sonnet_through_a_checkpoint(tmp_path):
  """A dm-sonnet checkpoint restores here, and both compute the same."""
  x = tf.random.normal([3, 8, 8, 3])
  theirs = sonnet.nets.Cifar10ConvNet(**_SMALL, name="net")
  theirs(x, is_training=True)
  rng = np.random.default_rng(0)
  for v in theirs.trainable_variables:
    v.assign(rng.normal(size=v.shape) * 0.3)
  path = tf.train.Checkpoint(module=theirs).save(str(tmp_path / "ckpt"))
  ours = snt.nets.Cifar10ConvNet(**_SMALL, name="net")
  status = tf.train.Checkpoint(module=ours).restore(path)
  y = tf.random.normal([3, 8, 8, 3])
  _assert_outputs_close(ours(y, is_training=True),
                        theirs(y, is_training=True), rtol=1e-5, atol=1e-5)
  status.assert_consumed()
  assert _names(ours) == _names(theirs)
  for test_local_stats in (True, False):
    _assert_outputs_close(
        ours(x, is_training=False, test_local_stats=test_local_stats),
        theirs(x, is_training=False, test_local_stats=test_local_stats),
        rtol=1e-5, atol=1e-5)


def test_default_network_matches_dm_sonnet():
  x = tf.random.normal([1, 32, 32, 3])
  ours = snt.nets.Cifar10ConvNet()
  theirs = sonnet.nets.Cifar10ConvNet()
  out = ours(x, is_training=True)
  theirs(x, is_training=True)
  assert ours.name == "cifar10_conv_net"
  assert _names(ours) == _names(theirs)
  assert len(ours.trainable_variables) == 11 * 3 + 2  # w, b, offset; logits.
  assert out["logits"].shape == [1, 10]
  assert [a.shape[-1] for a in out["activations"]] == [
      64, 64, 128, 128, 128, 256, 256, 256, 512, 512, 512, 512]
  assert out["activations"][-2].shape == [1, 4, 4, 512]


def test_activations_are_the_relu_outputs_then_the_pooled_features():
  net = snt.nets.Cifar10ConvNet(**_SMALL)
  out = net(tf.random.normal([2, 8, 8, 3]), is_training=True)
  assert [a.shape.as_list() for a in out["activations"]] == [
      [2, 8, 8, 4], [2, 4, 4, 6], [2, 4, 4, 8], [2, 8]]
  assert all(float(tf.reduce_min(a)) >= 0 for a in out["activations"])
  np.testing.assert_allclose(out["activations"][-1],
                             tf.reduce_mean(out["activations"][-2], [1, 2]),
                             rtol=1e-6)
  logits = net._logits_module  # pylint: disable=protected-access
  np.testing.assert_allclose(
      out["logits"], out["activations"][-1] @ logits.w + logits.b, rtol=1e-5)


def test_nchw_equals_nhwc_with_the_same_weights():
  nhwc = snt.nets.Cifar10ConvNet(**_SMALL)
  nchw = snt.nets.Cifar10ConvNet(**_SMALL, data_format="NCHW")
  x = tf.random.normal([2, 8, 8, 3])
  nhwc(x, is_training=True)
  x_nchw = tf.transpose(x, [0, 3, 1, 2])
  nchw(x_nchw, is_training=True)
  for a, b in zip(nhwc.variables, nchw.variables):
    b.assign(tf.reshape(a, b.shape))
  ours = nhwc(x, is_training=True)
  theirs = nchw(x_nchw, is_training=True)
  np.testing.assert_allclose(ours["logits"], theirs["logits"], rtol=1e-4,
                             atol=1e-5)
  np.testing.assert_allclose(ours["activations"][0],
                             tf.transpose(theirs["activations"][0],
                                          [0, 2, 3, 1]), rtol=1e-4, atol=1e-5)


def test_gradients_in_tf_function():
  net = snt.nets.Cifar10ConvNet(**_SMALL)
  x = tf.random.normal([2, 8, 8, 3])

  @tf.function
  def grads(x):
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean(net(x, is_training=True)["logits"]**2)
    return tape.gradient(loss, net.trainable_variables)

  assert all(g is not None for g in grads(x))


def test_different_image_sizes():
  net = snt.nets.Cifar10ConvNet(**_SMALL)
  for size in (8, 12):
    assert net(tf.ones([2, size, size, 3]),
               is_training=True)["logits"].shape == [2, 5]


def test_initializers_are_used():
  net = snt.nets.Cifar10ConvNet(num_classes=2, output_channels=(3,),
                                strides=(1,),
                                w_init=snt.initializers.Constant(0.5),
                                b_init=snt.initializers.Constant(0.25))
  net(tf.ones([1, 4, 4, 2]), is_training=True)
  conv = net._conv_modules[0]  # pylint: disable=protected-access
  np.testing.assert_array_equal(conv.w, 0.5)
  np.testing.assert_array_equal(conv.b, 0.25)
  logits = net._logits_module  # pylint: disable=protected-access
  np.testing.assert_array_equal(logits.b, 0.25)


# Errors.


def test_lengths_must_match():
  with pytest.raises(ValueError, match="Cifar10ConvNet: The length of "
                     "`output_channels` and `strides` must be equal, got 3 and 2"):
    snt.nets.Cifar10ConvNet(output_channels=(4, 6, 8), strides=(1, 2))


@pytest.mark.parametrize("argument,value", [
    ("output_channels", (4, 0)), ("strides", [1, 1.5]), ("strides", 2)])
def test_bad_sequences(argument, value):
  arguments = {"output_channels": (4, 6), "strides": (1, 1),
               **{argument: value}}
  with pytest.raises(ValueError, match=f"Cifar10ConvNet: {argument} must be a "
                     "sequence of positive ints"):
    snt.nets.Cifar10ConvNet(**arguments)


def test_bad_num_classes_and_data_format():
  with pytest.raises(ValueError, match="Cifar10ConvNet: num_classes must be a "
                     "positive int, got 0"):
    snt.nets.Cifar10ConvNet(num_classes=0)
  with pytest.raises(ValueError, match="Cifar10ConvNet: data_format must be "
                     r"one of \['NHWC', 'NCHW'\], got 'NWC'"):
    snt.nets.Cifar10ConvNet(data_format="NWC")


def test_bad_inputs_name_the_module():
  net = snt.nets.Cifar10ConvNet(**_SMALL, name="net")
  with pytest.raises(ValueError, match=r"Cifar10ConvNet 'net' expects a "
                     r"rank-4 input \[N, H, W, C\], got shape \(2, 8, 3\)"):
    net(tf.zeros([2, 8, 3]), is_training=True)
  with pytest.raises(TypeError, match="Cifar10ConvNet 'net': is_training must "
                     "be a bool"):
    net(tf.zeros([2, 8, 8, 3]), is_training="yes")
  with pytest.raises(TypeError, match="Cifar10ConvNet 'net': test_local_stats "
                     "must be a bool"):
    net(tf.zeros([2, 8, 8, 3]), is_training=False, test_local_stats=None)
  net(tf.zeros([2, 8, 8, 3]), is_training=True)
  with pytest.raises(ValueError, match="'net/conv_2d_0' was built for input "
                     "channels 3, got 1"):
    net(tf.zeros([2, 8, 8, 1]), is_training=True)


def test_moving_statistics_before_training():
  net = snt.nets.Cifar10ConvNet(**_SMALL, name="net")
  x = tf.random.normal([2, 8, 8, 3])
  assert net(x, is_training=False)["logits"].shape == [2, 5]
  with pytest.raises(ValueError, match="BatchNorm 'net/batch_norm_0' was "
                     "called with is_training=False before any call with "
                     "is_training=True"):
    net(x, is_training=False, test_local_stats=False)
