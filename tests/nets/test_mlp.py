"""Tests for sonnet_like/nets/mlp.py."""

import numpy as np
import pytest
import sonnet
import tensorflow as tf

import sonnet_like as snt


def _forward(mlp, x, activation=tf.nn.relu, activate_final=False):
  """Reference forward pass from the layers' variables."""
  layers = mlp._layers  # pylint: disable=protected-access
  for i, layer in enumerate(layers):
    x = x @ layer.w + (layer.b if layer.with_bias else 0)
    if i < len(layers) - 1 or activate_final:
      x = activation(x)
  return x


@pytest.mark.parametrize("activation,activate_final,with_bias", [
    (tf.nn.relu, False, True), (tf.tanh, True, True),
    (tf.nn.sigmoid, False, False)])
def test_forward_matches_reference(activation, activate_final, with_bias):
  mlp = snt.nets.MLP([5, 4, 3], activation=activation, with_bias=with_bias,
                     activate_final=activate_final)
  x = tf.random.normal([2, 6])
  np.testing.assert_allclose(mlp(x), _forward(mlp, x, activation,
                                              activate_final), rtol=1e-5,
                             atol=1e-6)


def test_layer_names_and_sizes():
  mlp = snt.nets.MLP([5, 3], name="net")
  mlp(tf.ones([1, 2]))
  assert [v.name for v in mlp.variables] == [
      "net/linear_0/b:0", "net/linear_0/w:0", "net/linear_1/b:0",
      "net/linear_1/w:0"]
  assert [m.name for m in mlp.submodules] == ["linear_0", "linear_1"]
  assert mlp._layers[1].w.shape == [5, 3]  # pylint: disable=protected-access


def test_matches_dm_sonnet_with_same_weights():
  init = snt.initializers.RandomNormal(seed=1)
  ours = snt.nets.MLP([4, 3], w_init=init, b_init=init, name="mlp_cmp")
  theirs = sonnet.nets.MLP([4, 3], name="mlp_cmp")
  x = tf.random.normal([2, 5])
  ours(x)
  theirs(x)
  for a, b in zip(ours.variables, theirs.variables):
    b.assign(a)
  np.testing.assert_allclose(ours(x), theirs(x), rtol=1e-6)
  assert ([v.name.split("/", 1)[1] for v in ours.variables] ==
          [v.name.split("/", 1)[1] for v in theirs.variables])


def test_initializers_are_used():
  mlp = snt.nets.MLP([2], w_init=snt.initializers.Constant(0.5),
                     b_init=snt.initializers.Constant(1.))
  np.testing.assert_allclose(mlp(tf.ones([1, 3])), [[2.5, 2.5]])


def test_dropout_only_in_training():
  mlp = snt.nets.MLP([100, 100], dropout_rate=0.5,
                     w_init=snt.initializers.Constant(0.01),
                     b_init=snt.initializers.Constant(1.))
  x = tf.ones([4, 10])
  np.testing.assert_allclose(mlp(x, is_training=False), _forward(mlp, x),
                             rtol=1e-6)
  hidden = mlp._layers[0](x)  # pylint: disable=protected-access
  trained = mlp(x, is_training=True).numpy()
  # With constant weights every hidden unit is equal; dropout zeroes about
  # half and doubles the rest, so the output is not the evaluation output.
  assert not np.allclose(trained, mlp(x, is_training=False))
  assert np.isfinite(trained).all() and hidden.shape == [4, 100]


def test_dropout_rate_zero_means_no_dropout():
  mlp = snt.nets.MLP([3], dropout_rate=0)
  assert mlp(tf.ones([1, 2])).shape == [1, 3]


def test_dropout_with_tensor_is_training_in_tf_function():
  mlp = snt.nets.MLP([3, 2], dropout_rate=0.5)
  f = tf.function(lambda x, t: mlp(x, is_training=t))
  x = tf.random.normal([2, 4])
  np.testing.assert_allclose(f(x, tf.constant(False)), _forward(mlp, x),
                             rtol=1e-5, atol=1e-6)


def test_reverse():
  mlp = snt.nets.MLP([5, 3], activate_final=True, name="enc")
  y = mlp(tf.ones([2, 7]))
  rev = mlp.reverse()
  assert rev(y).shape == [2, 7]
  assert rev.name == "enc_reversed"
  assert [m.output_size for m in rev.submodules] == [5, 7]
  np.testing.assert_allclose(rev(y), _forward(rev, y, activate_final=True),
                             rtol=1e-6)
  dec = mlp.reverse(activate_final=False, name="dec")
  assert dec.name == "dec"
  np.testing.assert_allclose(dec(y), _forward(dec, y), rtol=1e-6)


def test_nets_namespace():
  assert "MLP" in snt.nets.__all__
  assert "nets" in snt.__all__


# Errors.


def test_is_training_required_with_dropout():
  mlp = snt.nets.MLP([3], dropout_rate=0.2, name="mlp_drop")
  with pytest.raises(ValueError, match=r"MLP 'mlp_drop\w*' uses dropout "
                     r"\(dropout_rate=0.2\): The `is_training` argument is "
                     "required when dropout is used"):
    mlp(tf.ones([1, 2]))


def test_is_training_without_dropout():
  with pytest.raises(ValueError, match="has no dropout .*: The `is_training` "
                     "argument should only be used with dropout"):
    snt.nets.MLP([3])(tf.ones([1, 2]), is_training=True)


def test_bad_is_training_with_dropout():
  with pytest.raises(TypeError, match="is_training must be a bool"):
    snt.nets.MLP([3], dropout_rate=0.5)(tf.ones([1, 2]), is_training="False")


@pytest.mark.parametrize("rate", [1., -0.5, "0.1"])
def test_bad_dropout_rate(rate):
  with pytest.raises(ValueError, match=r"MLP: dropout_rate must be a number "
                     r"in \[0, 1\)"):
    snt.nets.MLP([3], dropout_rate=rate)


def test_b_init_without_bias():
  with pytest.raises(ValueError, match="MLP: When with_bias=False b_init must "
                     "not be set"):
    snt.nets.MLP([3], with_bias=False, b_init=snt.initializers.Zeros())


def test_bad_activation():
  with pytest.raises(TypeError, match="MLP: activation must be callable"):
    snt.nets.MLP([3], activation="relu")


def test_bad_output_size():
  with pytest.raises(ValueError, match="Linear: output_size must be a "
                     "positive int"):
    snt.nets.MLP([3, 0])


def test_reverse_before_call():
  # Also an AttributeError, what Sonnet 2 raises for the same mistake.
  for expected in (ValueError, AttributeError):
    with pytest.raises(expected, match=r"must be called once before "
                       r"reverse\(\)"):
      snt.nets.MLP([3]).reverse()


def test_input_size_mismatch_names_the_layer():
  mlp = snt.nets.MLP([3], name="mlp_in")
  mlp(tf.ones([1, 2]))
  with pytest.raises(ValueError, match=r"linear_0' was built for input size "
                     "2, got 4"):
    mlp(tf.ones([1, 4]))


def test_variable_dropout_rate_requires_is_training():
  mlp = snt.nets.MLP([3, 2], dropout_rate=tf.Variable(0.5))
  with pytest.raises(ValueError, match="`is_training` argument is required"):
    mlp(tf.ones([1, 2]))
  assert mlp(tf.ones([1, 2]), is_training=False).shape == [1, 2]
