"""`Generator`: TensorFlow's Philox generator, also over a state tensor.

Every draw of a `tf.random.Generator` (`uniform`, `normal`,
`uniform_full_int`, `make_seeds`, ...) reads its state and advances its
counter with one stateful op (`RngReadAndSkip`), then hands the key and
counter it read to a stateless op. That one op needs a device resource, so a
generator whose state variable holds a tensor (a population member's
`MemberVariable`, whose value is that member's slice) cannot draw, and
`tf.vectorized_map` cannot vectorise it.

`Generator` is a `tf.random.Generator` that does the read-and-skip itself
when its state is such a tensor-valued variable: it reads the state, adds
`256 * delta` to the 128-bit counter (what the kernel adds, with XLA too)
and writes the new state back. The stateless op that follows is TensorFlow's
own, so a member's stream is bit for bit the stream of a real generator
with the same state. On a real variable it is TensorFlow's generator, op
for op (a solo run's graph does not change).

    >>> import tensorflow as tf
    >>> real = tf.random.Generator.from_key_counter(0, [0, 3], "philox")
    >>> ours = Generator.from_key_counter(0, [0, 3], "philox")
    >>> bool(tf.reduce_all(real.uniform([5]) == ours.uniform([5])))
    True

`tf.vectorized_map` has no vectorised form of TensorFlow's stateless random
ops for a key per member (it would run them in a `While` over the members),
so with a static member count `per_iteration.convert` makes each draw's op
once per member, on that member's key and counter: every member's numbers
are TensorFlow's, bit for bit, with XLA too (`stateless_uniform` and
`stateless_normal` do the same for a seed). Measured against the other
ways (load ~1-4): Philox written in TF ops (vectorised; this module's
first form) cost ~140-280 us a draw at 1-64 members, once per member
12-240 us; Box-Muller in TF ops is not bitwise (1.5% of normal draws off
by up to 3 ulp) and slower than once per member; the `While` was 355 and
1130 us a [256, 1] normal draw at 10 and 64 members, once per member 285
and 520 us.
"""

import tensorflow as tf

from sonnet_like.core import per_iteration
from sonnet_like.core.tf_private import pfor
from sonnet_like.core.tf_private import random as tf_random

# The counter words of a Philox state [counter low, counter high, key].
_COUNTER_SIZE = 2
# What `RngReadAndSkip` adds to the counter per element drawn (TensorFlow's
# kernels, CPU and XLA, skip 256 counter values per element).
_SKIP_PER_ELEMENT = 256


def skipped(state: tf.Tensor, delta) -> tf.Tensor:
  """A Philox state `[3]` int64 with its counter advanced as `RngReadAndSkip`
  advances it for `delta` elements (128-bit, the low word carrying into the
  high one)."""
  # Casts between int64 and uint64 keep the bits (two's complement) and,
  # unlike bitcasts, `tf.vectorized_map` vectorises them.
  counter = tf.cast(state[:_COUNTER_SIZE], tf.uint64)
  step = tf.cast(delta, tf.uint64) * tf.constant(_SKIP_PER_ELEMENT, tf.uint64)
  low = counter[0] + step
  high = counter[1] + tf.cast(low < step, tf.uint64)  # The carry.
  return tf.concat([tf.cast(tf.stack([low, high]), tf.int64),
                    state[_COUNTER_SIZE:]], axis=0)


