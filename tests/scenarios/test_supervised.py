"""The Supervised scenario: training, evaluate, predict, resume, errors."""

import re
import warnings

import keras
import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt


def _data(n=96, seed=0):
  rng = np.random.default_rng(seed)
  x = rng.normal(size=(n, 4)).astype(np.float32)
  y = (x[:, 0] - x[:, 2] > 0).astype(np.int32)
  return x, y


def _loss(logits, labels):
  return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)


def _model(name="model", features=4):
  tf.random.set_seed(0)
  model = snt.Linear(2, name=name)
  model(tf.zeros([1, features]))
  return model


def test_learns_and_reports_eval_metrics():
  x, y = _data()
  model = _model()
  train = snt.scenarios.Supervised(num_steps=60, batch_size=16, eval_every=20,
                                   steps_per_call=5, log_every=10,
                                   progress=False)
  history = train(model, keras.optimizers.SGD(0.5), _loss, (x, y),
                  eval_data=(x, y))
  assert history.eval["step"] == [20, 40, 60]
  assert history.eval["accuracy"][-1] > 0.9
  assert history.train["step"] == [10, 20, 30, 40, 50, 60]
  assert history.train["loss"][-1] < history.train["loss"][0]
  assert history.stop_reason == "done"
  # The reported metrics equal a NumPy computation on the final weights.
  logits = x @ model.w.numpy() + model.b.numpy()
  shifted = logits - logits.max(axis=1, keepdims=True)
  log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
  np.testing.assert_allclose(history.eval["loss"][-1],
                             -log_probs[np.arange(len(y)), y].mean(),
                             rtol=1e-5)
  assert history.eval["accuracy"][-1] == pytest.approx(
      (logits.argmax(1) == y).mean())


def test_evaluate_and_predict_match_the_model():
  x, y = _data(n=70)  # Not a multiple of the eval batch size.
  model = _model()
  train = snt.scenarios.Supervised(num_steps=1, eval_batch_size=32)
  outputs = train.predict(model, x)
  np.testing.assert_allclose(outputs, model(x).numpy(), rtol=1e-6)
  metrics = train.evaluate(model, (x, y), _loss,
                           metrics={"positive": lambda o, t: o[:, 1] > 0})
  assert metrics["accuracy"] == pytest.approx((outputs.argmax(1) == y).mean())
  assert metrics["positive"] == pytest.approx((outputs[:, 1] > 0).mean())
  np.testing.assert_allclose(metrics["loss"],
                             _loss(outputs, y).numpy().mean(), rtol=1e-5)
  dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(10)
  assert train.evaluate(model, dataset, _loss)["loss"] == pytest.approx(
      metrics["loss"], rel=1e-6)


def test_dataset_input_equals_arrays_without_shuffle():
  x, y = _data(n=64)
  results = []
  for data in [(x, y), tf.data.Dataset.from_tensor_slices((x, y)).batch(16)]:
    model = _model()
    train = snt.scenarios.Supervised(num_steps=10, batch_size=16,
                                     shuffle=False, progress=False)
    train(model, keras.optimizers.SGD(0.1), _loss, data)
    results.append(model.w.numpy())
  np.testing.assert_array_equal(results[0], results[1])


def test_is_training_is_passed():
  seen = []

  class Net(snt.Module):

    def __init__(self):
      super().__init__(name="net")
      self.linear = snt.Linear(2, name="linear")

    def __call__(self, x, is_training):
      seen.append(is_training)
      return self.linear(x)

  x, y = _data(n=32)
  train = snt.scenarios.Supervised(num_steps=2, batch_size=16,
                                   progress=False)
  train(Net(), keras.optimizers.SGD(0.1), _loss, (x, y), eval_data=(x, y))
  assert True in seen and False in seen


def test_scalar_loss_fn_is_accepted():
  x, y = _data(n=32)
  per_example, mean = _model("a"), _model("b")
  for model, loss in [(per_example, _loss),
                      (mean, lambda o, t: tf.reduce_mean(_loss(o, t)))]:
    train = snt.scenarios.Supervised(num_steps=3, batch_size=32,
                                     shuffle=False, progress=False)
    train(model, keras.optimizers.SGD(0.1), loss, (x, y))
  np.testing.assert_allclose(per_example.w.numpy(), mean.w.numpy(),
                             rtol=1e-6)


