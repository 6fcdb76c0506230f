"""ema=: averaged weights that evaluate, predict and export; checkpointed."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt


def _data():
  rng = np.random.default_rng(0)
  x = rng.normal(size=(128, 5)).astype(np.float32)
  y = (x @ rng.normal(size=(5,)) > 0).astype(np.int32)
  return x, y


def _loss(logits, labels):
  return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)


def _train(num_steps=12, model=None, **settings):
  tf.random.set_seed(0)
  model = model or snt.nets.MLP([16, 2], name="mlp")
  train = snt.scenarios.Supervised(num_steps, batch_size=16, progress=False,
                                   **settings)
  train(model, keras.optimizers.SGD(0.5), _loss, _data(),
        eval_data=_data())
  return train, model


def _with_values(model, values):
  """`model`'s outputs on the data with `values` in its variables."""
  saved = [v.numpy() for v in model.trainable_variables]
  for variable, value in zip(model.trainable_variables, values):
    variable.assign(value)
  try:
    return model(_data()[0]).numpy()
  finally:
    for variable, value in zip(model.trainable_variables, saved):
      variable.assign(value)


def test_the_averages_follow_the_formula_and_the_raw_weights_train():
  decay = 0.5
  averages = None

  class Record(snt.scenarios.Hook):
    def begin(self, scenario):  # The averages start at the initial weights.
      nonlocal averages
      averages = [v.numpy() for v in scenario.model.trainable_variables]

    def step_end(self, scenario, step, logs):
      nonlocal averages
      weights = [v.numpy() for v in scenario.model.trainable_variables]
      averages = [decay * a + (1 - decay) * w
                  for a, w in zip(averages, weights)]

  train, model = _train(ema=decay, log_every=1, hooks=[Record()])
  shadow = train.traced_step.averages.averages["model"].averages
  for mine, expected in zip(shadow, averages):
    np.testing.assert_allclose(mine.numpy(), expected, rtol=1e-5, atol=1e-7)
  assert not all(np.array_equal(a.numpy(), w.numpy())
                 for a, w in zip(shadow, model.trainable_variables))


def test_evaluation_predict_and_export_use_the_averages(tmp_path):
  train, model = _train(ema=0.9, eval_every=12,
                        export_dir=str(tmp_path / "export"))
  shadow = [a.numpy() for a in
            train.traced_step.averages.averages["model"].averages]
  raw = [v.numpy() for v in model.trainable_variables]
  with_ema = _with_values(model, shadow)
  assert not np.allclose(with_ema, model(_data()[0]).numpy(), atol=1e-4)
  # predict and evaluate (also the logged eval) see the averages.
  np.testing.assert_allclose(train.predict(model, _data()[0]), with_ema,
                             rtol=1e-5, atol=1e-6)
  x, y = _data()
  expected_loss = float(np.mean(_loss(with_ema, y)))
  assert train.evaluate(model, (x, y), _loss)["loss"] == pytest.approx(
      expected_loss, rel=1e-5)
  assert train.history.eval["loss"][-1] == pytest.approx(expected_loss,
                                                          rel=1e-5)
  # The export too; and the model keeps its raw weights.
  exported = tf.saved_model.load(str(tmp_path / "export"))
  outputs = exported.signatures["serving_default"](inputs=tf.constant(x))
  np.testing.assert_allclose(outputs["outputs"].numpy(), with_ema,
                             rtol=1e-5, atol=1e-6)
  for variable, value in zip(model.trainable_variables, raw):
    np.testing.assert_array_equal(variable.numpy(), value)


def test_the_averages_are_checkpointed_and_resume_bitwise(tmp_path):
  whole, _ = _train(12, ema=0.9)
  _train(5, ema=0.9, save_dir=str(tmp_path))
  reader = tf.train.load_checkpoint(str(tmp_path))
  assert any(k.startswith("model_ema/averages/")
             for k in reader.get_variable_to_shape_map())
  resumed, _ = _train(12, ema=0.9, save_dir=str(tmp_path))
  assert resumed.step == 12
  for a, b in zip(resumed.traced_step.averages.averages["model"].averages,
                  whole.traced_step.averages.averages["model"].averages):
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_batch_norm_statistics_are_the_models_own():
  class Net(snt.Module):
    def __init__(self):
      super().__init__(name="net")
      self.linear = snt.Linear(8)
      self.norm = snt.BatchNorm(True, True)
      self.out = snt.Linear(2)

    def __call__(self, x, is_training):
      return self.out(tf.nn.relu(self.norm(self.linear(x), is_training)))

  net = Net()
  train, _ = _train(model=net, ema=0.9)
  average = train.traced_step.averages.averages["model"]
  assert [t.name for t in average.targets] == [
      v.name for v in net.trainable_variables]
  statistics = [v for v in net.variables if not v.trainable]
  assert statistics and not any(
      s.ref() in {t.ref() for t in average.targets} for s in statistics)


def test_a_dict_names_the_models_and_bad_values_are_named():
  train, _ = _train(ema={"model": 0.5})
  assert set(train.traced_step.averages.averages) == {"model"}
  with pytest.raises(ValueError, match=r"^Supervised: ema names \['nope'\], "
                     r"which are not models of this scenario; its models\(\) "
                     r"are \['model'\]"):
    _train(ema={"nope": 0.5})
  with pytest.raises(ValueError, match=r"^Supervised: ema must be a float in "
                     r"\[0, 1\), got 1.0"):
    snt.scenarios.Supervised(4, ema=1.0)
  with pytest.raises(ValueError, match=r"^Supervised: ema\['model'\] must be"):
    snt.scenarios.Supervised(4, ema={"model": -0.5})


def test_gan_generator_ema_is_the_engines_ema():
  gan = snt.scenarios.GAN(4, batch_size=8, latent_size=2, progress=False,
                          generator_ema=0.9)
  assert gan.updates.ema == {"generator": 0.9}
  with pytest.raises(ValueError, match=r"^GAN: pass generator_ema or ema, "
                     r"not both"):
    snt.scenarios.GAN(4, generator_ema=0.9, ema=0.5)