class Generator(tf.random.Generator):
  """A Philox `tf.random.Generator` whose state may be a tensor-valued
  variable (see the module docstring); made like TensorFlow's
  (`from_key_counter`, `from_seed`, ...)."""

  # The private methods below override TensorFlow's: the wall
  # (`core/tf_private/random.py`, GENERATOR_HOOKS) lists and tests them.

  def _skip_single_var(self, var, delta):
    if getattr(var, "tensor_value", None) is None:  # A real variable.
      return super()._skip_single_var(var, delta)
    alg = self.algorithm
    if alg != tf.random.Algorithm.PHILOX.value:
      raise ValueError(f"Generator: a state held as a tensor draws with "
                       f"Philox only, got algorithm {alg!r}.")
    state = var.read_value()
    var.assign(skipped(state, delta))
    return state

  def _held(self) -> bool:
    return getattr(self.state, "tensor_value", None) is not None

  # Held as a tensor (a population member's): TensorFlow's stateless op of
  # each draw, made once per member by `tf.vectorized_map`.

  def _uniform(self, shape, dtype):
    drawn = super()._uniform(shape, dtype)
    return _per_iteration(drawn) if self._held() else drawn

  def _uniform_full_int(self, shape, dtype, name=None):
    drawn = super()._uniform_full_int(shape, dtype, name=name)
    return _per_iteration(drawn) if self._held() else drawn

  def uniform(self, shape, minval=0, maxval=None, dtype=tf.float32,
              name=None):
    drawn = super().uniform(shape, minval, maxval, dtype, name)
    bounded_int = (tf.as_dtype(dtype).is_integer and minval is not None and
                   maxval is not None)  # Else a draw marked above.
    return _per_iteration(drawn) if self._held() and bounded_int else drawn

  def _standard_normal(self, shape, dtype):
    drawn = super()._standard_normal(shape, dtype)
    return _per_iteration(drawn) if self._held() else drawn

  def _truncated_normal(self, shape, dtype):
    drawn = super()._truncated_normal(shape, dtype)
    return _per_iteration(drawn) if self._held() else drawn

  def _prepare_key_counter(self, shape):
    if not self._held():
      return super()._prepare_key_counter(shape)
    # TensorFlow's, with casts for its bitcasts (see `skipped`).
    state = self.skip(tf.reduce_prod(shape))
    counter = tf.cast(state[:_COUNTER_SIZE], tf.uint64)
    key = tf.cast(state[_COUNTER_SIZE:_COUNTER_SIZE + 1], tf.uint64)
    return tf_random.preprocess_key(self, key), counter


# ---- Draws from a seed: TensorFlow's ops (a solo run's are the very ops of
# `tf.random.stateless_*`), made once per member under `tf.vectorized_map`.


def stateless_uniform(shape, seed: tf.Tensor, minval=0.0, maxval=1.0
                      ) -> tf.Tensor:
  """`tf.random.stateless_uniform(shape, seed, minval, maxval)` in float32,
  bit for bit (its ops), without a `While` under `tf.vectorized_map`."""
  key, counter = _key_counter(seed)
  unit = _per_iteration(tf.raw_ops.StatelessRandomUniformV2(
      shape=shape, key=key, counter=counter,
      alg=tf.random.Algorithm.AUTO_SELECT.value, dtype=tf.float32))
  minval = tf.convert_to_tensor(minval, tf.float32)
  maxval = tf.convert_to_tensor(maxval, tf.float32)
  return unit * (maxval - minval) + minval


def stateless_normal(shape, seed: tf.Tensor) -> tf.Tensor:
  """`tf.random.stateless_normal(shape, seed)` in float32, bit for bit (its
  ops), without a `While` under `tf.vectorized_map`."""
  key, counter = _key_counter(seed)
  return _per_iteration(tf.raw_ops.StatelessRandomNormalV2(
      shape=shape, key=key, counter=counter,
      alg=tf.random.Algorithm.AUTO_SELECT.value, dtype=tf.float32))


def _key_counter(seed: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
  """The key and counter TensorFlow's stateless ops make of `seed`."""
  key, counter = tf.raw_ops.StatelessRandomGetKeyCounter(seed=seed)
  _per_iteration(key)
  return key, counter


def _per_iteration(drawn: tf.Tensor) -> tf.Tensor:
  """`drawn`, whose op `tf.vectorized_map` is to make once per member
  (`per_iteration.convert`; in a graph: an eager tensor has no op)."""
  if not tf.executing_eagerly():
    pfor.set_converter(drawn.op, per_iteration.convert)
  return drawn
