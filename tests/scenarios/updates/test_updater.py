"""The Updater: the guarded update with clipping and both optimizer kinds,
and what a train_step that calls the optimizer itself keeps."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.scenarios.compiled import step
from sonnet_like.scenarios.updates import updater as updater_lib


class _PlainSGD:
  """The Sonnet optimizer protocol: apply(updates, parameters)."""

  def __init__(self, lr):
    self.lr = lr

  def apply(self, updates, parameters):
    for u, p in zip(updates, parameters):
      p.assign_sub(self.lr * u)


class _Rollback:
  """The per-call check's surface, for a deferred update."""

  def updated(self, optimizer, variables):
    del optimizer, variables


def _apply(optimizer, grads, loss=None, clip_norm=None, deferred=False):
  v = [tf.Variable([1.0, 2.0]), tf.Variable([[3.0]])]
  shared = updater_lib.Shared("Scenario", clip_norm=clip_norm,
                              rollback=_Rollback() if deferred else None)
  recorder = step.FiniteRecorder(shared.verdicts)
  recorder.create()
  updater = updater_lib.Updater(optimizer, shared)

  @tf.function
  def run():
    recorder.start()
    ok = updater.apply([tf.constant(g) if g is not None else None
                        for g in grads], v, loss)
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
  (half,), norm = updater_lib.clip_by_global_norm(
      [tf.constant([300.0, 400.0], tf.float16)], 1.0)
  assert half.dtype == tf.float16 and float(norm) == 500.0
  np.testing.assert_allclose(half.numpy(), [0.6, 0.8], rtol=1e-3)
  # float32 with float64: summed in float64, each keeps its dtype.
  grads = [tf.constant([3.0, 4.0]), tf.constant([12.0], tf.float64)]
  clipped, norm = updater_lib.clip_by_global_norm(grads, 2.0)
  assert [c.dtype for c in clipped] == [tf.float32, tf.float64]
  assert norm.dtype == tf.float64 and float(norm) == 13.0
  np.testing.assert_allclose(clipped[0].numpy(), [6 / 13, 8 / 13], rtol=1e-6)
  np.testing.assert_allclose(clipped[1].numpy(), [24 / 13], rtol=1e-12)
  # Within the norm, the gradients come back unchanged, bit for bit.
  small = [tf.constant([0.1, -0.2]), tf.constant([[0.3]])]
  unchanged, _ = updater_lib.clip_by_global_norm(small, 1.0)
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
  assert bool(updater_lib.all_finite([tf.constant(t) for t in tensors])) is expected


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


# ---- A train_step that calls the optimizer itself keeps every feature. ----


class _OwnStep(snt.scenarios.Supervised):
  """A user's step: its own loss, and the optimizer called directly (Keras'
  `apply_gradients`, or a Sonnet-style `apply`). Step 1's gradients are NaN
  when `nan_at_step_1`."""

  nan_at_step_1 = False

  def train_step(self, data):
    inputs, targets = data
    variables = self.model.trainable_variables
    with tf.GradientTape() as tape:
      outputs = self.forward(self.model, inputs)
      loss = tf.reduce_mean(tf.square(outputs - targets))
      if self.nan_at_step_1:
        loss *= tf.where(self.step_variable == 1, np.nan, 1.0)
    grads = self.gradients(tape, loss, variables)
    if hasattr(self.optimizer, "apply_gradients"):
      self.optimizer.apply_gradients(zip(grads, variables))
    else:
      self.optimizer.apply(grads, variables)
    return {"loss": loss}


_X = np.random.default_rng(0).normal(size=(32, 3)).astype(np.float32)
_Y = (_X @ np.array([[1.0], [-2.0], [3.0]], np.float32)) + 4.0


def _own_step(optimizer, num_steps=1, scenario=_OwnStep, **settings):
  """The weights before and after `num_steps` of `scenario`, and it."""
  model = snt.Linear(1, w_init=snt.initializers.Constant(0.1), name="linear")
  model(_X[:1])
  before = [v.numpy() for v in model.trainable_variables]
  train = scenario(num_steps=num_steps, batch_size=32, shuffle=False,
                   progress=False, **settings)
  train(model, optimizer, "mse", (_X, _Y))
  return before, [v.numpy() for v in model.trainable_variables], train


def _change(before, after):
  return float(np.sqrt(sum(np.sum((a - b) ** 2)
                           for a, b in zip(after, before))))


