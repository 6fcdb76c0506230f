"""Rolls an environment out eagerly, in a `tf.function` and under XLA."""

from collections.abc import Callable

import numpy as np
import tensorflow as tf


def _loop(env, actions):
  def body(t, observations):
    return t + 1, observations.write(t, env.step(actions[t]).final_observation)

  n = tf.shape(actions)[0]
  _, observations = tf.while_loop(lambda t, *_: t < n, body,
                                  (0, tf.TensorArray(tf.float32, n)))
  return observations.stack()


def three_rollouts(make_env: Callable[[], object], actions: tf.Tensor
                   ) -> list[np.ndarray]:
  """The observations reached, `[steps, num_envs, ...]`, from three fresh
  environments: stepped eagerly, in a compiled `tf.while_loop`, and in one
  compiled with XLA (as the RL scenarios compile their rollouts)."""
  results = []
  for mode in ("eager", "function", "xla"):
    env = make_env()
    if mode == "eager":
      results.append(np.stack([env.step(a).final_observation.numpy()
                               for a in actions]))
    else:
      results.append(tf.function(_loop, jit_compile=mode == "xla")(
          env, actions).numpy())
  return results
