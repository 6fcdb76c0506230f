"""Tests for sonnet_like/nets/nature_cnn.py."""

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt


def _parameters(channels_in, num_outputs, hidden=512, side=84):
  """The Nature network's size, counted from its layers."""
  total, channels = 0, channels_in
  for out, kernel, stride in ((32, 8, 4), (64, 4, 2), (64, 3, 1)):
    total += kernel * kernel * channels * out + out
    side, channels = (side - kernel) // stride + 1, out
  total += side * side * channels * hidden + hidden   # 7 * 7 * 64 -> 512
  if num_outputs:
    total += hidden * num_outputs + num_outputs
  return total


@pytest.mark.parametrize("num_outputs", [4, 18, None])
def test_shapes_and_parameter_count(num_outputs):
  net = snt.nets.NatureCNN(num_outputs)
  out = net(tf.zeros([3, 84, 84, 4], tf.uint8))
  assert out.shape == [3, num_outputs or 512]
  assert out.dtype == tf.float32
  count = sum(int(tf.size(v)) for v in net.trainable_variables)
  assert count == _parameters(4, num_outputs)
  if num_outputs == 4:
    assert count == 1_686_180
  assert [v.name for v in net.trainable_variables] == [
      f"nature_cnn/{layer}/{p}:0"
      for layer in ["conv_0", "conv_1", "conv_2", "hidden"]
      + (["output"] if num_outputs else []) for p in ["b", "w"]]
  shapes = {v.name: v.shape.as_list() for v in net.trainable_variables}
  assert shapes["nature_cnn/conv_0/w:0"] == [8, 8, 4, 32]
  assert shapes["nature_cnn/conv_2/w:0"] == [3, 3, 64, 64]
  assert shapes["nature_cnn/hidden/w:0"] == [7 * 7 * 64, 512]


def test_uint8_is_scaled_by_1_over_255_inside_the_call():
  net = snt.nets.NatureCNN(6)
  pixels = np.random.default_rng(0).integers(0, 256, [2, 84, 84, 4])
  from_uint8 = net(tf.constant(pixels, tf.uint8))
  from_float = net(tf.constant(pixels / 255.0, tf.float32))
  np.testing.assert_allclose(from_uint8, from_float, rtol=1e-5, atol=1e-6)


def test_uint8_reaches_a_compiled_step_as_uint8():
  net = snt.nets.NatureCNN(3, hidden_size=16)
  step = tf.function(net, input_signature=[
      tf.TensorSpec([None, 84, 84, 4], tf.uint8)])
  assert step(tf.zeros([5, 84, 84, 4], tf.uint8)).shape == [5, 3]
  graph = step.get_concrete_function().graph
  casts = [op for op in graph.get_operations() if op.type == "Cast"]
  assert any(op.inputs[0].dtype == tf.uint8 for op in casts)


def test_the_activation_and_initializers_are_used():
  net = snt.nets.NatureCNN(2, hidden_size=8, activation=tf.nn.tanh,
                           w_init=snt.initializers.Constant(0.01),
                           b_init=snt.initializers.Constant(0.5))
  out = net(tf.ones([1, 36, 36, 4]))
  # Every hidden unit is tanh(...) <= 1, so each output is at most
  # 8 * 0.01 + 0.5.
  assert np.all(out.numpy() <= 8 * 0.01 + 0.5 + 1e-6)
  assert all(np.all(v.numpy() == 0.5) for v in net.trainable_variables
             if v.name.endswith("/b:0"))


def test_bad_arguments_and_inputs_are_named():
  with pytest.raises(ValueError, match=r"NatureCNN: num_outputs must be a "
                     r"positive int or None, got 0"):
    snt.nets.NatureCNN(0)
  with pytest.raises(ValueError, match=r"NatureCNN: hidden_size must be a "
                     r"positive int, got -3"):
    snt.nets.NatureCNN(4, hidden_size=-3)
  net = snt.nets.NatureCNN(4)
  with pytest.raises(ValueError, match=r"rank-4 input \[N, H, W, C\]"):
    net(tf.zeros([84, 84, 4], tf.uint8))
  with pytest.raises(TypeError, match=r"floating-point input.*int32"):
    net(tf.zeros([1, 84, 84, 4], tf.int32))
