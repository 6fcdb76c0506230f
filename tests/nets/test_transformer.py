"""Tests for sonnet_like/nets/transformer.py."""

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt


def _x(shape=(2, 6, 8), seed=0):
  return tf.constant(np.random.default_rng(seed).normal(size=shape),
                     tf.float32)


def test_pre_norm_blocks_with_residuals():
  net = snt.nets.Transformer(2, 2, 8, 12, norm="rms", activation=tf.nn.relu)
  x = _x()
  out = net(x)
  hidden = x
  for block in net.blocks:
    assert isinstance(block.attention_norm, snt.RMSNorm)
    hidden = hidden + block.attention(block.attention_norm(hidden))
    normed = block.mlp_norm(hidden)
    inner = tf.nn.relu(block.mlp._layers[0](normed))  # pylint: disable=protected-access
    hidden = hidden + block.mlp._layers[1](inner)  # pylint: disable=protected-access
  np.testing.assert_allclose(out, net.final_norm(hidden), rtol=1e-5,
                             atol=1e-6)
  assert net.blocks[0].mlp._layers[0].output_size == 12  # pylint: disable=protected-access


@pytest.mark.parametrize("causal", [True, False])
def test_causal_outputs_ignore_the_future(causal):
  net = snt.nets.Transformer(1, 2, 8, causal=causal)
  x = _x()
  changed = tf.concat([x[:, :3], _x((2, 3, 8), seed=1)], axis=1)
  difference = np.abs(net(x) - net(changed))
  assert (difference[:, :3].max() < 1e-5) == causal
  assert difference[:, 3:].min() > 1e-3


def test_remat_and_chunks_change_memory_not_results():
  x = _x((2, 7, 8))
  nets = [snt.nets.Transformer(2, 2, 8, 16, num_kv_heads=1, causal=True,
                               rotary=True, **kw)
          for kw in ({}, {"remat": True, "chunk_size": 3})]
  nets[0](x)
  nets[1](x)
  for a, b in zip(nets[0].variables, nets[1].variables):
    b.assign(a)
  results = []
  for net in nets:
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(net(x) ** 2)
    results.append((loss, tape.gradient(loss, net.trainable_variables)))
  np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-5)
  for a, b in zip(results[1][1], results[0][1]):
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_arguments_are_checked():
  with pytest.raises(ValueError, match=r"Transformer has 3 heads, which do not"
                     r" divide model_size 8; pass key_size"):
    snt.nets.Transformer(1, 3, 8)
  with pytest.raises(ValueError, match=r"^Transformer: key_size must be a "
                     r"positive int or None, got 0\."):
    snt.nets.Transformer(1, 3, 8, key_size=0)
  with pytest.raises(ValueError, match="norm must be one of"):
    snt.nets.Transformer(1, 2, 8, norm="batch")
  net = snt.nets.Transformer(1, 2, 8, dropout_rate=0.1, name="net")
  with pytest.raises(ValueError, match="Transformer 'net': is_training is "
                     "required"):
    net(_x())
  with pytest.raises(ValueError, match="Transformer 'net' was built for "
                     "model size 8, got 5"):
    net(_x((2, 6, 5)), is_training=False)


def test_key_size_and_value_size_reach_every_blocks_attention():
  # Before, Transformer took neither, and 5 heads could not share 16.
  net = snt.nets.Transformer(2, 5, 16, key_size=4, value_size=2, name="net")
  assert net(_x((2, 3, 16))).shape == (2, 3, 16)
  for block in net.blocks:
    attention = block.attention
    assert (attention.key_size, attention.value_size) == (4, 2)
    assert attention.query_projection.output_size == 5 * 4
    assert attention.value_projection.output_size == 5 * 2
    assert attention.output_projection.output_size == 16
  with pytest.raises(ValueError, match=(
      r"^Transformer has 5 heads, which do not divide model_size 16; pass "
      r"key_size \(and value_size if it differs\), each head's size, e\.g\. "
      r"key_size=3, or choose a number of heads that divides 16\.$")):
    snt.nets.Transformer(1, 5, 16)
