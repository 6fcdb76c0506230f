"""leaky_clip_by_value: clipping whose gradient can pull values back."""

import tensorflow as tf

from sonnet_like.core import types


def leaky_clip_by_value(t: tf.Tensor, clip_value_min: types.TensorLike,
                        clip_value_max: types.TensorLike,
                        name: str | None = None) -> tf.Tensor:
  """Clips `t` to `[clip_value_min, clip_value_max]` with a leaky gradient.

  The forward pass is `tf.clip_by_value`. Backward, the gradient is passed
  through unchanged, except where `t` is already outside the range and a
  gradient-descent step would push it further out: there it is zero. So a
  clipped value still gets a gradient that moves it back into range, where
  `tf.clip_by_value` would give it none. (This assumes minimisation; for
  gradient ascent, negate the gradient first.)

      >>> import sonnet_like as snt, tensorflow as tf
      >>> t = tf.constant([-2., 0.5, 2.])
      >>> with tf.GradientTape() as tape:
      ...   tape.watch(t)
      ...   y = snt.leaky_clip_by_value(t, -1., 1.)
      ...   loss = tf.reduce_sum(y * tf.constant([1., 1., 1.]))
      >>> y.numpy(), tape.gradient(loss, t).numpy()
      (array([-1. ,  0.5,  1. ], dtype=float32), array([0., 1., 1.], \
dtype=float32))

  Args:
    t: A tensor.
    clip_value_min: Scalar, or tensor of `t`'s shape: the lower bound.
    clip_value_max: Scalar, or tensor of `t`'s shape: the upper bound.
    name: Optional name of the clip op.

  Returns:
    The clipped tensor. No gradient flows to the bounds.

  Raises:
    ValueError: if the bounds would broadcast `t` to a larger shape.
  """

  # Read variable bounds here: a variable read inside the custom-gradient
  # function would ask for a gradient with respect to it.
  clip_value_min, clip_value_max = (
      tf.convert_to_tensor(v) if isinstance(v, tf.Variable) else v
      for v in (clip_value_min, clip_value_max))

  @tf.custom_gradient
  def clip(x):
    clipped = tf.clip_by_value(x, clip_value_min, clip_value_max, name=name)

    def grad(dy):
      pushed_out = tf.logical_or(
          tf.logical_and(x < clip_value_min, dy > 0),
          tf.logical_and(x > clip_value_max, dy < 0))
      return tf.where(pushed_out, tf.zeros_like(dy), dy)

    return clipped, grad

  return clip(t)
