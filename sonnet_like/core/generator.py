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

Gaussian draws (`normal`, and `stateless_normal` of a seed) stay
TensorFlow's ops, which `tf.vectorized_map` would run in a `While` over the
members; with a static member count `_once_per_member` makes them once per
member instead: every member's numbers are TensorFlow's, bit for bit, with
XLA too. Chosen over Box-Muller in TF ops after the Philox below: that is
not bitwise (the kernel's scalar log and sincos round otherwise than TF's
ops, even in float64: 1.5% of draws off, by up to 3 ulp) and was slower
(a call drawing [256, 1], ~255 us of it the call itself, for 10 and 64
members: per member 285 and 520 us, Box-Muller 380-415 and 710-1010,
the `While` 355 and 1130; load ~1).
"""

from typing import Sequence

import tensorflow as tf
# pylint: disable-next=g-direct-tensorflow-import
from tensorflow.python.ops.parallel_for import pfor

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

  # Held as a tensor (a population member's), the draws are written with
  # ops `tf.vectorized_map` vectorises (the Philox below), bit for bit
  # TensorFlow's; other dtypes go through TensorFlow's kernels.

  def _uniform(self, shape, dtype):
    if not self._held() or tf.as_dtype(dtype) != tf.float32:
      return super()._uniform(shape, dtype)
    key, counter = self._prepare_key_counter(shape)
    return uniform_float32(shape, key, counter)

  def _uniform_full_int(self, shape, dtype, name=None):
    if not self._held() or tf.as_dtype(dtype) not in (tf.uint64, tf.int64):
      return super()._uniform_full_int(shape, dtype, name=name)
    key, counter = self._prepare_key_counter(shape)
    return uniform_full_int(shape, key, counter, dtype)

  def uniform(self, shape, minval=0, maxval=None, dtype=tf.float32,
              name=None):
    dtype = tf.as_dtype(dtype)
    if (not self._held() or dtype not in (tf.int32, tf.int64) or
        minval is None or maxval is None):
      return super().uniform(shape, minval, maxval, dtype, name)
    shape = tf.convert_to_tensor(shape)
    key, counter = self._prepare_key_counter(shape)
    return uniform_int(shape, key, counter, minval, maxval, dtype)

  def _standard_normal(self, shape, dtype):
    drawn = super()._standard_normal(shape, dtype)
    return _per_member(drawn) if self._held() else drawn

  def _prepare_key_counter(self, shape):
    if not self._held():
      return super()._prepare_key_counter(shape)
    # TensorFlow's, with casts for its bitcasts (see `skipped`).
    state = self.skip(tf.reduce_prod(shape))
    counter = tf.cast(state[:_COUNTER_SIZE], tf.uint64)
    key = tf.cast(state[_COUNTER_SIZE:_COUNTER_SIZE + 1], tf.uint64)
    return self._preprocess_key(key), counter


# ---- Philox-4x32-10 written with TensorFlow ops (`tf.vectorized_map`
# vectorises them; TensorFlow's random kernels have no vectorised form, so
# a population would draw member after member). Bit for bit the numbers of
# TensorFlow's CPU kernels (`random::PhiloxRandom` and its distributions).

_MASK = 0xFFFFFFFF
_M_A, _M_B = 0xD2511F53, 0xCD9E8D57  # Multipliers.
_W_A, _W_B = 0x9E3779B9, 0xBB67AE85  # Key increments (the Weyl sequence).
# The key `StatelessRandomGetKeyCounter` hashes a seed with.
_SEED_KEY = (0x3EC8F720, 0x02461E29)


def _u64(value) -> tf.Tensor:
  return tf.constant(value, tf.uint64)


def _words(value: tf.Tensor, mask=None, shift=None
           ) -> tuple[tf.Tensor, tf.Tensor]:
  """A uint64 tensor's low and high 32-bit words (as uint64)."""
  mask = _u64(_MASK) if mask is None else mask
  shift = _u64(32) if shift is None else shift
  return (tf.bitwise.bitwise_and(value, mask),
          tf.bitwise.right_shift(value, shift))


