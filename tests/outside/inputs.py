"""The inputs the probes feed: fixed, smooth values of any shape."""

import numpy as np
import tensorflow as tf


def sine(shape, dtype=tf.float32):
  """`sin(0), sin(1), ...` (computed in float32) laid out in `shape`, as
  `dtype`."""
  size = int(np.prod(shape))
  return tf.cast(tf.reshape(tf.sin(tf.range(size, dtype=tf.float32)), shape),
                 dtype)
