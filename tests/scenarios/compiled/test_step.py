"""apply_update (clipping, NaN guard, both optimizer kinds) and the K-step
compiled function."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from sonnet_like.scenarios.compiled import guard
from sonnet_like.scenarios.compiled import step


class _PlainSGD:
  """The Sonnet optimizer protocol: apply(updates, parameters)."""

  def __init__(self, lr):
    self.lr = lr

  def apply(self, updates, parameters):
    for u, p in zip(updates, parameters):
      p.assign_sub(self.lr * u)


def _apply(optimizer, grads, **kwargs):
  v = [tf.Variable([1.0, 2.0]), tf.Variable([[3.0]])]
  recorder = step.FiniteRecorder()
  recorder.create()

  @tf.function
  def run():
    recorder.start()
    ok = guard.apply_update(optimizer, [tf.constant(g) if g is not None
                                       else None for g in grads], v,
                           recorder=recorder, **kwargs)
    return ok, recorder.finish()

  ok, recorded = run()
  return [x.numpy() for x in v], bool(ok), bool(recorded)


@pytest.mark.parametrize("make", [lambda: keras.optimizers.SGD(0.5),
                                  lambda: _PlainSGD(0.5)],
                         ids=["keras", "apply_protocol"])
def test_update_matches_sgd(make):
  values, ok, recorded = _apply(make(), [[1.0, -2.0], [[4.0]]])
  np.testing.assert_allclose(values[0], [0.5, 3.0])
  np.testing.assert_allclose(values[1], [[1.0]])
  assert ok and recorded


def test_sonnet_optimizer_side_by_side():
  snt2 = pytest.importorskip("sonnet")
  grads = [[1.0, -2.0], [[4.0]]]
  ours, _, _ = _apply(snt2.optimizers.Adam(0.1), grads)
  keras_values, _, _ = _apply(keras.optimizers.Adam(0.1, epsilon=1e-8), grads)
  for a, b in zip(ours, keras_values):
    np.testing.assert_allclose(a, b, rtol=1e-5)


def test_clip_by_global_norm_matches_tensorflow():
  grads = [np.array([3.0, 4.0], np.float32), np.array([[12.0]], np.float32)]
  clipped, _ = tf.clip_by_global_norm([tf.constant(g) for g in grads], 2.0)
  values, _, _ = _apply(_PlainSGD(1.0), grads, clip_norm=2.0)
  np.testing.assert_allclose(values[0], [1.0, 2.0] - clipped[0].numpy(),
                             rtol=1e-6)
  np.testing.assert_allclose(values[1], [[3.0]] - clipped[1].numpy(),
                             rtol=1e-6)


def test_clip_by_global_norm_float16_and_mixed_precisions():
  # Squares past float16's range (65504): tf.clip_by_global_norm gives NaN.
  (half,), norm = guard.clip_by_global_norm(
      [tf.constant([300.0, 400.0], tf.float16)], 1.0)
  assert half.dtype == tf.float16 and float(norm) == 500.0
  np.testing.assert_allclose(half.numpy(), [0.6, 0.8], rtol=1e-3)
  # float32 with float64: summed in float64, each keeps its dtype.
  grads = [tf.constant([3.0, 4.0]), tf.constant([12.0], tf.float64)]
  clipped, norm = guard.clip_by_global_norm(grads, 2.0)
  assert [c.dtype for c in clipped] == [tf.float32, tf.float64]
  assert norm.dtype == tf.float64 and float(norm) == 13.0
  np.testing.assert_allclose(clipped[0].numpy(), [6 / 13, 8 / 13], rtol=1e-6)
  np.testing.assert_allclose(clipped[1].numpy(), [24 / 13], rtol=1e-12)
  # Within the norm, the gradients come back unchanged, bit for bit.
  small = [tf.constant([0.1, -0.2]), tf.constant([[0.3]])]
  unchanged, _ = guard.clip_by_global_norm(small, 1.0)
  for a, b in zip(unchanged, small):
    np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("clip_norm", [None, 1.0], ids=["no_clip", "clip"])
@pytest.mark.parametrize("grads, loss", [
    ([[np.nan, 0.0], [[1.0]]], None),
    ([[1.0, 0.0], [[np.inf]]], None),
    ([[1.0, 0.0], [[1.0]]], np.nan),
])
def test_nonfinite_update_is_not_applied(grads, loss, clip_norm):
  kwargs = {} if loss is None else {"loss": tf.constant(loss, tf.float32)}
  kwargs["clip_norm"] = clip_norm
  values, ok, recorded = _apply(keras.optimizers.Adam(0.1), grads, **kwargs)
  np.testing.assert_array_equal(values[0], [1.0, 2.0])
  np.testing.assert_array_equal(values[1], [[3.0]])
  assert not ok and not recorded


@pytest.mark.parametrize("tensors, expected", [
    # float16 elements summing past its maximum (65504) are still finite.
    ([np.full([100], 60000.0, np.float16)], True),
    ([np.array([1.0, np.inf], np.float16)], False),
    # Mixed precisions: summed in float64, a scalar joins unreduced.
    ([np.ones([3], np.float32), np.float64(2.0)], True),
    ([np.ones([3], np.float32), np.float64(np.nan)], False),
    ([np.array([1, 2], np.int32)], True),  # Integers are not checked.
])
def test_all_finite(tensors, expected):
  assert bool(guard.all_finite([tf.constant(t) for t in tensors])) is expected


def test_none_gradients_are_dropped():
  values, ok, _ = _apply(_PlainSGD(1.0), [[1.0, 1.0], None])
  np.testing.assert_allclose(values[0], [0.0, 1.0])
  np.testing.assert_array_equal(values[1], [[3.0]])
  assert ok


def test_all_none_gradients_is_an_error():
  with pytest.raises(ValueError, match="no variable received a gradient"):
    _apply(_PlainSGD(1.0), [None, None])


def test_not_an_optimizer():
  with pytest.raises(TypeError, match="optimizer must have apply_gradients"):
    _apply(object(), [[1.0, 1.0], [[1.0]]])


def test_train_function_runs_n_steps_and_stops_on_nonfinite():
  counter = tf.Variable(0)
  values = tf.constant([1.0, 2.0, np.nan, 4.0])

  def one_step():
    value = values[counter % 4]
    finite = tf.math.is_finite(value)
    counter.assign_add(1)
    return {"value": value}, finite

  for stop, expected in [(True, 3), (False, 4)]:
    counter.assign(0)
    function = step.make_train_function(one_step, stop_on_nonfinite=stop)
    logs, finite = function(tf.constant(4))
    assert counter.numpy() == expected and not bool(finite)
    counter.assign(0)
    logs, finite = function(tf.constant(2))
    assert counter.numpy() == 2 and bool(finite)
    assert logs["value"].numpy() == 2.0
    assert function.experimental_get_tracing_count() == 1


def test_train_function_traces_the_step_once():
  # The step runs twice in the looped function's graph (once for the logs'
  # structure, then as the loop's body); Python runs it once.
  traces = []

  def one_step():
    traces.append(1)
    return {"value": tf.constant(1.0)}, tf.constant(True)

  function = step.make_train_function(one_step, stop_on_nonfinite=True)
  _, finite = function(tf.constant(3))
  assert bool(finite) and len(traces) == 1


def test_deferred_update_is_applied_and_only_the_loss_is_checked():
  # Checked per call instead (CallRollback): a NaN gradient under a finite
  # loss is applied, and the verdict covers the loss alone...
  values, ok, recorded = _apply(_PlainSGD(1.0), [[np.nan, 0.0], [[1.0]]],
                                loss=tf.constant(1.0), deferred=True)
  assert np.isnan(values[0][0]) and ok and recorded
  values, ok, recorded = _apply(_PlainSGD(1.0), [[1.0, 0.0], [[1.0]]],
                                loss=tf.constant(np.inf), deferred=True)
  assert not ok and not recorded
  # ...but the clipping norm is checked too (it is computed anyway).
  values, ok, _ = _apply(_PlainSGD(1.0), [[np.nan, 0.0], [[1.0]]],
                         loss=tf.constant(1.0), clip_norm=1.0, deferred=True)
  assert not ok


def test_state_variables_finds_each_variable_once():
  module = tf.Module()
  module.w = tf.Variable([1.0])
  optimizer = keras.optimizers.Adam(0.1)
  optimizer.build([module.w])
  generator = tf.random.Generator.from_seed(1)
  dataset_iterator = iter(tf.data.Dataset.range(3))
  found = guard.state_variables([module, module.w, optimizer, generator,
                                dataset_iterator])
  assert found[0] is module.w
  assert len(found) == 1 + len(optimizer.variables) + 1
  assert all(isinstance(v, tf.Variable) for v in found)
  assert found[-1] is generator.state


def _rollback_function(values):
  """A K-step function whose update adds `values[i]` to `total` at step i,
  each step finite unless its value is NaN, checked per call. `marker`
  holds NaN on purpose: state, but not updated."""
  counter = tf.Variable(0, dtype=tf.int64)
  total = tf.Variable(0.0)
  marker = tf.Variable(np.nan)
  rollback = guard.CallRollback(counter)
  rollback.watch([total, marker])
  values = tf.constant(values)

  def one_step():
    value = values[counter]
    rollback.updated(None, [total])
    total.assign_add(value)
    finite = tf.math.is_finite(value) | tf.math.is_inf(value)  # Inf: state.
    counter.assign_add(tf.cast(finite, tf.int64))
    return {"total": total.read_value()}, finite

  function = step.make_train_function(one_step, stop_on_nonfinite=True,
                                      rollback=rollback)
  return function, counter, total, rollback


def test_call_rollback_keeps_a_finite_call_and_undoes_a_nonfinite_one():
  function, counter, total, rollback = _rollback_function(
      [1.0, 2.0, 4.0, np.nan, 8.0, 16.0])
  _, finite = function(tf.constant(2))
  assert bool(finite) and counter.numpy() == 2 and total.numpy() == 3.0
  assert rollback.failed_at.numpy() == -1
  # Steps 2 and 3: step 3's value is NaN: the call is undone.
  _, finite = function(tf.constant(2))
  assert not bool(finite)
  assert counter.numpy() == 2 and total.numpy() == 3.0
  assert rollback.failed_at.numpy() == 3
  assert function.experimental_get_tracing_count() == 1


def test_call_rollback_finds_a_nonfinite_state_under_finite_verdicts():
  # Step 1 adds Inf with a finite verdict (a gradient under a finite loss):
  # only the state shows it, at the end of the call.
  function, counter, total, rollback = _rollback_function(
      [1.0, np.inf, 2.0, 3.0])
  _, finite = function(tf.constant(3))
  assert not bool(finite)
  assert counter.numpy() == 0 and total.numpy() == 0.0
  assert rollback.failed_at.numpy() == -1


def test_in_precision_is_the_model_itself_in_float32():
  import sonnet_like as snt
  from sonnet_like.scenarios.compiled import precision
  from sonnet_like.scenarios import settings
  linear = snt.Linear(2)
  x = tf.ones([1, 3])
  plain = step.TracedStep("T", precision.parse("T", "float32"),
                          settings.GuardSettings())
  assert plain.in_precision(linear) is linear
  mixed = step.TracedStep("T", precision.parse("T", "mixed_bfloat16"),
                          settings.GuardSettings())
  call = mixed.in_precision(linear)
  assert call is not linear
  np.testing.assert_array_equal(call(x), linear(x))  # Not in the step.
