"""A newcomer's mistakes at the loss are one sentence before the first step
(issue 30's table), found by calling the loss once, eagerly, on the first
batch."""

import re
import warnings

import keras
import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.scenarios.compiled import loss_checks

_RNG = np.random.default_rng(0)
X = _RNG.normal(size=(96, 6)).astype("float32")
LABELS = np.arange(96, dtype="int32") % 10  # The first batch holds 0 to 9.


def _train(num_steps=2, **kwargs):
  return snt.scenarios.Supervised(num_steps=num_steps, batch_size=32,
                                  progress=False, **kwargs)


def _exactly(sentence):
  return "^" + re.escape(sentence) + "$"


def _sparse(from_logits=True):
  return keras.losses.SparseCategoricalCrossentropy(from_logits=from_logits)


def test_one_hot_targets_under_a_sparse_loss():
  one_hot = np.eye(10, dtype="float32")[LABELS]
  with pytest.raises(ValueError, match=_exactly(
      "Supervised: loss_fn is a sparse categorical cross-entropy, which "
      "takes one class id per example, but the targets look one-hot "
      "(float32[32, 10], rows of 0s and 1s like the outputs float32[32, 10])"
      ": use CategoricalCrossentropy, or argmax the targets.")):
    _train()(snt.Linear(10), keras.optimizers.SGD(0.1), _sparse(),
             (X, one_hot))


@pytest.mark.parametrize("loss", [_sparse(), "sparse_categorical_crossentropy"])
def test_too_few_output_units_for_the_labels(loss):
  with pytest.raises(ValueError, match=_exactly(
      "Supervised: the model outputs 1 value per example but the targets go "
      "up to 9; loss_fn takes one output per class, so give the model's "
      "last layer at least 10 units.")):
    _train()(snt.Linear(1), keras.optimizers.SGD(0.1), loss, (X, LABELS))


def test_too_few_units_under_a_plain_sparse_function():
  plain = lambda logits, labels: (  # pylint: disable=g-long-lambda
      tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
  with pytest.raises(ValueError, match=_exactly(
      "Supervised: the model outputs 4 values per example but the targets go "
      "up to 9; loss_fn takes one output per class, so give the model's "
      "last layer at least 10 units.")):
    _train()(snt.Linear(4), keras.optimizers.SGD(0.1), plain, (X, LABELS))


def test_sparse_loss_by_name_on_logits_says_from_logits_true():
  tf.random.set_seed(0)
  model = snt.Linear(10)
  with pytest.raises(ValueError) as caught:
    _train()(model, keras.optimizers.SGD(0.1),
             "sparse_categorical_crossentropy", (X, LABELS))
  outputs = model(X[:32]).numpy().astype(np.float64)
  sums = outputs.sum(-1)
  assert str(caught.value) == (
      f"Supervised: loss_fn 'sparse_categorical_crossentropy' takes "
      f"probabilities (from_logits=False), but the model's outputs on the "
      f"first batch are not (values down to {outputs.min():.2g}, rows "
      f"summing to {sums.min():.2g} to {sums.max():.2g}): they look like "
      f"logits. Pass keras.losses.SparseCategoricalCrossentropy("
      f"from_logits=True), or end the model with a softmax.")


def test_binary_loss_object_on_logits_says_from_logits_true():
  targets = (X[:, :1] > 0).astype("float32")
  with pytest.raises(ValueError, match=re.escape(
      "Pass keras.losses.BinaryCrossentropy(from_logits=True), or end the "
      "model with a sigmoid.")):
    _train()(snt.Linear(1), keras.optimizers.SGD(0.1),
             keras.losses.BinaryCrossentropy(), (X, targets))


def test_scalar_loss_of_outputs_and_targets_that_broadcast_warns():
  targets = X.sum(axis=1)
  mean_squares = lambda outputs, t: tf.reduce_mean((outputs - t) ** 2)
  with pytest.warns(UserWarning, match=_exactly(
      "Supervised: loss_fn returned one value for outputs float32[32, 1] and "
      "targets float32[32], whose shapes broadcast to [32, 32]: a loss such "
      "as tf.reduce_mean((outputs - targets) ** 2) then compares every "
      "output with every target. Give outputs and targets the same shape "
      "(tf.squeeze(outputs, -1) or targets[:, None]), or return one loss "
      "per example.")):
    _train()(snt.Linear(1), keras.optimizers.SGD(0.01), mean_squares,
             (X, targets))


def test_scalar_loss_that_lines_up_its_inputs_does_not_warn():
  targets = X.sum(axis=1)
  squeezed = lambda outputs, t: tf.reduce_mean((outputs[:, 0] - t) ** 2)
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    _train()(snt.Linear(1), keras.optimizers.SGD(0.01), squeezed,
             (X, targets))


def test_right_losses_pass_the_check():
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    _train()(snt.Linear(10), keras.optimizers.SGD(0.1), _sparse(),
             (X, LABELS))
    _train()(snt.Sequential([snt.Linear(10), tf.nn.softmax]),
             keras.optimizers.SGD(0.1), "sparse_categorical_crossentropy",
             (X, LABELS))
    _train()(snt.Sequential([snt.Linear(10), tf.nn.softmax]),
             keras.optimizers.SGD(0.1), keras.losses.CategoricalCrossentropy(),
             (X, np.eye(10, dtype="float32")[LABELS]))


def test_an_error_that_escapes_the_loss_is_wrapped_with_its_cause():
  def broken(outputs, targets):
    del targets
    return tf.reshape(outputs, [3, -1])  # 32 * 10 values do not split by 3.

  with pytest.raises(ValueError) as caught:
    _train()(snt.Linear(10), keras.optimizers.SGD(0.1), broken, (X, LABELS))
  assert str(caught.value).startswith(
      "Supervised: loss_fn failed on the first batch of train_data (outputs "
      "float32[32, 10], targets int32[32]): InvalidArgumentError: ")
  assert isinstance(caught.value.__cause__, tf.errors.InvalidArgumentError)


_IDS_FIX = (
    "the targets are class ids (int32[32]) and the outputs hold 10 values per "
    "example (float32[32, 10]). For classification use a sparse categorical "
    "loss (keras.losses.SparseCategoricalCrossentropy(from_logits=True)), or "
    "give one-hot targets (tf.one_hot(targets, 10)).")


def _squared_error(outputs, targets):  # Fails: [32, 10] - [32].
  return tf.reduce_mean((outputs - tf.cast(targets, tf.float32)) ** 2, -1)


@pytest.mark.parametrize("loss, start", [
    ("mse", "loss_fn 'mean_squared_error' compares outputs and targets value "
     "by value, but "),
    (keras.losses.MeanSquaredError(), "loss_fn compares outputs and targets "
     "value by value, but "),
    (_squared_error, "loss_fn failed on the first batch of train_data "
     "(InvalidArgumentError: Incompatible shapes: [32,10] vs. [32] "
     "[Op:Sub]): ")], ids=["name", "object", "function"])
def test_class_ids_under_a_regression_loss_get_the_fix(loss, start):
  outputs = tf.zeros([32, 10])
  with pytest.raises(ValueError, match=_exactly(
      f"Supervised: {start}{_IDS_FIX}")):
    loss_checks.check_loss("Supervised", loss, outputs,
                           tf.constant(LABELS[:32]))


def test_the_check_runs_once_per_run_and_never_in_the_compiled_step():
  eager_calls, traced_calls = [], []

  def loss(logits, labels):
    (eager_calls if tf.executing_eagerly() else traced_calls).append(1)
    return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)

  _train(num_steps=6, eval_every=3)(snt.Linear(10), keras.optimizers.SGD(0.1),
                                     loss, (X, LABELS), eval_data=(X, LABELS))
  assert len(eager_calls) == 1
  assert traced_calls  # The train and eval steps were traced as before.


