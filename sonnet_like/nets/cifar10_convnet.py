"""Cifar10ConvNet: a VGG-like stack of conv + BatchNorm + ReLU for CIFAR-10."""

from typing import Any, Sequence

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

_DEFAULT_CHANNELS = (64, 64, 128, 128, 128, 256, 256, 256, 512, 512, 512)
_DEFAULT_STRIDES = (1, 1, 2, 1, 1, 2, 1, 1, 2, 1, 1)


def _positive_ints(owner: str, argument: str,
                          value: Any) -> tuple[int, ...]:
  """`value` as a tuple of ints, or an error if it is not a sequence of them."""
  if (not isinstance(value, (list, tuple)) or not all(
      isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 1
      for v in value)):
    raise ValueError(f"{owner}: {argument} must be a sequence of positive "
                     f"ints, got {value!r}.")
  return tuple(int(v) for v in value)


class Cifar10ConvNet(base.Module):
  """Convolutional network for CIFAR-10: "VGG without max pooling, with BN".

  Each layer is a 3x3 `Conv2D` (`conv_2d_<i>`), a `BatchNorm` with a learnt
  offset and no scale (`batch_norm_<i>`, decay 0.999) and a ReLU; the last
  activation is averaged over space and fed to a `Linear` (`logits`). Scale
  inputs to [-1, 1] for the default initializers.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> net = snt.nets.Cifar10ConvNet(num_classes=3, output_channels=(4, 8),
      ...                               strides=(1, 2), name="doc_cifar")
      >>> out = net(tf.ones([2, 8, 8, 3]), is_training=True)
      >>> out["logits"].shape
      TensorShape([2, 3])
      >>> [a.shape.as_list() for a in out["activations"]]
      [[2, 8, 8, 4], [2, 4, 4, 8], [2, 8]]

  Unlike Sonnet 2.0.2, which averages over axes 1 and 2 whatever the layout,
  an NCHW network averages over its spatial axes (2 and 3).
  """

  def __init__(self,
               num_classes: int = 10,
               w_init: initializers.Initializer | None = None,
               b_init: initializers.Initializer | None = None,
               data_format: str = "NHWC",
               output_channels: Sequence[int] = _DEFAULT_CHANNELS,
               strides: Sequence[int] = _DEFAULT_STRIDES,
               name: str | None = None):
    """Constructs the network and its layers.

    Args:
      num_classes: Number of logits.
      w_init: Initializer of the convolutions' and the logits' weights.
      b_init: Initializer of their biases.
      data_format: "NHWC" (default) or "NCHW".
      output_channels: Output channels of each convolution.
      strides: Stride of each convolution; as many as `output_channels`.
      name: Name of the module.
    """
    super().__init__(name=name)
    owner = type(self).__name__
    arguments.check_positive_int(owner, "num_classes", num_classes)
    checks.check_choice(owner, "data_format", data_format, ("NHWC", "NCHW"))
    output_channels = _positive_ints(owner, "output_channels",
                                            output_channels)
    strides = _positive_ints(owner, "strides", strides)
    if len(strides) != len(output_channels):
      raise ValueError(
          f"{owner}: The length of `output_channels` and `strides` must be "
          f"equal, got {len(output_channels)} and {len(strides)}.")
    self._num_classes = int(num_classes)
    self._data_format = data_format
    self._output_channels = output_channels
    self._strides = strides
    self._num_layers = len(output_channels)
    self._w_init = w_init
    self._b_init = b_init
    # Attribute names follow Sonnet's, so Sonnet checkpoints restore here.
    self._conv_modules = [
        conv.Conv2D(output_channels=channels, kernel_shape=3, stride=stride,
                    w_init=w_init, b_init=b_init, data_format=data_format,
                    name=f"conv_2d_{i}")
        for i, (channels, stride) in enumerate(zip(output_channels, strides))]
    self._bn_modules = [
        batch_norm.BatchNorm(create_scale=False, create_offset=True,
                             decay_rate=0.999, data_format=data_format,
                             name=f"batch_norm_{i}")
        for i in range(self._num_layers)]
    self._logits_module = linear.Linear(self._num_classes, w_init=w_init,
                                        b_init=b_init, name="logits")

  def __call__(self, inputs: tf.Tensor, is_training: types.BoolLike,
               test_local_stats: types.BoolLike = True
              ) -> dict[str, tf.Tensor | list[tf.Tensor]]:
    """Classifies a batch of images.

    Args:
      inputs: Images `[batch, height, width, channels]` (or NCHW).
      is_training: Whether the BatchNorm layers use and update the batch
        statistics (a bool or a scalar boolean tensor).
      test_local_stats: Outside training, whether BatchNorm still uses the
        batch's statistics (the default) rather than the moving ones.

    Returns:
      A dict with `logits` (`[batch, num_classes]`) and `activations`: each
      layer's output after the ReLU, then the spatially averaged features.
    """
    checks.check_is_training(self, is_training)
    checks.check_is_training(self, test_local_stats, "test_local_stats")
    inputs = tf.convert_to_tensor(inputs)
    checks.check_rank(self, inputs, rank=4,
                      layout=conv.layout(self._data_format))
    activations = []
    net = inputs
    for conv_layer, bn_layer in zip(self._conv_modules, self._bn_modules):
      net = conv_layer(net)
      net = bn_layer(net, is_training=is_training,
                     test_local_stats=test_local_stats)
      net = tf.nn.relu(net)
      activations.append(net)
    spatial = [1, 2] if self._data_format == "NHWC" else [2, 3]
    flat_output = tf.reduce_mean(net, axis=spatial, name="avg_pool")
    activations.append(flat_output)
    logits = self._logits_module(flat_output)
    return {"logits": logits, "activations": activations}
