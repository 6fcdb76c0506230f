"""Tests for sonnet_like/nets/resnet.py."""

import numpy as np
import pytest
import sonnet
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.nets import resnet

_SMALL = {"blocks_per_group_list": [1, 2, 1, 1], "num_classes": 3,
          "channels_per_group_list": (8, 8, 12, 16)}


def _randomize(module, seed=0):
  """Random trainable values (Sonnet starts the logits and scales at zero)."""
  rng = np.random.default_rng(seed)
  for v in module.trainable_variables:
    fan_in = np.prod(v.shape[:-1]) if len(v.shape) > 1 else 1
    v.assign(rng.normal(size=v.shape) / np.sqrt(fan_in))


def _names(module):
  return [(v.name, tuple(v.shape), v.trainable) for v in module.variables]


@pytest.mark.parametrize("resnet_v2", [False, True])
def test_matches_dm_sonnet_through_a_checkpoint(resnet_v2, tmp_path):
  """A dm-sonnet checkpoint restores here, and both compute the same."""
  x = tf.random.normal([2, 32, 32, 3])
  theirs = sonnet.nets.ResNet(**_SMALL, resnet_v2=resnet_v2, name="net")
  theirs(x, is_training=True)
  _randomize(theirs)
  path = tf.train.Checkpoint(module=theirs).save(str(tmp_path / "ckpt"))
  ours = snt.nets.ResNet(**_SMALL, resnet_v2=resnet_v2, name="net")
  status = tf.train.Checkpoint(module=ours).restore(path)
  y = tf.random.normal([2, 32, 32, 3])
  np.testing.assert_allclose(ours(y, is_training=True),
                             theirs(y, is_training=True), rtol=1e-4,
                             atol=1e-5)
  status.assert_consumed()
  assert _names(ours) == _names(theirs)
  # Same moving statistics after the same training step.
  np.testing.assert_allclose(ours(x, is_training=False),
                             theirs(x, is_training=False), rtol=1e-4,
                             atol=1e-5)


def test_gradients_match_dm_sonnet():
  x = tf.random.normal([2, 32, 32, 3])
  ours = snt.nets.ResNet(**_SMALL, name="net")
  theirs = sonnet.nets.ResNet(**_SMALL, name="net")
  ours(x, is_training=True)
  theirs(x, is_training=True)
  _randomize(ours)
  for a, b in zip(ours.variables, theirs.variables):
    b.assign(a)
  grads = []
  for net in (ours, theirs):
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(net(x, is_training=True)**2)
    grads.append(tape.gradient(loss, net.trainable_variables))
  for a, b in zip(*grads):
    np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5)


def test_resnet50_variables_match_dm_sonnet():
  x = tf.random.normal([1, 32, 32, 3])
  ours = snt.nets.ResNet50(10)
  theirs = sonnet.nets.ResNet50(10)
  assert ours.name == "res_net50"
  assert ours(x, is_training=True).shape == [1, 10]
  theirs(x, is_training=True)
  assert len(ours.variables) == 479
  assert _names(ours) == _names(theirs)
  assert sum(int(np.prod(v.shape)) for v in ours.trainable_variables) == (
      23_528_522)


def test_logits_start_at_zero():
  net = snt.nets.ResNet([1, 1, 1, 1], 4, channels_per_group_list=(4,) * 4)
  np.testing.assert_array_equal(
      net(tf.random.normal([2, 16, 16, 3]), is_training=True), 0.)


def test_v1_block_starts_as_relu_of_its_shortcut():
  """The last BatchNorm's scale starts at zero, so only the shortcut is left."""
  block = resnet.BottleNeckBlockV1(8, stride=1, use_projection=False,
                                   bn_config={"decay_rate": 0.9})
  x = tf.random.normal([2, 4, 4, 8])
  np.testing.assert_allclose(block(x, is_training=True), tf.nn.relu(x),
                             atol=1e-6)


def test_block_group_structure():
  group = resnet.BlockGroup(16, num_blocks=3, stride=2,
                            bn_config={"decay_rate": 0.9}, resnet_v2=True,
                            name="group")
  assert group(tf.ones([2, 8, 8, 4]), is_training=True).shape == [2, 4, 4, 16]
  names = {v.name.split("/")[1] for v in group.variables}
  assert names == {"block_0", "block_1", "block_2"}
  assert any("block_0/shortcut_conv" in v.name for v in group.variables)
  assert not any("block_1/shortcut" in v.name for v in group.variables)
  assert all(isinstance(b, resnet.BottleNeckBlockV2)
             for b in group._blocks)  # pylint: disable=protected-access


