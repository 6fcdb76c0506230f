"""Vector quantizers of VQ-VAE (van den Oord et al., arXiv:1711.00937).

Both quantize every vector along the last axis of their input to the nearest
of `num_embeddings` codebook vectors (the columns of `embeddings`, shape
`[embedding_dim, num_embeddings]`) and pass gradients straight through.
`VectorQuantizer` learns the codebook with a loss; `VectorQuantizerEMA`
moves it to the running mean of the inputs assigned to each code.
"""

import numbers
from typing import Any

import numpy as np
import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import base
from sonnet_like.core import checks
from sonnet_like.core import initializers
from sonnet_like.core import types
from sonnet_like.core import utils
from sonnet_like.modules import moving_averages


def _python_number(value: Any) -> Any:
  """A 0-d NumPy array as a Python number; anything else as it is."""
  if isinstance(value, np.ndarray) and value.ndim == 0:
    return value.item()
  return value


def _check_non_negative(owner: str, argument: str, value: Any) -> None:
  """Numbers must be >= 0; tensors and variables are taken as they are."""
  if isinstance(value, (tf.Tensor, tf.Variable)):
    return
  value = _python_number(value)
  if (not isinstance(value, numbers.Real) or isinstance(value, bool) or
      not value >= 0):
    raise ValueError(f"{owner}: {argument} must be a non-negative number, "
                     f"got {value!r}.")


def _store_codebook_arguments(module: Any, embedding_dim: Any,
                              num_embeddings: Any, commitment_cost: Any,
                              dtype: Any) -> tf.DType:
  """Checks and stores the arguments both quantizers share; returns dtype."""
  owner = type(module).__name__
  module.embedding_dim = int(arguments.check_positive_int(
      owner, "embedding_dim", embedding_dim))
  module.num_embeddings = int(arguments.check_positive_int(
      owner, "num_embeddings", num_embeddings))
  _check_non_negative(owner, "commitment_cost", commitment_cost)
  module.commitment_cost = commitment_cost
  return arguments.check_floating_dtype(owner, dtype)


def _initial_embeddings(embedding_dim: int, num_embeddings: int,
                        dtype: tf.DType) -> tf.Tensor:
  initializer = initializers.VarianceScaling(distribution="uniform")
  return initializer([embedding_dim, num_embeddings], dtype)


def _check_inputs(module: Any, inputs: Any) -> tf.Tensor:
  inputs = tf.convert_to_tensor(inputs)
  checks.check_rank(module, inputs, min_rank=1, layout="[..., embedding_dim]")
  checks.check_built_dtype(module, inputs, module.embeddings.dtype)
  return checks.check_dim(module, inputs, -1, module.embedding_dim,
                          "embedding_dim")


def _nearest(module: Any, inputs: tf.Tensor) -> dict[str, tf.Tensor]:
  """Distances to every code, the nearest code and its one-hot encoding."""
  embeddings = module.embeddings
  flat_inputs = tf.reshape(inputs, [-1, module.embedding_dim])
  distances = (tf.reduce_sum(flat_inputs**2, 1, keepdims=True) -
               2 * tf.matmul(flat_inputs, embeddings) +
               tf.reduce_sum(embeddings**2, 0, keepdims=True))
  flat_indices = tf.argmax(-distances, 1)
  encodings = tf.one_hot(flat_indices, module.num_embeddings,
                         dtype=distances.dtype)
  encoding_indices = tf.reshape(flat_indices, tf.shape(inputs)[:-1])
  return {"flat_inputs": flat_inputs, "distances": distances,
          "encodings": encodings, "encoding_indices": encoding_indices,
          "quantized": module.quantize(encoding_indices)}


def _outputs(inputs: tf.Tensor, nearest: dict[str, tf.Tensor],
             loss: tf.Tensor) -> dict[str, tf.Tensor]:
  """The output dict; `quantize` passes gradients straight to `inputs`."""
  quantized = nearest["quantized"]
  encodings = nearest["encodings"]
  avg_probs = tf.reduce_mean(encodings, 0)
  perplexity = tf.exp(-tf.reduce_sum(avg_probs *
                                     tf.math.log(avg_probs + 1e-10)))
  return {
      "quantize": inputs + tf.stop_gradient(quantized - inputs),
      "loss": loss,
      "perplexity": perplexity,
      "encodings": encodings,
      "encoding_indices": nearest["encoding_indices"],
      "distances": nearest["distances"],
  }


def _commitment_loss(inputs: tf.Tensor, quantized: tf.Tensor) -> tf.Tensor:
  """Pulls the inputs (the encoder) towards their codes."""
  return tf.reduce_mean((tf.stop_gradient(quantized) - inputs)**2)