@pytest.mark.parametrize("make", [lambda: keras.optimizers.SGD(1.0),
                                  lambda: snt.optimizers.SGD(1.0)],
                         ids=["keras", "sonnet"])
def test_own_step_keeps_clipping(make):
  before, after, _ = _own_step(make(), clip_norm=1e-3)
  assert 0 < _change(before, after) <= 1e-3 * (1 + 1e-5)


def test_own_step_keeps_the_nan_guard():
  class NaNAtStep1(_OwnStep):
    nan_at_step_1 = True

  _, after, train = _own_step(keras.optimizers.SGD(0.01), num_steps=3,
                              scenario=NaNAtStep1, on_nonfinite="skip")
  assert train.skipped_steps == 1
  assert all(np.all(np.isfinite(w)) for w in after)


def test_own_step_keeps_accumulation():
  before, after, _ = _own_step(snt.optimizers.SGD(0.1), accumulate_steps=2)
  for a, b in zip(after, before):  # One micro-batch of two: no update yet.
    np.testing.assert_array_equal(a, b)


def test_own_step_keeps_the_schedule():
  zero = snt.scenarios.schedules.ConstantSchedule(0.0)
  before, after, _ = _own_step(keras.optimizers.SGD(0.1),
                               learning_rate_schedule=zero)
  for a, b in zip(after, before):  # A rate of 0 moves nothing.
    np.testing.assert_array_equal(a, b)


def test_own_step_keeps_the_weight_average():
  before, after, train = _own_step(snt.optimizers.SGD(0.1), num_steps=2,
                                   ema=0.5, accumulate_steps=2)
  with train.ema_weights():
    averaged = [v.numpy() for v in train.model.trainable_variables]
  for a, b, w in zip(averaged, before, after):  # One update, then averaged.
    assert not np.array_equal(w, b)
    np.testing.assert_allclose(a, 0.5 * b + 0.5 * w, rtol=1e-6)


def test_own_step_keeps_the_loss_scale():
  before, plain, _ = _own_step(snt.optimizers.SGD(0.01))
  _, scaled, train = _own_step(
      snt.optimizers.SGD(0.01),
      precision=snt.scenarios.Precision("mixed_float16", initial_scale=16.0))
  assert train.loss_scale > 1  # The gradients were of a scaled loss...
  np.testing.assert_allclose(_change(before, scaled), _change(before, plain),
                             rtol=1e-2)  # ...and were unscaled.


def test_keras_apply_without_variables_is_named():
  class NoVariables(_OwnStep):
    def train_step(self, data):
      inputs, targets = data
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(self.model(inputs) - targets))
      self.optimizer.apply(tape.gradient(loss,
                                         self.model.trainable_variables))
      return {"loss": loss}

  with pytest.raises(ValueError, match=r"NoVariables: apply\(grads\) was "
                     r"called without the variables"):
    _own_step(keras.optimizers.SGD(0.1), scenario=NoVariables)


def test_the_optimizer_is_itself_again_after_the_trace():
  optimizer = keras.optimizers.SGD(0.1)
  _own_step(optimizer)
  assert "apply_gradients" not in vars(optimizer)
  assert "apply" not in vars(optimizer)


def test_a_keras_optimizer_of_another_model_is_refused_at_build():
  optimizer = keras.optimizers.Adam(0.01)
  _own_step(optimizer, scenario=snt.scenarios.Supervised)
  model = snt.Linear(1, name="second")
  model(_X[:1])
  before = [v.numpy() for v in model.trainable_variables]
  train = snt.scenarios.Supervised(num_steps=1, batch_size=32, progress=False)
  with pytest.raises(ValueError, match=r"^Supervised: the Keras optimizer "
                     r".* was built for other variables"):
    train(model, optimizer, "mse", (_X, _Y))
  for a, b in zip(model.trainable_variables, before):  # Nothing changed.
    np.testing.assert_array_equal(a.numpy(), b)


def test_the_check_of_a_built_keras_optimizer_changes_nothing():
  w = tf.Variable([1.0, 2.0])
  optimizer = keras.optimizers.Adam(0.1)
  optimizer.apply_gradients([(tf.constant([0.5, -0.5]), w)])  # Moments != 0.
  before = [v.numpy() for v in [w] + list(optimizer.variables)]
  updater_lib.Updater(optimizer, updater_lib.Shared("T")).build([w])
  after = [v.numpy() for v in [w] + list(optimizer.variables)]
  for a, b in zip(after, before):  # The zero update tried is undone.
    np.testing.assert_array_equal(a, b)