def _philox(counter: Sequence[tf.Tensor], key: Sequence[tf.Tensor]
            ) -> list[tf.Tensor]:
  """Ten Philox rounds: 4 counter and 2 key words (uint64 tensors holding
  32-bit values, broadcast together) -> 4 random 32-bit words. The
  constants are made once (inside a vectorised loop every op counts)."""
  mask, shift = _u64(_MASK), _u64(32)
  m_a, m_b, w_a, w_b = _u64(_M_A), _u64(_M_B), _u64(_W_A), _u64(_W_B)
  c0, c1, c2, c3 = counter
  k0, k1 = key
  for round_ in range(10):
    lo0, hi0 = _words(c0 * m_a, mask, shift)
    lo1, hi1 = _words(c2 * m_b, mask, shift)
    c0 = tf.bitwise.bitwise_xor(tf.bitwise.bitwise_xor(hi1, c1), k0)
    c1 = lo1
    c2 = tf.bitwise.bitwise_xor(tf.bitwise.bitwise_xor(hi0, c3), k1)
    c3 = lo0
    if round_ < 9:
      k0 = tf.bitwise.bitwise_and(k0 + w_a, mask)
      k1 = tf.bitwise.bitwise_and(k1 + w_b, mask)
  return [c0, c1, c2, c3]


def philox_words(key: tf.Tensor, counter: tf.Tensor, groups) -> tf.Tensor:
  """uint64 `[groups, 4]`: the 32-bit words Philox gives for `key` (uint64
  `[1]`) from the 128-bit `counter` (uint64 `[2]`, low word first) on, one
  row per counter value, as TensorFlow's kernels draw them."""
  index = tf.range(tf.cast(groups, tf.int64))
  low = counter[0] + tf.cast(index, tf.uint64)
  high = counter[1] + tf.cast(low < counter[0], tf.uint64)  # The carry.
  c0, c1 = _words(low)
  c2, c3 = _words(high)
  k0, k1 = _words(key[0])
  return tf.stack(_philox([c0, c1, c2, c3], [k0, k1]), axis=1)


def _size(shape) -> tf.Tensor:
  return tf.reduce_prod(tf.cast(shape, tf.int64))


