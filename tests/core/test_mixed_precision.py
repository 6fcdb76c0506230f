"""Tests for sonnet_like/core/mixed_precision.py."""

import numpy as np
import pytest
import sonnet as reference
import tensorflow as tf

import sonnet_like as snt

mp = snt.mixed_precision
_HALF = [tf.float32, tf.float16]


@pytest.fixture(autouse=True)
def _reset_mode():
  mp.disable()
  reference.mixed_precision.disable()
  yield
  mp.disable()
  reference.mixed_precision.disable()


class HalfLinear(snt.Linear):
  __call__ = mp.modes(_HALF)(snt.Linear.__call__)


def _seen_dtypes(decorator):
  """A decorated function that records the dtypes it is called with."""
  seen = []

  def f(x):
    seen.append(x.dtype)
    return x * 2

  return decorator(f), seen


def test_public_api():
  assert sorted(mp.__all__) == ["disable", "enable", "modes", "scope"]
  assert sorted(mp.__all__) == sorted(reference.mixed_precision.__all__)


def test_linear_computes_in_float16_with_float32_variables():
  layer = HalfLinear(3, name="half_linear")
  x = tf.random.normal([4, 5])
  mp.enable(tf.float16)
  first = layer(x)
  second = layer(x)
  assert layer.w.dtype == tf.float32 and layer.b.dtype == tf.float32
  assert (first.dtype, second.dtype) == (tf.float32, tf.float16)
  expected = (tf.cast(x, tf.float16) @ tf.cast(layer.w, tf.float16) +
              tf.cast(layer.b, tf.float16))
  np.testing.assert_array_equal(second, expected)
  np.testing.assert_allclose(first, x @ layer.w + layer.b, rtol=1e-6)
  assert not np.array_equal(first, tf.cast(second, tf.float32))


def test_matches_sonnet_side_by_side():
  theirs_cls = type("TheirHalfLinear", (reference.Linear,), {
      "__call__": reference.mixed_precision.modes(_HALF)(
          reference.Linear.__call__)})
  x = tf.random.normal([4, 5])
  ours, theirs = HalfLinear(3), theirs_cls(3)
  ours(x), theirs(x)  # Mode off: builds, does not count as the first call.
  for mine, other in zip(ours.variables, theirs.variables):
    other.assign(mine)
  for dtype in (tf.float16, tf.bfloat16, None):
    mp.enable(dtype)
    reference.mixed_precision.enable(dtype)
    for _ in range(2):
      a, b = ours(x), theirs(x)
      # Same values; ours stay in the compute dtype, Sonnet casts to float32.
      assert b.dtype == tf.float32
      np.testing.assert_array_equal(tf.cast(a, tf.float32), b)


def test_gradients_reach_float32_variables():
  layer = HalfLinear(2, name="half_grad")
  x = tf.ones([3, 4])
  with mp.scope(tf.float16):
    layer(x)
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(layer(x))
  grads = tape.gradient(loss, layer.trainable_variables)
  assert [g.dtype for g in grads] == [tf.float32, tf.float32]
  np.testing.assert_allclose(grads[1], np.full([4, 2], 3.))


def test_mlp_stack_of_linears():
  # A stack whose own call is decorated: every Module variable it reads is
  # cast, and the layers' dtype checks accept the compute dtype.
  mlp_cls = getattr(getattr(snt, "nets", None), "MLP", None)
  if mlp_cls is not None:
    class HalfMLP(mlp_cls):
      __call__ = mp.modes(_HALF)(mlp_cls.__call__)
    model = HalfMLP([8, 8, 2], name="half_mlp")
  else:
    class HalfStack(snt.Module):
      def __init__(self, name=None):
        super().__init__(name=name)
        self.layers = [snt.Linear(8), snt.Linear(8), snt.Linear(2)]

      @mp.modes(_HALF)
      def __call__(self, x):
        for i, layer in enumerate(self.layers):
          x = layer(x) if i == 2 else tf.nn.relu(layer(x))
        return x
    model = HalfStack(name="half_mlp")
  x = tf.random.normal([5, 4])
  with mp.scope(tf.float16):
    full = model(x)
    half = model(x)
  assert all(v.dtype == tf.float32 for v in model.variables)
  assert half.dtype == tf.float16
  half = tf.cast(half, tf.float32)
  np.testing.assert_allclose(half, full, rtol=2e-2, atol=2e-2)
  assert not np.array_equal(half, full)
  # Outside the scope: float32 again, and float16 inputs are refused.
  np.testing.assert_array_equal(model(x), full)
  first_layer = [m for m in model.submodules if isinstance(m, snt.Linear)][0]
  with pytest.raises(TypeError, match="built for float32 inputs, got float16"):
    first_layer(tf.cast(x, tf.float16))


def test_invalid_mode_runs_unchanged():
  f, seen = _seen_dtypes(mp.modes([tf.float32, tf.bfloat16]))
  mp.enable(tf.float16)
  x = tf.ones([2])
  assert f(x).dtype == tf.float32 and f(x).dtype == tf.float32
  assert seen == [tf.float32] * 2


def test_plain_function_first_call_full_precision():
  f, seen = _seen_dtypes(mp.modes(_HALF))
  x = tf.ones([2])
  f(x)  # With the mode off, a call does not count as the first call.
  mp.enable(tf.float16)
  outputs = [f(x), f(x)]
  assert seen == [tf.float32, tf.float32, tf.float16]
  assert [o.dtype for o in outputs] == [tf.float32, tf.float16]


def test_per_instance_first_call_and_bound_methods():
  class Doubler(snt.Module):
    def __call__(self, x):
      self.seen = x.dtype
      return x * 2

  a, b = Doubler(), Doubler()
  a.double = mp.modes(_HALF)(a.__call__)
  mp.enable(tf.float16)
  x = tf.ones([1])
  a.double(x)
  assert a.seen == tf.float32
  a.double(x)
  assert a.seen == tf.float16
  b(x)
  assert b.seen == tf.float32  # Not decorated.


def test_non_float_inputs_are_not_cast():
  f, seen = _seen_dtypes(mp.modes(_HALF))
  mp.enable(tf.float16)
  f(tf.ones([1], tf.int32))
  assert f(tf.ones([1], tf.int32)).dtype == tf.int32
  assert seen == [tf.int32, tf.int32]


def test_scope_restores_previous_mode_even_on_error():
  f, seen = _seen_dtypes(mp.modes(_HALF))
  x = tf.ones([1])
  f(x)
  mp.enable(tf.float32)
  with pytest.raises(RuntimeError):
    with mp.scope(tf.float16):
      f(x)
      f(x)
      raise RuntimeError
  f(x)
  assert seen == [tf.float32, tf.float32, tf.float16, tf.float32]


def test_enable_rejects_non_float_dtypes():
  with pytest.raises(ValueError, match="mixed_precision.enable: dtype must be"):
    mp.enable(tf.int32)


def test_inside_tf_function():
  layer = HalfLinear(2, name="half_fn")
  x = tf.ones([1, 3])
  mp.enable(tf.float16)
  layer(x)
  out = tf.function(layer)(x)
  assert out.dtype == tf.float16
  np.testing.assert_array_equal(out, layer(x))