def test_tf_function_matches_eager():
  net = snt.nets.ResNet(**_SMALL)
  x = tf.random.normal([2, 32, 32, 3])
  eager = net(x, is_training=True)
  _randomize(net)
  f = tf.function(net)
  np.testing.assert_allclose(f(x, is_training=True),
                             net(x, is_training=True), rtol=1e-5, atol=1e-6)
  assert eager.shape == [2, 3]


def test_bn_config_is_used():
  net = snt.nets.ResNet(**_SMALL, bn_config={"decay_rate": 0.5, "eps": 0.1,
                                             "offset_init":
                                                 snt.initializers.Ones()})
  net(tf.random.normal([2, 32, 32, 3]), is_training=True)
  bn = net._initial_batchnorm  # pylint: disable=protected-access
  np.testing.assert_array_equal(bn.offset, 1.)
  assert bn._eps == 0.1  # pylint: disable=protected-access
  assert bn.moving_mean._decay == 0.5  # pylint: disable=protected-access


def test_namespace_like_sonnet():
  assert snt.nets.resnet is resnet
  for name in sonnet.nets.resnet.__all__:
    assert hasattr(snt.nets.resnet, name)
  assert issubclass(snt.nets.ResNet50, snt.nets.ResNet)


# Errors.


@pytest.mark.parametrize("length", [3, 5])
def test_bad_blocks_per_group_list(length):
  with pytest.raises(ValueError, match=r"ResNet: blocks_per_group_list must "
                     r"be a sequence of 4 non-negative ints, got .* \(length "
                     f"{length}\\)"):
    snt.nets.ResNet(list(range(length)), 10)


@pytest.mark.parametrize("channels", [[8, 8, 8], [8, 8, 8, 8, 8],
                                      [8, 8, 8, 2]])
def test_bad_channels_per_group_list(channels):
  with pytest.raises(ValueError, match=r"ResNet: channels_per_group_list must "
                     r"be a sequence of 4 ints >= 4"):
    snt.nets.ResNet([1, 1, 1, 1], 10, channels_per_group_list=channels)


def test_bad_bn_config():
  with pytest.raises(ValueError, match=r"ResNet50: bn_config may only set "
                     r"\['decay_rate', 'eps', 'offset_init'\], got the keys "
                     r"\['create_scale'\]"):
    snt.nets.ResNet50(10, bn_config={"create_scale": False})
  with pytest.raises(ValueError, match=r"ResNet: bn_config\['decay_rate'\] "
                     r"must be in range \(0, 1\)"):
    snt.nets.ResNet([1, 1, 1, 1], 10, bn_config={"decay_rate": 1.5})
  with pytest.raises(TypeError, match="ResNet: bn_config must be a mapping"):
    snt.nets.ResNet([1, 1, 1, 1], 10, bn_config=0.9)


def test_bad_num_classes():
  with pytest.raises(ValueError, match="ResNet: num_classes must be a "
                     "positive int, got 0"):
    snt.nets.ResNet([1, 1, 1, 1], 0)


def test_bad_inputs_name_the_module():
  net = snt.nets.ResNet([1, 1, 1, 1], 3, channels_per_group_list=(4,) * 4,
                        name="net")
  with pytest.raises(ValueError, match=r"ResNet 'net' expects a rank-4 input "
                     r"\[N, H, W, C\], got shape \(2, 16, 3\)"):
    net(tf.zeros([2, 16, 3]), is_training=True)
  with pytest.raises(TypeError, match="ResNet 'net': is_training must be a "
                     "bool"):
    net(tf.zeros([2, 16, 16, 3]), is_training="True")
  net(tf.zeros([2, 16, 16, 3]), is_training=True)
  with pytest.raises(ValueError, match="'net/initial_conv' was built for "
                     "input channels 3, got 1"):
    net(tf.zeros([2, 16, 16, 1]), is_training=True)


def test_evaluation_before_training_names_the_batch_norm():
  net = snt.nets.ResNet([1, 1, 1, 1], 3, channels_per_group_list=(4,) * 4,
                        name="net")
  with pytest.raises(ValueError, match="BatchNorm 'net/initial_batchnorm' was "
                     "called with is_training=False before any call with "
                     "is_training=True"):
    net(tf.zeros([2, 16, 16, 3]), is_training=False)


def test_bad_block_arguments():
  with pytest.raises(ValueError, match=r"BottleNeckBlockV1: channels must be "
                     r"an int >= 4 \(the bottleneck has channels // 4\), got "
                     "2"):
    resnet.BottleNeckBlockV1(2, 1, True, {})
  with pytest.raises(ValueError, match="BlockGroup: num_blocks must be a "
                     "non-negative int, got -1"):
    resnet.BlockGroup(8, -1, 1, {})
