"""Supervised takes what users bring: Keras losses and metrics, functions as
models, structured data and outputs, sample weights; bad data is one error."""

import warnings

import keras
import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt


def _data(n=256, seed=0):
  x = np.random.default_rng(seed).normal(size=(n, 4)).astype("float32")
  return x, (x[:, 0] + x[:, 1] > 0).astype("int32")


def _train(num_steps=150, **kwargs):
  return snt.scenarios.Supervised(num_steps=num_steps, batch_size=32,
                                  steps_per_call=50, progress=False, **kwargs)


def _sparse_loss(logits, labels):
  return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)


@pytest.mark.parametrize("loss", [
    keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    "sparse_categorical_crossentropy",  # Keras' name: takes probabilities.
])
def test_keras_sparse_losses_train_a_classifier(loss):
  x, y = _data()
  softmax = isinstance(loss, str)
  model = snt.Sequential([snt.Linear(2)] + ([tf.nn.softmax] if softmax else []))
  history = _train()(model, keras.optimizers.Adam(0.05), loss, (x, y),
                     eval_data=(x, y))
  assert history.eval["loss"][-1] < 0.3
  assert history.eval["accuracy"][-1] > 0.9


def test_keras_binary_crossentropy_object_gets_the_keras_argument_order():
  x, y = _data()
  targets = y.astype("float32")[:, None]
  loss = keras.losses.BinaryCrossentropy(from_logits=True)
  history = _train()(snt.Linear(1), keras.optimizers.Adam(0.05), loss,
                     (x, targets), eval_data=(x, targets))
  assert all(value > 0 for value in history.train["loss"])  # Was -529.
  assert history.eval["loss"][-1] < 0.3  # Chance: ln 2 = 0.69.


def test_keras_metric_object_and_function_agree_with_accuracy():
  x, y = _data()
  train = _train()
  history = train(snt.Linear(2), keras.optimizers.Adam(0.05), _sparse_loss,
                  (x, y), eval_data=(x, y), metrics={
                      "acc": keras.metrics.SparseCategoricalAccuracy(),
                      "fn_acc": keras.metrics.sparse_categorical_accuracy,
                      "name_acc": "sparse_categorical_accuracy"})
  accuracy = history.eval["accuracy"][-1]
  assert accuracy > 0.9  # Was reported as 0.000.
  for name in ("acc", "fn_acc", "name_acc"):
    assert history.eval[name][-1] == pytest.approx(accuracy, abs=1e-6)


def test_model_with_batch_norm_that_defaults_to_inference_builds_and_trains():

  class Net(snt.Module):

    def __init__(self):
      super().__init__(name="net")
      self.norm, self.head = snt.BatchNorm(True, True), snt.Linear(2)

    def __call__(self, x, is_training=False):
      return self.head(self.norm(x, is_training=is_training))

  x, y = _data()
  net = Net()
  history = _train()(net, keras.optimizers.Adam(0.05), _sparse_loss, (x, y),
                     eval_data=(x, y))
  assert history.eval["accuracy"][-1] > 0.9
  # Building changed nothing: the moving mean holds only training updates.
  assert int(net.norm.moving_mean.counter.numpy()) == 150


def test_a_plain_function_is_a_model_and_its_variables_train_and_save(
    tmp_path):
  layer = snt.Linear(2, name="layer")
  seen = []

  def model(x, is_training):
    seen.append(is_training)
    return layer(x)

  x, y = _data()
  history = _train(save_dir=str(tmp_path), save_every=150)(
      model, keras.optimizers.Adam(0.05), _sparse_loss, (x, y),
      eval_data=(x, y))
  assert history.eval["accuracy"][-1] > 0.9
  assert True in seen and False in seen
  reader = tf.train.load_checkpoint(str(tmp_path))
  assert any("tracked" in key for key in reader.get_variable_to_shape_map())


def test_vae_like_model_with_three_outputs_evaluates_and_predicts():

  class Vae(snt.Module):

    def __init__(self):
      super().__init__(name="vae")
      self.encode, self.decode = snt.Linear(4), snt.Linear(4)

    def __call__(self, x):
      stats = self.encode(x)
      mu, logvar = stats[:, :2], stats[:, 2:]
      return self.decode(tf.concat([mu, mu], 1)), mu, logvar

  def loss(outputs, targets):
    reconstruction, mu, logvar = outputs
    kl = -0.5 * tf.reduce_sum(1 + logvar - mu**2 - tf.exp(logvar), axis=1)
    return tf.reduce_sum((reconstruction - targets)**2, axis=1) + 0.01 * kl

  x, _ = _data()
  train, vae = _train(), Vae()
  vae(x[:1])
  untrained = train.evaluate(vae, (x, x), loss)["loss"]
  history = train(vae, keras.optimizers.Adam(0.02), loss, (x, x),
                  eval_data=(x, x))
  assert set(history.eval) == {"step", "loss"}  # No accuracy guessed.
  assert history.eval["loss"][-1] < 0.8 * untrained
  reconstruction, mu, logvar = train.predict(train.model, x[:10])
  assert reconstruction.shape == (10, 4) and mu.shape == logvar.shape == (10, 2)


