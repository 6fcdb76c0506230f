"""snt.export.save and Signature: names, the callable object, errors."""

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt


def test_nested_inputs_and_outputs_get_names(tmp_path):
  linear = snt.Linear(2, name="linear")

  def two_heads(inputs):
    joined = tf.concat([inputs["image"], inputs["extra"]["size"]], axis=-1)
    return {"score": linear(joined), "pair": (joined, joined * 2.0)}

  inputs = {"image": tf.TensorSpec([None, 3]),
            "extra": {"size": tf.TensorSpec([None, 1])}}
  path = snt.export.save(tmp_path / "m", {
      "serving_default": snt.export.Signature(two_heads, inputs)})
  loaded = tf.saved_model.load(path)
  served = loaded.signatures["serving_default"]
  assert sorted(served.structured_input_signature[1]) == ["extra_size",
                                                          "image"]
  got = served(image=tf.ones([2, 3]), extra_size=tf.ones([2, 1]))
  assert sorted(got) == ["pair_0", "pair_1", "score"]
  np.testing.assert_array_equal(got["pair_1"], np.full([2, 4], 2.0))
  called = loaded({"image": tf.ones([2, 3]),
                   "extra": {"size": tf.ones([2, 1])}})
  np.testing.assert_array_equal(called["score"], got["score"])
  np.testing.assert_array_equal(called["pair"][0], got["pair_0"])


def test_tuple_inputs_and_float64_examples(tmp_path):
  def add(inputs):
    return inputs[0] + inputs[1]

  example = (np.zeros([3, 2]), np.zeros([3, 2], np.float32))  # float64 first
  path = snt.export.save(tmp_path / "m", {
      "serving_default": snt.export.Signature(add, example, input_name="x")})
  served = tf.saved_model.load(path).signatures["serving_default"]
  specs = served.structured_input_signature[1]
  assert sorted(specs) == ["x_0", "x_1"]
  assert specs["x_0"].dtype == tf.float32
  assert specs["x_0"].shape.as_list() == [None, 2]
  got = served(x_0=tf.ones([5, 2]), x_1=tf.ones([5, 2]))["outputs"]
  np.testing.assert_array_equal(got, np.full([5, 2], 2.0))


def test_call_none_gives_an_object_that_is_not_callable(tmp_path):
  path = snt.export.save(tmp_path / "m", {
      "double": snt.export.Signature(lambda x: 2.0 * x,
                                     tf.TensorSpec([None]))}, call=None)
  loaded = tf.saved_model.load(path)
  assert not callable(loaded)
  assert list(loaded.signatures) == ["double"]


def test_other_resources_need_trackables(tmp_path):
  table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
      tf.constant(["a", "b"]), tf.constant([1, 2], tf.int64)), -1)
  signatures = {"serving_default": snt.export.Signature(
      table.lookup, tf.TensorSpec([None], tf.string))}
  with pytest.raises(ValueError, match=r"export.save: the signatures use a "
                     r"resource that is not a variable .*"
                     r"trackables=\[\.\.\.\]"):
    snt.export.save(tmp_path / "m", signatures)
  path = snt.export.save(tmp_path / "m", signatures, trackables=[table])
  served = tf.saved_model.load(path).signatures["serving_default"]
  np.testing.assert_array_equal(
      served(inputs=tf.constant(["b", "z"]))["outputs"], [2, -1])


def test_errors(tmp_path):
  spec = tf.TensorSpec([None, 2])
  with pytest.raises(ValueError, match="signatures must name at least one"):
    snt.export.save(tmp_path / "m", {})
  with pytest.raises(TypeError, match="signatures must map names to "
                     "export.Signature, got 3 for 'a'"):
    snt.export.save(tmp_path / "m", {"a": 3})
  with pytest.raises(ValueError, match=r"call must be one of \['a'\] or "
                     r"None, got 'serving_default'"):
    snt.export.save(tmp_path / "m", {"a": snt.export.Signature(tf.identity,
                                                                spec)})
  with pytest.raises(ValueError, match="has two inputs named 'a_b'"):
    snt.export.save(tmp_path / "m", {"serving_default": snt.export.Signature(
        tf.identity, {"a_b": spec, "a": {"b": spec}})})
  with pytest.raises(ValueError, match="has two outputs named 'x_y'"):
    snt.export.save(tmp_path / "m", {"serving_default": snt.export.Signature(
        lambda x: {"x-y": x, "x_y": x}, spec)})