def test_sonnet_style_optimizer():
  snt2 = pytest.importorskip("sonnet")
  x, y = _data(n=32)
  results = []
  for optimizer in [snt2.optimizers.SGD(0.1), keras.optimizers.SGD(0.1)]:
    model = _model()
    train = snt.scenarios.Supervised(num_steps=4, batch_size=16,
                                     shuffle=False, progress=False)
    train(model, optimizer, _loss, (x, y))
    results.append(model.w.numpy())
  np.testing.assert_allclose(results[0], results[1], rtol=1e-6)


def test_rerun_resumes_or_says_done(tmp_path, capsys):
  x, y = _data()
  kwargs = dict(batch_size=16, save_every=5, save_dir=str(tmp_path),
                progress=False)
  model = _model()
  snt.scenarios.Supervised(num_steps=10, **kwargs)(
      model, keras.optimizers.SGD(0.1), _loss, (x, y))
  done = model.w.numpy()
  again = _model()
  history = snt.scenarios.Supervised(num_steps=10, **kwargs)(
      again, keras.optimizers.SGD(0.1), _loss, (x, y))
  assert "already done (10 of 10 steps)" in capsys.readouterr().err
  np.testing.assert_array_equal(again.w.numpy(), done)
  assert history.train["step"][-1] == 10
  more = _model()
  train = snt.scenarios.Supervised(num_steps=15, **kwargs)
  train(more, keras.optimizers.SGD(0.1), _loss, (x, y))
  assert "resuming from" in capsys.readouterr().err
  assert train.step == 15


def test_nonfinite_loss_raises_at_the_step(tmp_path):
  x, y = _data(n=160)
  x[7 * 16 + 3, 1] = np.nan  # Batch 7 (0-based) is poisoned.
  model = _model()
  train = snt.scenarios.Supervised(num_steps=20, batch_size=16, shuffle=False,
                                   steps_per_call=4, save_every=4,
                                   save_dir=str(tmp_path), progress=False)
  with pytest.raises(snt.scenarios.NonFiniteError, match=r"at step 7") as err:
    train(model, keras.optimizers.SGD(0.1), _loss, (x, y))
  assert err.value.step == 7 and train.step == 7
  assert "ckpt-4" in str(err.value)
  # The bad update was not applied: weights equal a clean 7-step run.
  clean = _model()
  snt.scenarios.Supervised(num_steps=7, batch_size=16, shuffle=False,
                           progress=False)(
                               clean, keras.optimizers.SGD(0.1), _loss,
                               (x[:7 * 16], y[:7 * 16]))
  np.testing.assert_array_equal(model.w.numpy(), clean.w.numpy())
  assert tf.train.latest_checkpoint(str(tmp_path)).endswith("ckpt-4")


def test_nonfinite_skip_policy_drops_updates():
  x, y = _data(n=64)
  x[16:32] = np.inf  # Batch 1 of 4.
  model = _model()
  train = snt.scenarios.Supervised(num_steps=8, batch_size=16, shuffle=False,
                                   steps_per_call=3, on_nonfinite="skip",
                                   progress=False)
  history = train(model, keras.optimizers.SGD(0.1), _loss, (x, y))
  assert train.skipped_steps == 2 and train.step == 8  # Two epochs.
  assert np.all(np.isfinite(model.w.numpy()))
  assert history.train["skipped"][-1] == 2


@pytest.mark.parametrize("kwargs, match", [
    (dict(batch_size=0), "batch_size must be a positive int"),
    (dict(eval_batch_size=-1), "eval_batch_size must be a positive int"),
])
def test_constructor_errors(kwargs, match):
  with pytest.raises(ValueError, match=match):
    snt.scenarios.Supervised(num_steps=1, **kwargs)