def test_dict_inputs_and_dict_outputs():

  class TwoHeads(snt.Module):

    def __init__(self):
      super().__init__(name="two_heads")
      self.a, self.b = snt.Linear(2), snt.Linear(1)

    def __call__(self, inputs):
      x = tf.concat([inputs["left"], inputs["right"]], axis=1)
      return {"label": self.a(x), "value": self.b(x)[:, 0]}

  def loss(outputs, targets):
    return (_sparse_loss(outputs["label"], targets["label"]) +
            (outputs["value"] - targets["value"])**2)

  x, y = _data()
  inputs = {"left": x[:, :2], "right": x[:, 2:]}
  targets = {"label": y, "value": x[:, 3]}
  train = _train()
  history = train(TwoHeads(), keras.optimizers.Adam(0.05), loss,
                  (inputs, targets), eval_data=(inputs, targets))
  assert history.eval["loss"][-1] < 0.5
  predicted = train.predict(train.model, inputs)
  assert set(predicted) == {"label", "value"}
  assert predicted["label"].shape == (256, 2)


def test_sample_weights_weigh_the_loss_as_in_keras():
  x, y = _data(n=64)
  weights = np.where(y == 1, 2.0, 0.5).astype("float32")
  model = snt.Linear(2)
  train = _train(num_steps=1)
  model(x[:1])
  metrics = train.evaluate(model, (x, y, weights), _sparse_loss)
  expected = np.mean(weights * _sparse_loss(model(x), y).numpy())
  assert metrics["loss"] == pytest.approx(expected, rel=1e-5)
  keras_value = keras.losses.SparseCategoricalCrossentropy(from_logits=True)(
      y, model(x), sample_weight=weights)
  assert metrics["loss"] == pytest.approx(float(keras_value), rel=1e-5)
  history = _train()(model, keras.optimizers.Adam(0.05), _sparse_loss,
                     (x, y, weights), eval_data=(x, y))
  assert history.eval["accuracy"][-1] > 0.85


@pytest.mark.parametrize("data, kind, message", [
    (tf.data.Dataset.from_tensor_slices(np.zeros((8, 4), np.float32)).batch(4),
     TypeError, r"train_data must hold \(inputs, targets\).*got elements "
     r"float32\[None, 4\]"),
    (tf.data.Dataset.from_tensor_slices(
        {"x": np.zeros((8, 4), np.float32), "y": np.zeros(8)}).batch(4),
     TypeError, r"dataset.map\(lambda d: \(d\['x'\], d\['y'\]\)\)"),
    ((np.zeros((0, 4)), np.zeros(0)), ValueError,
     r"train_data is empty \(0 examples\)"),
    (tf.data.Dataset.from_tensor_slices(
        (np.zeros((0, 4)), np.zeros(0))).batch(4), ValueError,
     "train_data is an empty dataset"),
    (tf.data.Dataset.from_generator(
        lambda: iter([(np.zeros((4, 4), np.float32), np.zeros(4))]),
        output_signature=(tf.TensorSpec([None, None], tf.float32),
                          tf.TensorSpec([None], tf.float64))), ValueError,
     r"unknown feature size at element\[0\]: float32\[None, None\]"),
])
def test_bad_training_data_is_one_clear_error(data, kind, message):
  with pytest.raises(kind, match=message) as info:
    _train()(snt.Linear(2), keras.optimizers.SGD(0.1), _sparse_loss, data)
  assert str(info.value).startswith("Supervised: train_data ")


def test_a_loss_of_one_argument_is_a_clear_error():
  x, y = _data()
  with pytest.raises(TypeError, match=r"Supervised: loss_fn must take two "
                     r"arguments.*signature \(outputs\)"):
    _train()(snt.Linear(2), keras.optimizers.SGD(0.1),
             lambda outputs: tf.reduce_mean(outputs), (x, y))


def test_accidental_broadcasting_is_an_error_not_a_mean():
  x, y = _data()
  with pytest.raises(ValueError, match=r"Supervised: loss_fn returned "
                     r"\[32, 32\] values for a batch of outputs \[\[32, 1\]\] "
                     r"and targets \[\[32\]\]"):
    _train()(snt.Linear(1), keras.optimizers.SGD(0.1),
             lambda o, t: (o - t)**2, (x, y.astype("float32")))


def test_unused_variables_warn_once_or_raise():

  class Unused(snt.Module):

    def __init__(self):
      super().__init__(name="unused")
      self.used, self.spare = snt.Linear(2, name="used"), snt.Linear(
          3, name="spare")

    def __call__(self, x):
      self.spare(x)
      return self.used(x)

  x, y = _data()
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    _train(num_steps=100)(Unused(), keras.optimizers.SGD(0.1), _sparse_loss,
                          (x, y))
  messages = [str(w.message) for w in caught if "no gradient" in
              str(w.message)]
  assert len(messages) == 1
  assert "unused/spare/b:0" in messages[0] and "unused/spare/w:0" in messages[0]
  assert messages[0].startswith("Supervised: no gradient reached")
  with pytest.raises(ValueError, match="Supervised: no gradient reached"):
    _train(unused_variables="raise")(Unused(), keras.optimizers.SGD(0.1),
                                     _sparse_loss, (x, y))
