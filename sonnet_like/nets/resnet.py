"""ResNet (v1 and v2, bottleneck blocks) and ResNet50, as in Sonnet 2.0.2.

The blocks are exported here (`snt.nets.resnet.BottleNeckBlockV1`, ...) as in
Sonnet; `snt.nets` exports `ResNet` and `ResNet50`.
"""

from typing import Any, Mapping, Sequence

import numpy as np
import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import base
from sonnet_like.core import checks
from sonnet_like.core import initializers
from sonnet_like.core import types
from sonnet_like.modules import batch_norm
from sonnet_like.modules import conv
from sonnet_like.modules import linear
from sonnet_like.modules import moving_averages
from sonnet_like.modules import pad

__all__ = ["BlockGroup", "BottleNeckBlockV1", "BottleNeckBlockV2", "ResNet",
           "ResNet50"]

# The BatchNorm arguments a `bn_config` may set (every other one is fixed by
# the network, or clashes with what it passes itself).
BN_CONFIG_KEYS = ("decay_rate", "eps", "offset_init")
_GROUP_STRIDES = (1, 2, 2, 2)


def _conv(channels: int, kernel: int, stride: Any, name: str) -> conv.Conv2D:
  return conv.Conv2D(output_channels=channels, kernel_shape=kernel,
                     stride=stride, with_bias=False, padding=pad.same,
                     name=name)


def _batch_norm(bn_config: Mapping[str, Any], name: str,
                **kwargs) -> batch_norm.BatchNorm:
  return batch_norm.BatchNorm(create_scale=True, create_offset=True,
                              name=name, **kwargs, **bn_config)


def check_bn_config(owner: str, bn_config: Any) -> dict[str, Any]:
  """`bn_config` as a dict, or an error naming the offending key or value."""
  if not isinstance(bn_config, Mapping):
    raise TypeError(f"{owner}: bn_config must be a mapping such as "
                    "{'decay_rate': 0.9, 'eps': 1e-5}, got "
                    f"{bn_config!r}.")
  unknown = sorted(str(k) for k in bn_config if k not in BN_CONFIG_KEYS)
  if unknown:
    raise checks.ArgumentTypeError(
        f"{owner}: bn_config may only set {list(BN_CONFIG_KEYS)}, "
        f"got the keys {unknown}.")
  if "decay_rate" in bn_config:
    moving_averages.check_decay(owner, "bn_config['decay_rate']",
                                bn_config["decay_rate"], low_inclusive=False)
  return dict(bn_config)


def _check_channels(owner: str, channels: Any) -> None:
  if (not isinstance(channels, (int, np.integer)) or
      isinstance(channels, bool) or channels < 4):
    raise ValueError(f"{owner}: channels must be an int >= 4 (the bottleneck "
                     f"has channels // 4), got {channels!r}.")