class VectorQuantizer(base.Module):
  """VQ-VAE quantizer whose codebook is learnt through its loss.

  Every vector along the last axis (all leading axes are flattened into one
  batch) is replaced by its nearest codebook vector. The returned `loss`,
  `||sg(x) - e||^2 + commitment_cost * ||x - sg(e)||^2` (means over all
  elements, `sg` = stop gradient), moves the codes towards the inputs and
  the inputs towards their codes; `quantize` passes gradients straight
  through to the inputs. The codebook is created with the module.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> vq = snt.nets.VectorQuantizer(embedding_dim=4, num_embeddings=8,
      ...                               commitment_cost=0.25, name="doc_vq")
      >>> out = vq(tf.ones([2, 3, 4]), is_training=True)
      >>> sorted(out)  # doctest: +NORMALIZE_WHITESPACE
      ['distances', 'encoding_indices', 'encodings', 'loss', 'perplexity',
       'quantize']
      >>> out["quantize"].shape, out["encoding_indices"].shape
      (TensorShape([2, 3, 4]), TensorShape([2, 3]))
      >>> vq.embeddings.name
      'doc_vq/embeddings:0'

  Attributes:
    embedding_dim: Size of the vectors quantized (the input's last axis).
    num_embeddings: Number of codebook vectors.
    commitment_cost: Weight of the commitment loss (beta in the paper).
    embeddings: The trainable codebook, `[embedding_dim, num_embeddings]`.
  """

  def __init__(self, embedding_dim: int, num_embeddings: int,
               commitment_cost: types.FloatLike,
               dtype: tf.DType = tf.float32,
               name: str = "vector_quantizer"):
    """Constructs the quantizer and its codebook.

    Args:
      embedding_dim: Size of the vectors quantized.
      num_embeddings: Number of codebook vectors.
      commitment_cost: Weight of the commitment loss (beta in the paper).
      dtype: Floating-point dtype of the codebook (and of the inputs).
      name: Name of the module.
    """
    super().__init__(name=name)
    dtype = _store_codebook_arguments(self, embedding_dim, num_embeddings,
                                      commitment_cost, dtype)
    self.embeddings = tf.Variable(
        _initial_embeddings(self.embedding_dim, self.num_embeddings, dtype),
        name="embeddings")

  def __call__(self, inputs: tf.Tensor,
               is_training: types.BoolLike) -> dict[str, tf.Tensor]:
    """Quantizes `inputs`.

    Args:
      inputs: A tensor `[..., embedding_dim]` of the codebook's dtype.
      is_training: Unused (the codebook changes only through the loss); as
        in Sonnet it must be passed.

    Returns:
      A dict with `quantize` (shaped like `inputs`), `loss` and `perplexity`
      (scalars), `encodings` (one-hot, `[n, num_embeddings]` for the `n`
      flattened vectors), `encoding_indices` (`inputs.shape[:-1]`, int64) and
      `distances` (squared, `[n, num_embeddings]`).
    """
    checks.check_is_training(self, is_training)
    inputs = _check_inputs(self, inputs)
    nearest = _nearest(self, inputs)
    quantized = nearest["quantized"]
    codebook_loss = tf.reduce_mean((quantized - tf.stop_gradient(inputs))**2)
    loss = codebook_loss + self.commitment_cost * _commitment_loss(inputs,
                                                                  quantized)
    return _outputs(inputs, nearest, loss)

  def quantize(self, encoding_indices: tf.Tensor) -> tf.Tensor:
    """The codebook vectors of `encoding_indices`: shape `indices + [dim]`."""
    return tf.nn.embedding_lookup(tf.transpose(self.embeddings, [1, 0]),
                                  encoding_indices)


