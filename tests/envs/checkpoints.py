"""Checks that a checkpoint carries an in-graph environment's state and
random generator."""

from collections.abc import Callable, Sequence

import numpy as np
import tensorflow as tf


def assert_restores(make_env: Callable[[int], object],
                    actions: Sequence[tf.Tensor], tmp_path) -> None:
  """Steps `make_env(seed=5)` through the first 10 `actions`, saves it and
  steps on; one made with seed 99 and restored must observe the same on the
  rest of the `actions`."""
  env = make_env(5)
  env.reset(seed=5)
  for action in actions[:10]:
    env.step(action)
  path = tf.train.Checkpoint(env=env).save(str(tmp_path / "ckpt"))
  rest = [env.step(a).observation.numpy() for a in actions[10:]]
  other = make_env(99)
  tf.train.Checkpoint(env=other).restore(path)
  again = [other.step(a).observation.numpy() for a in actions[10:]]
  np.testing.assert_array_equal(np.stack(rest), np.stack(again))
