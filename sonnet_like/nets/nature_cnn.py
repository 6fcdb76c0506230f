"""NatureCNN: the convolutional torso of DQN (Mnih et al. 2015) for Atari."""

import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import base
from sonnet_like.core import checks
from sonnet_like.core import initializers
from sonnet_like.core import types
from sonnet_like.modules import conv
from sonnet_like.modules import linear

# (output channels, kernel, stride) of the three convolutions, as in
# "Human-level control through deep reinforcement learning" (Nature, 2015).
LAYERS = ((32, 8, 4), (64, 4, 2), (64, 3, 1))


class NatureCNN(base.Module):
  """The Nature DQN network: three convolutions, a hidden layer, an output.

  `conv_0`: 32 filters 8x8 stride 4, `conv_1`: 64 4x4 stride 2, `conv_2`:
  64 3x3 stride 1 (all VALID padding, ReLU), flattened, `hidden`: `Linear`
  of `hidden_size` (512) with ReLU, then `output`: `Linear` of
  `num_outputs` (no activation; left out when `num_outputs` is None, so the
  network returns the hidden features, as SB3's `NatureCNN` features
  extractor does). On the standard `[batch, 84, 84, 4]` Atari observations
  (`snt.envs.atari`) it has 1,684,128 + 513 * num_outputs parameters.

  uint8 inputs (pixels) are scaled to [0, 1] inside the call, so
  observations can reach a compiled step as uint8; float inputs are used as
  they are.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> net = snt.nets.NatureCNN(4, name="doc_nature_cnn")
      >>> net(tf.zeros([2, 84, 84, 4], tf.uint8)).shape
      TensorShape([2, 4])
      >>> sum(int(tf.size(v)) for v in net.trainable_variables)
      1686180
  """

  def __init__(self, num_outputs: int | None,
               hidden_size: int = 512,
               activation: types.Activation = tf.nn.relu,
               w_init: initializers.Initializer | None = None,
               b_init: initializers.Initializer | None = None,
               name: str | None = None):
    """Constructs the network and its layers.

    Args:
      num_outputs: Size of the output layer (for example one Q-value or logit
        per action); None returns the hidden features instead.
      hidden_size: Size of the hidden layer after the convolutions.
      activation: Activation after each convolution and the hidden layer.
      w_init: Initializer of every layer's weights (default: Sonnet's
        truncated normal for `Conv2D` and `Linear`).
      b_init: Initializer of every layer's biases (default: zeros).
      name: Name of the module.
    """
    super().__init__(name=name)
    owner = type(self).__name__
    arguments.check_positive_int(owner, "num_outputs", num_outputs,
                                 optional=True)
    arguments.check_positive_int(owner, "hidden_size", hidden_size)
    if not callable(activation):
      raise ValueError(f"{owner}: activation must be callable, got "
                       f"{activation!r}.")
    self._activation = activation
    self._convs = [
        conv.Conv2D(channels, kernel, stride=stride, padding="VALID",
                    w_init=w_init, b_init=b_init, name=f"conv_{i}")
        for i, (channels, kernel, stride) in enumerate(LAYERS)]
    self._hidden = linear.Linear(hidden_size, w_init=w_init, b_init=b_init,
                                 name="hidden")
    self._output = None if num_outputs is None else linear.Linear(
        num_outputs, w_init=w_init, b_init=b_init, name="output")

  def __call__(self, inputs: tf.Tensor) -> tf.Tensor:
    """Maps observations to outputs.

    Args:
      inputs: `[batch, height, width, channels]` observations (84x84x4 for
        Atari): uint8 (scaled by 1/255 here) or floating point (as is).

    Returns:
      `[batch, num_outputs]`, or `[batch, hidden_size]` without an output
      layer.
    """
    inputs = tf.convert_to_tensor(inputs)
    checks.check_rank(self, inputs, rank=4, layout="[N, H, W, C]")
    if inputs.dtype == tf.uint8:
      net = tf.cast(inputs, tf.float32) * (1.0 / 255.0)
    else:
      checks.check_floating(self, inputs)
      net = inputs
    for layer in self._convs:
      net = self._activation(layer(net))
    features = net.shape[1:].num_elements()
    if features is None:
      raise checks.InputShapeError(
          f"{checks.describe(self)} needs inputs of known height, width and "
          f"channels, got shape {inputs.shape}.")
    net = tf.reshape(net, [-1, features])
    net = self._activation(self._hidden(net))
    return net if self._output is None else self._output(net)