class VectorQuantizerEMA(base.Module):
  """VQ-VAE quantizer whose codebook follows moving averages of its inputs.

  Quantizes like `VectorQuantizer`, but the codebook is not trained by the
  optimizer (`embeddings` is not trainable): every training call moves
  `ema_cluster_size` (how many inputs each code got) and `ema_dw` (their
  sum) and sets each code to the smoothed ratio

      n = sum(cluster_size)
      size_k = (cluster_size_k + epsilon) / (n + num_embeddings * epsilon) * n
      embedding_k = dw_k / size_k

  The codes used for the outputs are those from before the update; `loss`
  is only the commitment loss. Calls with `is_training=False` change
  nothing.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> vq = snt.nets.VectorQuantizerEMA(embedding_dim=2, num_embeddings=1,
      ...                                  commitment_cost=0.25, decay=0.5,
      ...                                  name="doc_vq_ema")
      >>> x = tf.constant([[1., 2.], [3., 4.]])
      >>> _ = vq(x, is_training=True)  # Its only code moves to the mean.
      >>> vq.embeddings.numpy().T
      array([[2., 3.]], dtype=float32)

  Attributes:
    embedding_dim: Size of the vectors quantized (the input's last axis).
    num_embeddings: Number of codebook vectors.
    commitment_cost: Weight of the commitment loss.
    decay: Decay of the moving averages.
    epsilon: Smoothing of the cluster sizes (keeps empty codes finite).
    embeddings: The codebook, `[embedding_dim, num_embeddings]`.
    ema_cluster_size: Moving average of the number of inputs per code.
    ema_dw: Moving average of the sum of the inputs per code.
  """

  def __init__(self, embedding_dim: int, num_embeddings: int,
               commitment_cost: types.FloatLike, decay: types.FloatLike,
               epsilon: types.FloatLike = 1e-5, dtype: tf.DType = tf.float32,
               name: str = "vector_quantizer_ema"):
    """Constructs the quantizer, its codebook and moving averages.

    Args:
      embedding_dim: Size of the vectors quantized.
      num_embeddings: Number of codebook vectors.
      commitment_cost: Weight of the commitment loss (beta in the paper).
      decay: Decay of the moving averages, in (0, 1).
      epsilon: Smoothing of the cluster sizes, >= 0.
      dtype: Floating-point dtype of the codebook (and of the inputs).
      name: Name of the module.
    """
    super().__init__(name=name)
    owner = type(self).__name__
    dtype = _store_codebook_arguments(self, embedding_dim, num_embeddings,
                                      commitment_cost, dtype)
    _check_non_negative(owner, "epsilon", epsilon)
    ema_decay = _python_number(decay)
    moving_averages.check_decay(owner, "decay", ema_decay,
                                low_inclusive=False)
    self.decay = decay
    self.epsilon = epsilon
    if not isinstance(ema_decay, (tf.Tensor, tf.Variable)):
      # A NumPy number of the codebook's dtype: the averages' debiasing
      # (`decay ** step`) then runs in that dtype, in graphs too.
      ema_decay = dtype.as_numpy_dtype(ema_decay)
    self.embeddings = tf.Variable(
        _initial_embeddings(self.embedding_dim, self.num_embeddings, dtype),
        trainable=False, name="embeddings")
    ema = moving_averages.ExponentialMovingAverage
    self.ema_cluster_size = ema(ema_decay, name="ema_cluster_size")
    self.ema_cluster_size.initialize(tf.zeros([self.num_embeddings], dtype))
    self.ema_dw = ema(ema_decay, name="ema_dw")
    self.ema_dw.initialize(tf.zeros_like(self.embeddings))

  def __call__(self, inputs: tf.Tensor,
               is_training: types.BoolLike) -> dict[str, tf.Tensor]:
    """Quantizes `inputs`; in training, then moves the codebook.

    Args:
      inputs: A tensor `[..., embedding_dim]` of the codebook's dtype.
      is_training: Whether to update the moving averages and the codebook
        (a bool or a scalar boolean tensor).

    Returns:
      The dict of `VectorQuantizer.__call__`; `loss` is
      `commitment_cost * ||x - sg(e)||^2`.
    """
    checks.check_is_training(self, is_training)
    inputs = _check_inputs(self, inputs)
    nearest = _nearest(self, inputs)
    loss = self.commitment_cost * _commitment_loss(inputs,
                                                   nearest["quantized"])
    outputs = _outputs(inputs, nearest, loss)
    training = utils.static_bool(is_training)
    if training is None:  # Known only when the graph runs.

      def update():
        self._update(nearest["flat_inputs"], nearest["encodings"])
        return tf.constant(True)

      updated = tf.cond(is_training, update, lambda: tf.constant(False))
      with tf.control_dependencies([updated]):
        outputs = {k: tf.identity(v) for k, v in outputs.items()}
    elif training:
      self._update(nearest["flat_inputs"], nearest["encodings"])
    return outputs

  def _update(self, flat_inputs: tf.Tensor, encodings: tf.Tensor) -> None:
    cluster_size = self.ema_cluster_size(tf.reduce_sum(encodings, axis=0))
    dw = self.ema_dw(tf.matmul(flat_inputs, encodings, transpose_a=True))
    n = tf.reduce_sum(cluster_size)
    cluster_size = ((cluster_size + self.epsilon) /
                    (n + self.num_embeddings * self.epsilon) * n)
    self.embeddings.assign(dw / tf.reshape(cluster_size, [1, -1]))

  def quantize(self, encoding_indices: tf.Tensor) -> tf.Tensor:
    """The codebook vectors of `encoding_indices`: shape `indices + [dim]`."""
    return tf.nn.embedding_lookup(tf.transpose(self.embeddings, [1, 0]),
                                  encoding_indices)