def uniform_full_int(shape, key: tf.Tensor, counter: tf.Tensor,
                     dtype=tf.uint64) -> tf.Tensor:
  """`StatelessRandomUniformFullIntV2` for 64-bit integers: two words an
  element, the first the low one."""
  dtype = tf.as_dtype(dtype)
  if dtype not in (tf.uint64, tf.int64):
    raise ValueError(f"Generator: uniform_full_int here makes uint64 or "
                     f"int64, got {dtype.name}.")
  size = _size(shape)
  words = philox_words(key, counter, (size + 1) // 2)
  pairs = tf.reshape(words, [-1, 2])
  bits = tf.bitwise.bitwise_or(pairs[:, 0],
                               tf.bitwise.left_shift(pairs[:, 1], _u64(32)))
  return tf.reshape(tf.cast(bits[:size], dtype), shape)


def uniform_int(shape, key: tf.Tensor, counter: tf.Tensor, minval, maxval,
                dtype=tf.int32) -> tf.Tensor:
  """`StatelessRandomUniformIntV2`: `minval` plus a draw modulo the range,
  one word an element for int32, two (low first) for int64."""
  dtype = tf.as_dtype(dtype)
  size = _size(shape)
  low = tf.cast(minval, tf.int64)
  span = tf.cast(tf.cast(maxval, tf.int64) - low, tf.uint64)
  if dtype == tf.int32:
    words = tf.reshape(philox_words(key, counter, (size + 3) // 4), [-1])
    bits = words[:size]
    span = tf.bitwise.bitwise_and(span, _u64(_MASK))
  else:
    pairs = tf.reshape(philox_words(key, counter, (size + 1) // 2), [-1, 2])
    bits = tf.bitwise.bitwise_or(
        pairs[:, 0], tf.bitwise.left_shift(pairs[:, 1], _u64(32)))[:size]
  drawn = low + tf.cast(tf.math.floormod(bits, span), tf.int64)
  return tf.reshape(tf.cast(drawn, dtype), shape)


def uniform_float32(shape, key: tf.Tensor, counter: tf.Tensor) -> tf.Tensor:
  """`StatelessRandomUniformV2` in float32: [0, 1) from each word's 23 low
  bits (one word an element)."""
  size = _size(shape)
  words = tf.reshape(philox_words(key, counter, (size + 3) // 4), [-1])
  mantissa = tf.bitwise.bitwise_and(words[:size], _u64(0x7FFFFF))
  # Exactly the kernel's bitcast of 1.mantissa minus 1.
  return tf.reshape(tf.cast(mantissa, tf.float32) * 2.0**-23, shape)


def key_counter_of_seed(seed: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
  """`StatelessRandomGetKeyCounter` for Philox: the key and counter a
  stateless op of `seed` (int64 `[2]`) draws from."""
  seed = tf.cast(tf.cast(seed, tf.int64), tf.uint64)
  s0, s1 = _words(seed[0])
  t0, t1 = _words(seed[1])
  mixed = _philox([s0, s1, t0, t1], [_u64(_SEED_KEY[0]), _u64(_SEED_KEY[1])])
  def joined(low, high):
    return tf.bitwise.bitwise_or(low, tf.bitwise.left_shift(high, _u64(32)))

  # The counter's low 64 bits are 0, its high ones the last two words.
  return (tf.reshape(joined(mixed[0], mixed[1]), [1]),
          tf.stack([_u64(0), joined(mixed[2], mixed[3])]))


def stateless_uniform(shape, seed: tf.Tensor, minval=0.0, maxval=1.0
                      ) -> tf.Tensor:
  """`tf.random.stateless_uniform(shape, seed, minval, maxval)` in float32,
  bit for bit, with ops `tf.vectorized_map` vectorises."""
  key, counter = key_counter_of_seed(seed)
  unit = uniform_float32(shape, key, counter)
  minval = tf.convert_to_tensor(minval, tf.float32)
  maxval = tf.convert_to_tensor(maxval, tf.float32)
  return unit * (maxval - minval) + minval


# ---- Gaussian draws: TensorFlow's ops, made once per member under
# `tf.vectorized_map` (see the module docstring).


def stateless_normal(shape, seed: tf.Tensor) -> tf.Tensor:
  """`tf.random.stateless_normal(shape, seed)` in float32, bit for bit (its
  ops), without a `While` under `tf.vectorized_map`."""
  key, counter = tf.raw_ops.StatelessRandomGetKeyCounter(seed=seed)
  _per_member(key)
  return _per_member(tf.raw_ops.StatelessRandomNormalV2(
      shape=shape, key=key, counter=counter,
      alg=tf.random.Algorithm.AUTO_SELECT.value, dtype=tf.float32))


def _per_member(drawn: tf.Tensor) -> tf.Tensor:
  """`drawn`, whose op `tf.vectorized_map` is to make once per member
  (`_once_per_member`; in a graph: an eager tensor has no op)."""
  if not tf.executing_eagerly():
    drawn.op.pfor_converter = _once_per_member
  return drawn


def _once_per_member(pfor_input) -> list[pfor.WrappedTensor]:
  """`tf.vectorized_map`'s conversion of a stateless random op: the op
  again for each member, on that member's inputs, its outputs stacked. A
  member count known only when run leaves it to pfor's `While`."""
  count = tf.get_static_value(pfor_input.pfor.loop_len_vector)
  if count is None:
    raise pfor.ConversionNotImplementedError(
        "Generator: a draw per member needs a static member count.")
  members = int(count[0])
  inputs = []
  for index in range(pfor_input.num_inputs):
    value, stacked, _ = pfor_input.input(index)
    inputs.append(tf.unstack(value, members) if stacked
                  else [value] * members)
  op = pfor_input.op
  made = [tf.compat.v1.get_default_graph().create_op(
      op.type, list(member), [x.dtype for x in op.outputs],
      attrs=op.node_def.attr) for member in zip(*inputs)]
  return [pfor.wrap(tf.stack([m.outputs[i] for m in made]), True)
          for i in range(len(op.outputs))]
