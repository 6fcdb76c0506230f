"""Linear: a fully connected layer, `y = x @ w + b`."""

import math

import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import autograph
from sonnet_like.core import base
from sonnet_like.core import checks
from sonnet_like.core import initializers
from sonnet_like.core import once


class Linear(base.Module):
  """Linear module, `outputs = inputs @ w + b`, over the last axis.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> linear = snt.Linear(3, name="encoder")
      >>> linear(tf.ones([2, 4])).shape
      TensorShape([2, 3])
      >>> [v.name for v in linear.variables]
      ['encoder/b:0', 'encoder/w:0']
  """

  def __init__(self, output_size: int, with_bias: bool = True,
               w_init: initializers.Initializer | None = None,
               b_init: initializers.Initializer | None = None,
               name: str | None = None):
    """Constructs a Linear module.

    Args:
      output_size: Size of the output's last axis.
      with_bias: Whether to add a bias `b`.
      w_init: Initializer for `w`; by default a truncated normal with stddev
        `1 / sqrt(input_size)`.
      b_init: Initializer for `b`; zeros by default. Must be None without a
        bias.
      name: Name of the module.
    """
    super().__init__(name=name)
    arguments.check_positive_int("Linear", "output_size", output_size)
    arguments.check_no_b_init_without_bias("Linear", with_bias, b_init)
    self.output_size = output_size
    self.with_bias = with_bias
    self.w_init = w_init
    self.b_init = b_init if b_init is not None or not with_bias else (
        initializers.Zeros())

  @once.once
  def _initialize(self, inputs: tf.Tensor) -> None:
    checks.check_rank(self, inputs, min_rank=2, layout="[..., input_size]")
    checks.check_floating(self, inputs)
    self.input_size = checks.known_dim(self, inputs, -1, "input size")
    self.dtype = inputs.dtype
    if self.w_init is None:
      self.w_init = initializers.TruncatedNormal(
          stddev=1 / math.sqrt(self.input_size))
    self.w = tf.Variable(
        self.w_init([self.input_size, self.output_size], inputs.dtype),
        name="w")
    if self.with_bias:
      self.b = tf.Variable(self.b_init([self.output_size], inputs.dtype),
                           name="b")

  @autograph.as_written
  def __call__(self, inputs: tf.Tensor) -> tf.Tensor:
    """Applies the layer to `inputs` of shape `[..., input_size]`."""
    if not isinstance(inputs, tf.Tensor):
      inputs = tf.convert_to_tensor(inputs)
    self._initialize(inputs)
    checks.check_rank(self, inputs, min_rank=2, layout="[..., input_size]")
    checks.check_built_dtype(self, inputs, self.dtype)
    inputs = checks.check_dim(self, inputs, -1, self.input_size, "input size")
    outputs = tf.matmul(inputs, self.w)
    if self.with_bias:
      outputs = tf.add(outputs, self.b)
    return outputs
