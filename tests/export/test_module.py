"""snt.export.save_module: saved_model_cli, TFLite, inference mode, errors."""

import os

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from tests import export_common


_conv_net = export_common.conv_net


def _images(batch: int, seed: int = 0) -> np.ndarray:
  return export_common.normal((batch, 8, 8, 1), seed)


class _Noisy(snt.Module):
  """Linear -> BatchNorm -> Dropout, taking is_training."""

  def __init__(self):
    super().__init__(name="noisy")
    self.linear = snt.Linear(6, name="linear")
    self.norm = snt.BatchNorm(True, True, name="norm")
    self.dropout = snt.Dropout(0.5)

  def __call__(self, x, is_training):
    x = self.norm(self.linear(x), is_training=is_training)
    return self.dropout(x, is_training=is_training)


def test_saved_model_cli_lists_the_signature(tmp_path):
  path = snt.export.save_module(snt.Linear(3, name="head"), tmp_path / "m",
                                tf.TensorSpec([None, 4]), classifier=True)
  shown = export_common.saved_model_cli(path)
  assert "signature_def['serving_default']" in shown
  for name in ("inputs['inputs']", "outputs['outputs']",
               "outputs['probabilities']", "outputs['classes']"):
    assert name in shown
  assert "shape: (-1, 4)" in shown


def _tflite(path: str, inputs: np.ndarray) -> dict[str, np.ndarray]:
  converter = tf.lite.TFLiteConverter.from_saved_model(path)
  interpreter = tf.lite.Interpreter(model_content=converter.convert())
  runner = interpreter.get_signature_runner("serving_default")
  return runner(inputs=inputs)


def test_mlp_and_convnet_convert_to_tflite_and_agree(tmp_path):
  tf.random.set_seed(0)
  mlp, conv = snt.nets.MLP([16, 3], name="mlp"), _conv_net()
  x, images = np.random.default_rng(0).normal(size=(6, 5)).astype(
      np.float32), _images(6)
  mlp_path = snt.export.save_module(mlp, tmp_path / "mlp", x)
  conv_path = snt.export.save_module(conv, tmp_path / "conv", images)
  np.testing.assert_allclose(_tflite(mlp_path, x)["outputs"], mlp(x),
                             rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(_tflite(conv_path, images)["outputs"],
                             conv(images), rtol=1e-5, atol=1e-5)


def test_exports_in_inference_mode(tmp_path):
  model = _Noisy()
  x = np.random.default_rng(0).normal(size=(16, 4)).astype(np.float32)
  model(x, is_training=True)  # Moving statistics move away from 0 / 1.
  path = snt.export.save_module(model, tmp_path / "m", x)
  served = tf.saved_model.load(path).signatures["serving_default"]
  got = served(inputs=tf.constant(x[:5]))["outputs"].numpy()
  np.testing.assert_array_equal(got, model(x[:5], is_training=False))
  assert not np.array_equal(got, model(x[:5], is_training=True))


def test_further_signatures(tmp_path):
  model = snt.Linear(3, name="linear")
  path = snt.export.save_module(
      model, tmp_path / "m", tf.TensorSpec([None, 2]),
      signatures={"embed": snt.export.Signature(
          lambda x: tf.nn.l2_normalize(model(x), -1),
          tf.TensorSpec([None, 2]), output_name="embedding")})
  loaded = tf.saved_model.load(path)
  assert sorted(loaded.signatures) == ["embed", "serving_default"]
  got = loaded.signatures["embed"](inputs=tf.ones([4, 2]))["embedding"]
  np.testing.assert_allclose(np.linalg.norm(got, axis=-1), 1.0, rtol=1e-6)


def test_an_earlier_export_is_replaced_and_other_folders_refused(tmp_path):
  model = snt.Linear(1, name="linear")
  spec = tf.TensorSpec([None, 2])
  snt.export.save_module(model, tmp_path / "m", spec)
  model.w.assign(model.w + 1.0)
  snt.export.save_module(model, tmp_path / "m", spec)
  served = tf.saved_model.load(str(tmp_path / "m")).signatures[
      "serving_default"]
  np.testing.assert_array_equal(served(inputs=tf.ones([1, 2]))["outputs"],
                                model(tf.ones([1, 2])))
  assert sorted(os.listdir(tmp_path)) == ["m"]  # No temporary folders left.
  (tmp_path / "notes").mkdir()
  (tmp_path / "notes" / "todo.txt").write_text("mine")
  with pytest.raises(ValueError, match=r"save_module: .*notes exists and is "
                     r"not a SavedModel folder"):
    snt.export.save_module(model, tmp_path / "notes", spec)
  assert (tmp_path / "notes" / "todo.txt").read_text() == "mine"


def test_a_failed_export_leaves_the_earlier_one(tmp_path):
  model = snt.Linear(1, name="linear")
  snt.export.save_module(model, tmp_path / "m", tf.TensorSpec([None, 2]))
  before = sorted(os.listdir(tmp_path / "m"))
  with pytest.raises(TypeError, match="can only return tensors"):
    snt.export.save_module(lambda x: object(), tmp_path / "m",
                           tf.TensorSpec([None, 2]))
  assert sorted(os.listdir(tmp_path / "m")) == before
  assert sorted(os.listdir(tmp_path)) == ["m"]


def test_errors_name_what_cannot_be_exported(tmp_path):
  with pytest.raises(TypeError, match="save_module: module must be callable, "
                     "got 3"):
    snt.export.save_module(3, tmp_path / "m", tf.TensorSpec([None, 2]))
  with pytest.raises(TypeError, match=r"save_module: inputs must be "
                     r"tf.TensorSpecs.*got 'abc' at 'inputs'"):
    snt.export.save_module(snt.Linear(1), tmp_path / "m", "abc")
  with pytest.raises(ValueError, match=r"input 'inputs' of signature "
                     r"'serving_default' needs a batch dimension .*got shape "
                     r"\(\)"):
    snt.export.save_module(tf.identity, tmp_path / "m", tf.TensorSpec([]))
  with pytest.raises(TypeError, match=r"signature 'serving_default' returned "
                     r"<object.*at 'outputs'; a signature can only return "
                     r"tensors"):
    snt.export.save_module(lambda x: object(), tmp_path / "m",
                           tf.TensorSpec([None, 2]))
  with pytest.raises(ValueError, match=r"classifier=True needs outputs "
                     r"shaped \[batch, classes\]"):
    snt.export.save_module(tf.identity, tmp_path / "m",
                           tf.TensorSpec([None, 2, 3]), classifier=True)
  with pytest.raises(ValueError, match="must not redefine 'serving_default'"):
    snt.export.save_module(tf.identity, tmp_path / "m",
                           tf.TensorSpec([None, 2]),
                           signatures={"serving_default": None})
  assert not os.listdir(tmp_path)
