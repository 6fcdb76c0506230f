"""scale_gradient: identity on the forward pass, scaled gradient backward."""

import tensorflow as tf

from sonnet_like.core import types


def scale_gradient(t: tf.Tensor, scale: types.FloatLike) -> tf.Tensor:
  """Returns `t` unchanged; its gradient is multiplied by `scale`.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> x = tf.constant(3.)
      >>> with tf.GradientTape() as tape:
      ...   tape.watch(x)
      ...   y = snt.scale_gradient(x, 0.5) ** 2
      >>> float(y), float(tape.gradient(y, x))
      (9.0, 3.0)

  `scale=0` stops the gradient; `scale=-1` reverses it (as in
  gradient-reversal layers).

  Args:
    t: A tensor.
    scale: Factor for the gradient (a number or a scalar tensor). No gradient
      flows to `scale` itself.

  Returns:
    A tensor equal to `t`.
  """

  @tf.custom_gradient
  def identity(x):
    def grad(dy):
      return dy * tf.cast(scale, dy.dtype)
    return tf.identity(x), grad

  return identity(t)