class _Net(snt.Module):

  def __init__(self):
    super().__init__(name="net")
    self.norm, self.head = snt.BatchNorm(True, True), snt.Linear(10)

  def __call__(self, x, is_training):
    return self.head(self.norm(x, is_training=is_training))


class _Unchecked(snt.scenarios.Supervised):

  def build(self):
    self._first_batch = None  # As before the check.
    super().build()


def test_the_check_changes_no_weight_or_moving_statistic():
  models = []
  for kind in (snt.scenarios.Supervised, _Unchecked):
    tf.random.set_seed(3)
    models.append(_Net())
    kind(num_steps=3, batch_size=32, progress=False)(
        models[-1], keras.optimizers.SGD(0.1), _sparse(), (X, LABELS))
  for a, b in zip(models[0].variables, models[1].variables):
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_first_batch_of_arrays_and_of_a_dataset():
  spec = (tf.TensorSpec([None, 6], tf.float32), tf.TensorSpec([None], tf.int64))
  x64 = X.astype("float64")
  inputs, labels = loss_checks.first_batch((x64, LABELS), spec, 8)
  assert inputs.dtype == tf.float32 and labels.dtype == tf.int64
  np.testing.assert_array_equal(inputs.numpy(), X[:8])
  dataset = tf.data.Dataset.from_tensor_slices((X, LABELS)).batch(5)
  inputs, labels = loss_checks.first_batch(dataset, dataset.element_spec, 8)
  np.testing.assert_array_equal(labels.numpy(), LABELS[:5])


def test_eval_data_with_other_features_is_refused_before_the_first_step():
  x = _RNG.normal(size=(96, 64)).astype("float32")
  steps = []

  class Counting(snt.scenarios.Supervised):

    def train_step(self, data):
      steps.append(1)  # Traced: the first step was compiled.
      return super().train_step(data)

  train = Counting(num_steps=40, batch_size=32, eval_every=20, progress=False)
  with pytest.raises(ValueError) as caught:
    train(snt.Linear(10, name="head"), keras.optimizers.SGD(0.1), _sparse(),
          (x, LABELS), eval_data=(x[:, :63], LABELS))
  assert str(caught.value) == (
      "Supervised: eval_data does not fit the model trained on train_data: "
      "its inputs are float32[None, 63] where train_data's are "
      "float32[None, 64] (InputShapeError: Linear 'head' was built for input "
      "size 64, got 63 (input shape (2, 63))). Give eval_data the features of "
      "train_data.")
  assert isinstance(caught.value.__cause__, ValueError)
  assert not steps


def test_a_subclass_with_its_own_loss_is_not_checked():
  eager_calls = []

  def loss(logits, labels):
    if tf.executing_eagerly():
      eager_calls.append(1)
    return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)

  class OwnLoss(snt.scenarios.Supervised):

    def compute_loss(self, inputs, targets, outputs, sample_weights=None):
      return tf.reduce_mean(loss(outputs, targets))

  OwnLoss(num_steps=2, batch_size=32, progress=False)(
      snt.Linear(10), keras.optimizers.SGD(0.1), loss, (X, LABELS))
  assert not eager_calls