class _BottleneckBlock(base.Module):
  """What both bottleneck blocks share: checked arguments and the shortcut
  conv (created first, as in Sonnet, so checkpoints line up), then the
  version's layers (`_make_layers`)."""

  def __init__(self, channels: int, stride: int | Sequence[int],
               use_projection: bool, bn_config: Mapping[str, Any],
               name: str | None = None):
    """Constructs the block.

    Args:
      channels: Output channels (the bottleneck has `channels // 4`).
      stride: Stride of the 3x3 conv and of the projection.
      use_projection: Whether the shortcut is projected (needed when the
        stride or the channel count changes).
      bn_config: Arguments of the BatchNorm layers (see `ResNet`).
      name: Name of the module.
    """
    super().__init__(name=name)
    owner = type(self).__name__
    _check_channels(owner, channels)
    self._channels = int(channels)
    self._stride = stride
    self._use_projection = bool(use_projection)
    self._bn_config = check_bn_config(owner, bn_config)
    if self._use_projection:
      self._proj_conv = _conv(channels, 1, stride, "shortcut_conv")
    self._make_layers(self._bn_config, self._channels // 4)

  def _make_layers(self, bn_config: dict[str, Any],
                   bottleneck: int) -> None:
    raise NotImplementedError


class BottleNeckBlockV1(_BottleneckBlock):
  """Bottleneck block of ResNet v1: three conv + BatchNorm, ReLU after the sum.

  1x1 conv to `channels // 4`, 3x3 conv (strided), 1x1 conv to `channels`,
  each followed by BatchNorm (the last one's scale starts at zero); the input,
  projected by a strided 1x1 conv + BatchNorm with `use_projection`, is added
  before the final ReLU.
  """

  def _make_layers(self, bn_config: dict[str, Any],
                   bottleneck: int) -> None:
    if self._use_projection:
      self._proj_batchnorm = _batch_norm(bn_config, "shortcut_batchnorm")
    self._layers = [
        [_conv(bottleneck, 1, 1, "conv_0"),
         _batch_norm(bn_config, "batchnorm_0")],
        [_conv(bottleneck, 3, self._stride, "conv_1"),
         _batch_norm(bn_config, "batchnorm_1")],
        [_conv(self._channels, 1, 1, "conv_2"),
         _batch_norm(bn_config, "batchnorm_2",
                     scale_init=initializers.Zeros())],
    ]

  def __call__(self, inputs: tf.Tensor,
               is_training: types.BoolLike) -> tf.Tensor:
    """Applies the block to NHWC `inputs`."""
    if self._use_projection:
      shortcut = self._proj_conv(inputs)
      shortcut = self._proj_batchnorm(shortcut, is_training=is_training)
    else:
      shortcut = inputs
    net = inputs
    last = len(self._layers) - 1
    for i, (conv_layer, bn_layer) in enumerate(self._layers):
      net = bn_layer(conv_layer(net), is_training=is_training)
      if i < last:
        net = tf.nn.relu(net)
    return tf.nn.relu(net + shortcut)


class BottleNeckBlockV2(_BottleneckBlock):
  """Bottleneck block of ResNet v2: BatchNorm and ReLU before each conv.

  The shortcut (projected by a strided 1x1 conv with `use_projection`, taken
  after the first BatchNorm + ReLU) is added to the last conv's output, with
  no activation after the sum.
  """

  def _make_layers(self, bn_config: dict[str, Any],
                   bottleneck: int) -> None:
    self._conv_0 = _conv(bottleneck, 1, 1, "conv_0")
    self._bn_0 = _batch_norm(bn_config, "batchnorm_0")
    self._conv_1 = _conv(bottleneck, 3, self._stride, "conv_1")
    self._bn_1 = _batch_norm(bn_config, "batchnorm_1")
    self._conv_2 = _conv(self._channels, 1, 1, "conv_2")
    self._bn_2 = _batch_norm(bn_config, "batchnorm_2")

  def __call__(self, inputs: tf.Tensor,
               is_training: types.BoolLike) -> tf.Tensor:
    """Applies the block to NHWC `inputs`."""
    net = inputs
    shortcut = inputs
    layers = ((self._conv_0, self._bn_0), (self._conv_1, self._bn_1),
              (self._conv_2, self._bn_2))
    for i, (conv_layer, bn_layer) in enumerate(layers):
      net = tf.nn.relu(bn_layer(net, is_training=is_training))
      if i == 0 and self._use_projection:
        shortcut = self._proj_conv(net)
      net = conv_layer(net)
    return net + shortcut


class BlockGroup(base.Module):
  """`num_blocks` bottleneck blocks `block_<i>`; the first one is strided and
  projects its shortcut."""

  def __init__(self, channels: int, num_blocks: int,
               stride: int | Sequence[int], bn_config: Mapping[str, Any],
               resnet_v2: bool = False, name: str | None = None):
    """Constructs the group.

    Args:
      channels: Output channels of every block.
      num_blocks: How many blocks.
      stride: Stride of the first block.
      bn_config: Arguments of the BatchNorm layers (see `ResNet`).
      resnet_v2: Whether the blocks are `BottleNeckBlockV2`.
      name: Name of the module.
    """
    super().__init__(name=name)
    owner = type(self).__name__
    if (not isinstance(num_blocks, (int, np.integer)) or
        isinstance(num_blocks, bool) or num_blocks < 0):
      raise ValueError(f"{owner}: num_blocks must be a non-negative int, got "
                       f"{num_blocks!r}.")
    self._channels = channels
    self._num_blocks = int(num_blocks)
    self._stride = stride
    self._bn_config = check_bn_config(owner, bn_config)
    block = BottleNeckBlockV2 if resnet_v2 else BottleNeckBlockV1
    self._blocks = [
        block(channels=channels, stride=stride if i == 0 else 1,
              use_projection=(i == 0), bn_config=bn_config, name=f"block_{i}")
        for i in range(self._num_blocks)]

  def __call__(self, inputs: tf.Tensor,
               is_training: types.BoolLike) -> tf.Tensor:
    """Applies the blocks in order."""
    net = inputs
    for block in self._blocks:
      net = block(net, is_training=is_training)
    return net


def _four(owner: str, argument: str, value: Any, minimum: int,
          what: str) -> tuple[int, ...]:
  """A sequence of 4 ints >= `minimum`, or an error that says so."""
  if (not isinstance(value, (list, tuple)) or len(value) != 4 or not all(
      isinstance(v, (int, np.integer)) and not isinstance(v, bool) and
      v >= minimum for v in value)):
    length = (f" (length {len(value)})" if isinstance(value, (list, tuple))
              else "")
    # Sonnet's wording for a wrong length is kept for code that matches it.
    sonnet_phrase = (f" (`{argument}` must be of length 4 not {len(value)})"
                     if isinstance(value, (list, tuple)) and len(value) != 4
                     else "")
    raise ValueError(f"{owner}: {argument} must be a sequence of 4 {what}, "
                     f"got {value!r}{length}.{sonnet_phrase}")
  return tuple(int(v) for v in value)


class ResNet(base.Module):
  """ResNet with bottleneck blocks (He et al. 2015; v2: 2016).

  A 7x7 stride-2 conv with 64 channels (`initial_conv`; v1 adds BatchNorm and
  ReLU), a 3x3 stride-2 max pool, four `BlockGroup`s (`block_group_<i>`,
  strides 1, 2, 2, 2), (v2: a final BatchNorm and ReLU), a global average
  pool and `logits`, a `Linear` whose weights start at zero. Inputs are NHWC.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> net = snt.nets.ResNet([1, 1, 1, 1], num_classes=5,
      ...                       channels_per_group_list=(8, 8, 16, 16),
      ...                       name="doc_resnet")
      >>> net(tf.ones([2, 32, 32, 3]), is_training=True).shape
      TensorShape([2, 5])
      >>> net.trainable_variables[0].name
      'doc_resnet/block_group_0/block_0/conv_0/w:0'

  Evaluating (`is_training=False`) uses the BatchNorm moving statistics, so
  it needs a training step (or a restored checkpoint) first.
  """

  def __init__(self,
               blocks_per_group_list: Sequence[int],
               num_classes: int,
               bn_config: Mapping[str, Any] | None = None,
               resnet_v2: bool = False,
               channels_per_group_list: Sequence[int] = (256, 512, 1024,
                                                         2048),
               name: str | None = None):
    """Constructs the network.

    Args:
      blocks_per_group_list: Number of blocks in each of the 4 groups.
      num_classes: Number of logits.
      bn_config: Arguments of every BatchNorm: `decay_rate`, `eps` (and
        `offset_init`); `{"decay_rate": 0.9, "eps": 1e-5}` by default.
      resnet_v2: Whether to build ResNet v2 (pre-activation blocks).
      channels_per_group_list: Output channels of each of the 4 groups.
      name: Name of the module.
    """
    super().__init__(name=name)
    owner = type(self).__name__
    if bn_config is None:
      bn_config = {"decay_rate": 0.9, "eps": 1e-5}
    bn_config = check_bn_config(owner, bn_config)
    blocks = _four(owner, "blocks_per_group_list", blocks_per_group_list, 0,
                   "non-negative ints")
    channels = _four(owner, "channels_per_group_list", channels_per_group_list,
                     4, "ints >= 4")
    arguments.check_positive_int(owner, "num_classes", num_classes)
    self._bn_config = bn_config
    self._resnet_v2 = bool(resnet_v2)
    self._blocks_per_group_list = blocks
    self._channels_per_group_list = channels
    # Attribute names follow Sonnet's, so Sonnet checkpoints restore here.
    self._initial_conv = _conv(64, 7, 2, "initial_conv")
    if not self._resnet_v2:
      self._initial_batchnorm = _batch_norm(bn_config, "initial_batchnorm")
    self._block_groups = [
        BlockGroup(channels=channels[i], num_blocks=blocks[i],
                   stride=_GROUP_STRIDES[i], bn_config=bn_config,
                   resnet_v2=self._resnet_v2, name=f"block_group_{i}")
        for i in range(4)]
    if self._resnet_v2:
      self._final_batchnorm = _batch_norm(bn_config, "final_batchnorm")
    self._logits = linear.Linear(output_size=int(num_classes),
                                 w_init=initializers.Zeros(), name="logits")

  def __call__(self, inputs: tf.Tensor,
               is_training: types.BoolLike) -> tf.Tensor:
    """Classifies NHWC images.

    Args:
      inputs: Images `[batch, height, width, channels]`.
      is_training: Whether BatchNorm uses and updates the batch statistics
        (a bool or a scalar boolean tensor).

    Returns:
      Logits `[batch, num_classes]`.
    """
    checks.check_is_training(self, is_training)
    inputs = tf.convert_to_tensor(inputs)
    checks.check_rank(self, inputs, rank=4, layout="[N, H, W, C]")
    net = self._initial_conv(inputs)
    if not self._resnet_v2:
      net = self._initial_batchnorm(net, is_training=is_training)
      net = tf.nn.relu(net)
    net = tf.nn.max_pool2d(net, ksize=3, strides=2, padding="SAME",
                           name="initial_max_pool")
    for block_group in self._block_groups:
      net = block_group(net, is_training=is_training)
    if self._resnet_v2:
      net = self._final_batchnorm(net, is_training=is_training)
      net = tf.nn.relu(net)
    net = tf.reduce_mean(net, axis=[1, 2], name="final_avg_pool")
    return self._logits(net)


class ResNet50(ResNet):
  """ResNet with 3, 4, 6 and 3 blocks in its groups (about 23.5M weights)."""

  def __init__(self, num_classes: int,
               bn_config: Mapping[str, Any] | None = None,
               resnet_v2: bool = False, name: str | None = None):
    """Constructs the network.

    Args:
      num_classes: Number of logits.
      bn_config: Arguments of every BatchNorm (see `ResNet`).
      resnet_v2: Whether to build ResNet v2 (pre-activation blocks).
      name: Name of the module.
    """
    super().__init__([3, 4, 6, 3], num_classes=num_classes,
                     bn_config=bn_config, resnet_v2=resnet_v2, name=name)
