"""Transformer: a stack of pre-norm attention + MLP blocks with residuals."""

from typing import Any, Sequence

import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import base
from sonnet_like.core import checks
from sonnet_like.core import initializers
from sonnet_like.core import types
from sonnet_like.modules import axis_norm
from sonnet_like.modules import dropout
from sonnet_like.modules import remat as remat_lib
from sonnet_like.modules import rms_norm
from sonnet_like.modules.attention import cache as cache_lib
from sonnet_like.modules.attention import multi_head
from sonnet_like.nets import mlp as mlp_lib

NORMS = ("layer", "rms")

HEADS_ERROR = (
    "{module} has {num_heads} heads, which do not divide model_size "
    "{size}; pass key_size (and value_size if it differs), each head's "
    "size, e.g. key_size={example}, or choose a number of heads that "
    "divides {size}.")


def check_heads(owner: str, num_heads: int, model_size: int,
                key_size: int | None, value_size: int | None) -> None:
  """Checks the attention sizes `Transformer` and `TransformerLM` take."""
  arguments.check_positive_int(owner, "num_heads", num_heads)
  arguments.check_positive_int(owner, "model_size", model_size)
  arguments.check_positive_int(owner, "key_size", key_size, optional=True)
  arguments.check_positive_int(owner, "value_size", value_size,
                               optional=True)
  if key_size is None and model_size % num_heads:
    raise ValueError(HEADS_ERROR.format(
        module=owner, num_heads=num_heads, size=model_size,
        example=max(1, model_size // num_heads)))


def _norm(kind: str, name: str) -> base.Module:
  if kind == "rms":
    return rms_norm.RMSNorm(-1, name=name)
  return axis_norm.LayerNorm(-1, create_scale=True, create_offset=True,
                             name=name)


class TransformerBlock(base.Module):
  """`x + attention(norm(x))`, then `h + mlp(norm(h))` (pre-norm).

  Built by `Transformer`; see its arguments. `**attention` are those only
  the attention takes: key_size, value_size, num_kv_heads, causal, rotary
  and chunk_size.
  """

  def __init__(self, num_heads: int, model_size: int, mlp_size: int, *,
               norm: str = "layer",
               activation: types.Activation = tf.nn.gelu,
               dropout_rate: types.FloatLike | None = None,
               w_init: initializers.Initializer | None = None,
               name: str | None = None, **attention: Any):
    super().__init__(name=name)
    self._dropout_rate = dropout_rate
    self.attention_norm = _norm(norm, "attention_norm")
    self.attention = multi_head.MultiHeadAttention(
        num_heads, model_size=model_size, dropout_rate=dropout_rate,
        w_init=w_init, name="attention", **attention)
    self.mlp_norm = _norm(norm, "mlp_norm")
    self.mlp = mlp_lib.MLP([mlp_size, model_size], activation=activation,
                           w_init=w_init, name="mlp")

  def __call__(self, inputs: tf.Tensor, mask: tf.Tensor | None = None, *,
               is_training: types.BoolLike | None = None,
               cache: cache_lib.KVCache | None = None) -> Any:
    """One block; with `cache`, returns the outputs and the next cache."""
    kwargs = {} if is_training is None else {"is_training": is_training}
    attended = self.attention(self.attention_norm(inputs), mask=mask,
                              cache=cache, **kwargs)
    if cache is not None:
      attended, cache = attended
    hidden = inputs + self._drop(attended, is_training)
    outputs = hidden + self._drop(self.mlp(self.mlp_norm(hidden)),
                                  is_training)
    return outputs if cache is None else (outputs, cache)

  def _drop(self, x: tf.Tensor, is_training: Any) -> tf.Tensor:
    if not self._dropout_rate or is_training is None:
      return x
    return dropout.dropout(self, x, self._dropout_rate, is_training)


class Transformer(base.Module):
  """A stack of pre-norm transformer blocks and a final norm.

  Each block is `h = x + attention(norm(x))`, `out = h + mlp(norm(h))`
  (LayerNorm or RMSNorm; an MLP of width `mlp_size` with the given
  activation); maps `[batch, time, model_size]` to the same shape.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> net = snt.nets.Transformer(num_layers=2, num_heads=2, model_size=8,
      ...                            causal=True, norm="rms", name="net")
      >>> net(tf.ones([3, 5, 8])).shape
      TensorShape([3, 5, 8])
      >>> len(net.trainable_variables)    # per block: 2 norms, 4 + 2 Linears
      29

  For decoding, `initial_cache` gives one `KVCache` per block, and a call
  with `cache=` returns the outputs and the next caches.
  """

  def __init__(self, num_layers: int, num_heads: int, model_size: int,
               mlp_size: int | None = None, *,
               key_size: int | None = None, value_size: int | None = None,
               num_kv_heads: int | None = None, causal: bool = False,
               norm: str = "layer",
               activation: types.Activation = tf.nn.gelu,
               dropout_rate: types.FloatLike | None = None,
               rotary: bool = False, chunk_size: int | None = None,
               remat: bool = False,
               w_init: initializers.Initializer | None = None,
               name: str | None = None):
    """Constructs a Transformer.

    Args:
      num_layers: Number of blocks.
      num_heads: Attention heads per block; must divide `model_size`
        unless `key_size` is given.
      model_size: Size of the inputs, outputs and residual stream.
      mlp_size: Hidden width of each block's MLP; `4 * model_size` by
        default.
      key_size: Size of each head's queries and keys;
        `model_size // num_heads` by default.
      value_size: Size of each head's values; `key_size` by default.
      num_kv_heads: Key/value heads per block (grouped-query attention);
        `num_heads` by default.
      causal: Whether each position attends only to itself and earlier ones.
      norm: "layer" (LayerNorm) or "rms" (RMSNorm).
      activation: The MLPs' activation.
      dropout_rate: Dropout of the attention probabilities and of each
        residual branch in training; then every call needs `is_training`.
      rotary: Whether the attention rotates queries and keys by position
        (`RotaryEmbedding`).
      chunk_size: If given, attention is computed in chunks of this many
        keys (memory linear in the sequence length).
      remat: Whether each block's activations are recomputed in the
        backward pass (`snt.remat`) instead of kept.
      w_init: Initializer of every weight matrix.
      name: Name of the module.
    """
    super().__init__(name=name)
    owner = "Transformer"
    arguments.check_positive_int(owner, "num_layers", num_layers)
    check_heads(owner, num_heads, model_size, key_size, value_size)
    arguments.check_positive_int(owner, "mlp_size", mlp_size, optional=True)
    checks.check_choice(owner, "norm", norm, NORMS)
    if not callable(activation):
      raise TypeError(f"{owner}: activation must be callable, got "
                      f"{activation!r}.")
    if dropout_rate is not None:
      dropout.check_rate(owner, "dropout_rate", dropout_rate)
    self.model_size = model_size
    self.dropout_rate = dropout_rate
    self.blocks = [
        TransformerBlock(
            num_heads, model_size, mlp_size or 4 * model_size,
            key_size=key_size, value_size=value_size,
            num_kv_heads=num_kv_heads, causal=causal, norm=norm,
            activation=activation, dropout_rate=dropout_rate, rotary=rotary,
            chunk_size=chunk_size, w_init=w_init, name=f"block_{i}")
        for i in range(num_layers)]
    self._remat = [remat_lib.remat(b, name=f"remat_{i}")
                   for i, b in enumerate(self.blocks)] if remat else None
    self.final_norm = _norm(norm, "final_norm")

  def initial_cache(self, batch_size: Any, max_length: int,
                    dtype: tf.DType = tf.float32) -> list[cache_lib.KVCache]:
    """One empty `KVCache` of `max_length` positions per block."""
    return [b.attention.initial_cache(batch_size, max_length, dtype)
            for b in self.blocks]

  def __call__(self, inputs: tf.Tensor, mask: tf.Tensor | None = None, *,
               is_training: types.BoolLike | None = None,
               cache: Sequence[cache_lib.KVCache] | None = None) -> Any:
    """Applies the blocks to `inputs` of shape `[batch, time, model_size]`.

    Args:
      inputs: The input sequence.
      mask: A boolean attention mask (see `MultiHeadAttention`).
      is_training: Whether dropout is on; required with `dropout_rate`,
        and must be None without it.
      cache: The caches from `initial_cache` or the previous call.

    Returns:
      `[batch, time, model_size]`; with `cache`, a pair of that and the
      list of next caches.
    """
    inputs = tf.convert_to_tensor(inputs)
    checks.check_rank(self, inputs, rank=3,
                      layout="[batch, time, model_size]")
    inputs = checks.check_dim(self, inputs, -1, self.model_size,
                              "model size")
    if (self.dropout_rate is not None) != (is_training is not None):
      raise ValueError(
          f"{checks.describe(self)}: is_training is required with "
          "dropout_rate and must be None without it, got "
          f"dropout_rate={self.dropout_rate!r}, is_training={is_training!r}.")
    if cache is not None and len(cache) != len(self.blocks):
      raise ValueError(f"{checks.describe(self)} has {len(self.blocks)} "
                       f"blocks, so it needs as many caches, got {len(cache)}.")
    kwargs = {} if is_training is None else {"is_training": is_training}
    hidden, next_cache = inputs, []
    for i, block in enumerate(self.blocks):
      if cache is not None:
        hidden, layer_cache = block(hidden, mask, cache=cache[i], **kwargs)
        next_cache.append(layer_cache)
      elif self._remat is not None:
        hidden = self._remat[i](hidden, mask=mask, **kwargs)
      else:
        hidden = block(hidden, mask, **kwargs)
    outputs = self.final_norm(hidden)
    return outputs if cache is None else (outputs, next_cache)
