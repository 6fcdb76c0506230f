"""Tests for sonnet_like/modules/embed.py."""

import numpy as np
import pytest
import sonnet as reference
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.modules import embed as embed_lib


def test_lookup_is_row_indexing():
  embed = snt.Embed(vocab_size=7, embed_dim=3)
  ids = np.array([[0, 6, 2], [2, 2, 5]])
  out = embed(ids)
  assert out.shape == (2, 3, 3) and out.dtype == tf.float32
  np.testing.assert_array_equal(out, embed.embeddings.numpy()[ids])
  assert embed.embeddings.name.endswith("embed/embeddings:0")
  assert (embed.vocab_size, embed.embed_dim) == (7, 3)


def test_matches_sonnet_with_same_seed():
  tf.random.set_seed(5)
  ours = snt.Embed(50)
  tf.random.set_seed(5)
  theirs = reference.Embed(50)
  assert ours.embed_dim == theirs.embed_dim == 16
  np.testing.assert_array_equal(ours.embeddings, theirs.embeddings)
  ids = tf.constant([3, 49, 0])
  np.testing.assert_array_equal(ours(ids), theirs(ids))


@pytest.mark.parametrize("vocab_size", [1, 10, 1000, 123456])
def test_default_embed_dim_matches_sonnet(vocab_size):
  from sonnet.src import embed as theirs  # pylint: disable=g-import-not-at-top
  assert embed_lib.embedding_dim(vocab_size) == theirs.embedding_dim(
      vocab_size)


def test_existing_vocab_dtype_and_trainable():
  vocab = np.arange(12.).reshape(4, 3)
  embed = snt.Embed(existing_vocab=vocab, trainable=False, dtype=tf.float64)
  assert (embed.vocab_size, embed.embed_dim) == (4, 3)
  assert embed.embeddings.dtype == tf.float64
  assert not embed.embeddings.trainable
  np.testing.assert_array_equal(embed([3, 1]), vocab[[3, 1]])


def test_initializer_is_used():
  embed = snt.Embed(5, 2, initializer=snt.initializers.Constant(0.25))
  np.testing.assert_array_equal(embed.embeddings, np.full([5, 2], 0.25))


@pytest.mark.parametrize("densify", [False, True])
def test_gradient_dense_or_sparse(densify):
  embed = snt.Embed(5, 2, densify_gradients=densify)
  with tf.GradientTape() as tape:
    loss = tf.reduce_sum(embed(tf.constant([1, 1, 4])))
  grad = tape.gradient(loss, embed.embeddings)
  assert isinstance(grad, tf.IndexedSlices) != densify
  expected = np.zeros([5, 2])
  expected[1], expected[4] = 2., 1.
  np.testing.assert_array_equal(tf.convert_to_tensor(grad), expected)


def test_int_dtypes():
  embed = snt.Embed(5, 2)
  for dtype in (tf.int32, tf.int64, tf.uint8, tf.int16):
    np.testing.assert_array_equal(embed(tf.constant([4, 0], dtype)),
                                  embed.embeddings.numpy()[[4, 0]])
  with pytest.raises(TypeError, match="expects integer ids, got float32"):
    embed(tf.constant([1.]))


def test_out_of_range_ids_raise_eagerly():
  embed = snt.Embed(10, 2, name="tok_eager")
  for ids, low, high in (([3, 10], 3, 10), ([-1, 2], -1, 2)):
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=rf"Embed 'tok_eager' has vocab_size 10, so its "
                       rf"ids must lie in \[0, 9\]; got ids from {low} to "
                       rf"{high}"):
      embed(tf.constant(ids))


def test_out_of_range_ids_raise_inside_tf_function():
  embed = snt.Embed(10, 2, name="tok_graph")
  f = tf.function(embed, input_signature=[tf.TensorSpec([None], tf.int32)])
  np.testing.assert_array_equal(f(tf.constant([9, 0])),
                                embed.embeddings.numpy()[[9, 0]])
  assert f(tf.zeros([0], tf.int32)).shape == (0, 2)
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match=r"Embed ..?tok_graph..? has vocab_size 10.*"
                     r"\[0, 9\].*got ids from\] \[-3\] \[to\] \[12\]"):
    f(tf.constant([-3, 12, 4]))


@pytest.mark.parametrize("kwargs,match", [
    (dict(), "Must provide one of vocab_size or existing_vocab"),
    (dict(vocab_size=0), "vocab_size must be a positive int"),
    (dict(vocab_size=3.5), "vocab_size must be a positive int"),
    (dict(vocab_size=3, embed_dim=0), "embed_dim must be a positive int"),
    (dict(vocab_size=3, existing_vocab=np.ones([3, 2])), "none of `vocab_size`, `embedding_dim`, `initializer` are needed"),
    (dict(existing_vocab=np.ones([3])), "must be a matrix"),
])
def test_bad_constructor_arguments(kwargs, match):
  with pytest.raises(ValueError, match="Embed: .*" + match):
    snt.Embed(**kwargs)


def test_out_of_range_ids_under_xla_give_nan_rows():
  embed = snt.Embed(10, 2, name="tok_xla")
  f = tf.function(embed, jit_compile=True)
  out = f(tf.constant([-1, 3, 10])).numpy()
  assert np.isnan(out[[0, 2]]).all()
  np.testing.assert_array_equal(out[1], embed.embeddings.numpy()[3])
