"""The private hooks of `tf.random.Generator` that `core/generator.py` uses.

`core.generator.Generator` is a `tf.random.Generator` that draws from a
state held as a tensor (a population member's): it overrides the private
methods every draw goes through (the subclass is its whole point, so they
stay there, listed here and tested). Public replacement: none
(`tf.random.Generator` documents no extension points); the stateless ops
with an explicit key and counter, if a future TensorFlow drops the hooks.
"""

import tensorflow as tf

# The private methods `Generator` overrides or calls on its base, with
# the parameters it passes (after `self`).
GENERATOR_HOOKS = {
    "_skip_single_var": ("var", "delta"),
    "_uniform": ("shape", "dtype"),
    "_uniform_full_int": ("shape", "dtype", "name"),
    "_standard_normal": ("shape", "dtype"),
    "_truncated_normal": ("shape", "dtype"),
    "_prepare_key_counter": ("shape",),
    "_preprocess_key": ("key",),
}


def preprocess_key(generator: tf.random.Generator, key: tf.Tensor
                   ) -> tf.Tensor:
  """The key as `generator`'s stateless ops take it
  (`Generator._preprocess_key`)."""
  return generator._preprocess_key(key)  # pylint: disable=protected-access
