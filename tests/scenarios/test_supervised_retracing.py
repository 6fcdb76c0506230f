"""Repeated evaluation and prediction trace once (issue 30: TensorFlow's
retracing warning printed up to four times)."""

import keras
import numpy as np
import tensorflow as tf

import sonnet_like as snt

_RNG = np.random.default_rng(0)
X = _RNG.normal(size=(300, 6)).astype("float32")  # 256 + a short batch.
Y = (X[:, 0] > 0).astype("int32")


class _CountingModel(snt.Module):
  """A linear classifier that counts the times it is traced."""

  def __init__(self):
    super().__init__(name="counting")
    self.head = snt.Linear(2)
    self.traces = 0

  def __call__(self, x):
    if not tf.executing_eagerly():
      self.traces += 1
    return self.head(x)


class _CountingSupervised(snt.scenarios.Supervised):

  def __init__(self, *args, **kwargs):
    super().__init__(*args, **kwargs)
    self.eval_traces = 0

  def eval_step(self, model, loss, metrics, data):
    self.eval_traces += 1  # Python: runs only while tracing.
    return super().eval_step(model, loss, metrics, data)


def test_repeated_evaluate_traces_once_per_model_loss_and_metrics():
  loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
  train = _CountingSupervised(num_steps=30, batch_size=32, eval_every=10,
                              progress=False)
  model = snt.Linear(2)
  train(model, keras.optimizers.SGD(0.1), loss, (X, Y), eval_data=(X, Y))
  assert train.eval_traces == 1  # Three evaluations, full and short batches.
  for size in (300, 100, 257, 7):
    train.evaluate(model, (X[:size], Y[:size]), loss)
  dataset = tf.data.Dataset.from_tensor_slices((X, Y)).batch(50)
  train.evaluate(model, dataset, loss)
  assert train.eval_traces == 1
  train.evaluate(model, (X, Y))  # Another loss (none): one more trace.
  train.evaluate(model, (X, Y))
  assert train.eval_traces == 2


def test_repeated_predict_traces_once_per_model():
  train = snt.scenarios.Supervised(num_steps=2, batch_size=32, progress=False)
  model = _CountingModel()
  train(model, keras.optimizers.SGD(0.1),
        keras.losses.SparseCategoricalCrossentropy(from_logits=True), (X, Y))
  traced = model.traces  # The train step's.
  for size in (300, 100, 7):
    outputs = train.predict(model, X[:size])
    np.testing.assert_allclose(outputs, model.head(X[:size]).numpy(),
                               rtol=1e-6)
  assert model.traces == traced + 1
