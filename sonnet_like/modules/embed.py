"""Embed: a learned vector for each token id."""

import math
from typing import Any

import numpy as np
import tensorflow as tf

from sonnet_like.core import base
from sonnet_like.core import checks
from sonnet_like.core import initializers
from sonnet_like.core import types
from sonnet_like.core.tf_private import graphs

OUT_OF_RANGE_ERROR = (
    "{module} has vocab_size {vocab_size}, so its ids must lie in [0, "
    "{last}]; got ids from {low} to {high}. Map unknown tokens to a "
    "reserved id (e.g. tf.clip_by_value or tf.where) before the lookup.")


def embedding_dim(vocab_size: int) -> int:
  """A rule-of-thumb embedding size: `round(6 * vocab_size ** 0.25)`.

      >>> embedding_dim(10_000)
      60

  Raises:
    ValueError: if `vocab_size` is not positive.
  """
  if not vocab_size or vocab_size <= 0:
    raise ValueError(f"Embed: Invalid vocab_size {vocab_size!r}: it must be a "
                     "positive int.")
  return int(round(6.0 * math.sqrt(math.sqrt(vocab_size))))


@tf.custom_gradient
def _dense_gradient(x: tf.Tensor):
  """Identity whose gradient is a dense tensor, never `tf.IndexedSlices`."""

  def grad(dy):
    return tf.convert_to_tensor(dy)

  return tf.identity(x), grad