def test_call_errors():
  x, y = _data(n=8)
  train = snt.scenarios.Supervised(num_steps=1, progress=False)
  model, opt = _model(), keras.optimizers.SGD(0.1)
  with pytest.raises(TypeError, match="model must be callable"):
    train(3, opt, _loss, (x, y))
  with pytest.raises(TypeError, match="loss_fn must be callable or a Keras"):
    train(model, opt, 3, (x, y))
  with pytest.raises(ValueError, match="loss_fn='nonsense' is not a Keras"):
    train(model, opt, "nonsense", (x, y))
  with pytest.raises(TypeError, match="optimizer must have apply_gradients"):
    train(model, object(), _loss, (x, y))
  with pytest.raises(TypeError, match="train_data must hold .inputs, targets"):
    train(model, opt, _loss, x)
  with pytest.raises(ValueError, match=r"train_data must hold arrays of equal "
                     r"length .* got lengths \{'element\[0\]': 8, "
                     r"'element\[1\]': 3\}"):
    train(model, opt, _loss, (x, y[:3]))
  with pytest.raises(TypeError, match="eval_data must be a tf.data.Dataset "
                     "of batches or arrays"):
    train(model, opt, _loss, (x, y), eval_data="test")


def test_bad_input_names_the_module():
  x, y = _data(n=32)
  model = _model("classifier", features=3)  # The data has 4.
  train = snt.scenarios.Supervised(num_steps=1, batch_size=16,
                                   progress=False)
  with pytest.raises(ValueError, match="'classifier' was built for input "
                     "size 3, got 4"):
    train(model, keras.optimizers.SGD(0.1), _loss, (x, y))


def test_a_rank_error_shows_the_users_batch_not_a_probe():
  images = np.zeros([32, 8, 8], np.float32)  # No channel axis.
  train = snt.scenarios.Supervised(num_steps=1, batch_size=16,
                                   progress=False)
  with pytest.raises(ValueError, match=r"got shape \(16, 8, 8\) .* "
                     r"x\[\.\.\., None\] has shape \(16, 8, 8, 1\)\.$"):
    train(snt.Sequential([snt.Conv2D(2, 3), snt.Flatten(), snt.Linear(2)]),
          keras.optimizers.SGD(0.1), _loss, (images, np.zeros([32], np.int32)))


def test_predict_builds_an_unbuilt_model_eagerly_and_says_so_first():
  # Traced for any batch size, the Linear after this flatten could not know
  # its input size: ~40 lines of AutoGraph traceback ended in the advice.
  def flatten(images):  # tf.shape: the static size of the features is lost.
    return tf.reshape(images, [tf.shape(images)[0], -1])

  model = snt.Sequential([snt.Conv2D(2, 3), flatten, snt.Linear(2)])
  images = np.zeros([4, 5, 5, 1], np.float32)
  train = snt.scenarios.Supervised(num_steps=1, progress=False)
  with pytest.warns(UserWarning, match=re.escape(
      "Supervised: predict got Sequential 'sequential', which was never "
      "called, so it is built now on the first batch and predicts with its "
      "initial weights; train it (or call it once on a few examples) first "
      "if that is not what you meant.")):
    assert train.predict(model, images).shape == (4, 2)
  with warnings.catch_warnings():
    warnings.simplefilter("error")  # Once built, no warning.
    np.testing.assert_array_equal(train.predict(model, images),
                                  model(images).numpy())


def test_optional_is_training_follows_the_model():
  x, y = _data(n=32)
  for dropout_rate in (None, 0.5):
    tf.random.set_seed(0)
    model = snt.nets.MLP([8, 2], dropout_rate=dropout_rate, name="mlp")
    train = snt.scenarios.Supervised(num_steps=2, batch_size=16,
                                     progress=False)
    history = train(model, keras.optimizers.SGD(0.1), _loss, (x, y),
                    eval_data=(x, y))
    assert history.eval["step"] == [2]
    # Evaluation runs without dropout: predict is deterministic.
    np.testing.assert_array_equal(train.predict(model, x),
                                  train.predict(model, x))


def test_a_failing_metric_is_named_with_the_shapes_it_got():
  x, y = _data(n=32)

  def thirds(outputs, targets):  # 16 * 2 outputs do not split in 3 rows.
    del targets
    return tf.reshape(outputs, [3, -1])

  train = snt.scenarios.Supervised(num_steps=1, batch_size=16,
                                   progress=False)
  with pytest.raises(ValueError, match="^" + re.escape(  # First, not last.
      "Supervised: metrics['thirds'] failed on outputs of shape (16, 2) and "
      "targets of shape (16,): ")):
    train(_model(), keras.optimizers.SGD(0.1), _loss, (x, y),
          metrics={"thirds": thirds})