class Embed(base.Module):
  """Looks up one row of `embeddings` (`[vocab_size, embed_dim]`) per id.

  Unlike most modules, the embedding matrix is created in the constructor
  (its shape does not depend on the input), so it can be shared, e.g. as the
  output projection of a language model, before the first call.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> embed = snt.Embed(vocab_size=100, embed_dim=8, name="tokens")
      >>> embed.embeddings.name
      'tokens/embeddings:0'
      >>> embed(tf.constant([[1, 2, 3]])).shape
      TensorShape([1, 3, 8])

  Ids outside `[0, vocab_size)` raise an error (TensorFlow's lookup would
  raise a kernel error on CPU and return zeros on GPU):

      >>> embed(tf.constant([99, 100]))
      Traceback (most recent call last):
      ...
      tensorflow.python.framework.errors_impl.InvalidArgumentError: Embed \
'tokens' has vocab_size 100, so its ids must lie in [0, 99]; got ids from 99 \
to 100. ...

  Under `tf.function(jit_compile=True)` XLA removes assertions, so there an
  out-of-range id gives a row of NaNs instead (floating-point embeddings).
  """

  def __init__(self, vocab_size: int | None = None,
               embed_dim: int | None = None,
               existing_vocab: types.TensorLike | None = None,
               densify_gradients: bool = False,
               initializer: initializers.Initializer | None = None,
               trainable: bool = True,
               dtype: tf.DType = tf.float32,
               name: str | None = None):
    """Constructs an Embed module.

    Args:
      vocab_size: Number of distinct ids. Needed unless `existing_vocab` is
        given.
      embed_dim: Size of each embedding; by default `embedding_dim(vocab_size)`
        (about `6 * vocab_size ** 0.25`).
      existing_vocab: A `[vocab_size, embed_dim]` matrix to start from; then
        `vocab_size`, `embed_dim` and `initializer` must be left unset.
      densify_gradients: Whether to turn the gradient of the embeddings into a
        dense tensor instead of `tf.IndexedSlices` (cheaper for small
        vocabularies, wasteful for large ones).
      initializer: Initializer of the embeddings; by default a truncated
        normal with stddev 1.
      trainable: Whether the embeddings are trainable.
      dtype: The dtype of the embeddings.
      name: Name of the module.
    """
    super().__init__(name=name)
    if vocab_size is None and existing_vocab is None:
      raise ValueError("Embed: Must provide one of vocab_size or "
                       "existing_vocab, got neither.")
    if existing_vocab is not None and (vocab_size or embed_dim or initializer):
      raise ValueError(
          "Embed: If `existing_vocab` is provided, none of `vocab_size`, "
          "`embedding_dim`, `initializer` are needed (they are read from it), "
          "got "
          f"vocab_size={vocab_size!r}, embed_dim={embed_dim!r}, "
          f"initializer={initializer!r}.")
    dtype = tf.as_dtype(dtype)
    if existing_vocab is None:
      _check_positive("vocab_size", vocab_size)
      if embed_dim is None:
        embed_dim = embedding_dim(vocab_size)
      _check_positive("embed_dim", embed_dim)
      if initializer is None:
        initializer = initializers.TruncatedNormal()
      value = initializer([vocab_size, embed_dim], dtype)
    else:
      value = tf.convert_to_tensor(existing_vocab, dtype=dtype)
      if value.shape.rank != 2:
        raise ValueError("Embed: existing_vocab must be a matrix [vocab_size, "
                         f"embed_dim], got shape {tuple(value.shape)}.")
      vocab_size, embed_dim = value.shape.as_list()
    self.vocab_size = vocab_size
    self.embed_dim = embed_dim
    self.densify_gradients = densify_gradients
    self.embeddings = tf.Variable(value, trainable=trainable, name="embeddings")

  def __call__(self, inputs: types.TensorLike) -> tf.Tensor:
    """Returns the embeddings of `inputs`, shape `inputs.shape + [embed_dim]`.

    Args:
      inputs: Integer ids in `[0, vocab_size)`, of any shape.

    Raises:
      TypeError: if `inputs` are not integers.
      tf.errors.InvalidArgumentError: if an id is out of range.
    """
    ids = self._checked_ids(inputs)
    embeddings = self.embeddings
    if self.densify_gradients:
      embeddings = _dense_gradient(embeddings)
    if not (_in_xla() and embeddings.dtype.is_floating):
      return tf.nn.embedding_lookup(embeddings, ids)
    # XLA drops the assertion and clamps gather indices: mark bad ids with NaN
    # rather than silently returning a neighbouring row.
    in_range = tf.logical_and(ids >= 0, ids < self.vocab_size)
    rows = tf.nn.embedding_lookup(
        embeddings, tf.clip_by_value(ids, 0, self.vocab_size - 1))
    nan = tf.constant(float("nan"), rows.dtype)
    return tf.where(in_range[..., tf.newaxis], rows, nan)

  def _checked_ids(self, inputs: Any) -> tf.Tensor:
    ids = tf.convert_to_tensor(inputs)
    if not ids.dtype.is_integer:
      raise checks.InputDTypeError(
          f"{checks.describe(self)} expects integer ids, got "
          f"{ids.dtype.name}.")
    if ids.dtype not in (tf.int32, tf.int64):
      ids = tf.cast(ids, tf.int64)
    low, high = tf.reduce_min(ids), tf.reduce_max(ids)
    valid = tf.logical_and(low >= 0, high < self.vocab_size)
    template = dict(module=checks.describe(self), vocab_size=self.vocab_size,
                    last=self.vocab_size - 1)
    if tf.executing_eagerly():
      if tf.size(ids) and not bool(valid):
        raise tf.errors.InvalidArgumentError(
            None, None, OUT_OF_RANGE_ERROR.format(
                low=int(low), high=int(high), **template))
      return ids
    # In a graph the range is only known when it runs: the message shows the
    # two numbers after the text, "... from [-1] to [12]."
    prefix, middle, suffix = OUT_OF_RANGE_ERROR.format(
        low="\0", high="\0", **template).split("\0")
    valid = tf.logical_or(tf.equal(tf.size(ids), 0), valid)
    check = tf.debugging.Assert(valid, [prefix.rstrip(), low, middle.strip(),
                                        high, suffix.lstrip(". ")],
                                summarize=1)
    with tf.control_dependencies([check]):
      return tf.identity(ids)


def _in_xla() -> bool:
  """Whether the graph being built will be compiled by XLA."""
  if tf.executing_eagerly():
    return False
  return graphs.in_xla_context(tf.compat.v1.get_default_graph())


def _check_positive(argument: str, value: Any) -> None:
  if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or (
      value < 1):
    raise ValueError(f"Embed: Invalid {argument} {value!r}: {argument} must "
                     "be a positive int, got "
                     f"{value!r}.")
