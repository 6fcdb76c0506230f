"""TransformerLM: a causal language model, and sampling it in one call."""

from typing import Any, Sequence

import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import autograph
from sonnet_like.core import base
from sonnet_like.core import checks
from sonnet_like.core import initializers
from sonnet_like.core import types
from sonnet_like.modules import embed as embed_lib
from sonnet_like.modules import linear
from sonnet_like.modules.attention import cache as cache_lib
from sonnet_like.nets import transformer

POSITIONS = ("rotary", "learned")

TOO_LONG_ERROR = (
    "{module} was asked for a prompt of {prompt} and {new} new tokens, "
    "{total} positions, but {why} {limit}; {fix}.")


def _gumbel(seed: tf.Tensor, shape: Any) -> tf.Tensor:
  """Standard Gumbel noise of `shape` from a stateless `seed`, the same
  bits in TensorFlow's kernels and in XLA (made from Philox integers)."""
  bits = tf.random.stateless_uniform(shape, seed, minval=None, maxval=None,
                                     dtype=tf.uint32, alg="philox")
  # The top 24 bits, centred in their interval: uniform in (0, 1).
  uniform = (tf.cast(tf.bitwise.right_shift(bits, 8), tf.float32) + 0.5
             ) * 2.0 ** -24
  return -tf.math.log(-tf.math.log(uniform))


class TransformerLM(base.Module):
  """Token ids -> next-token logits, through a causal `Transformer`.

  Positions are rotary (in the attention) or learned (an `Embed` of
  `max_length` rows added to the token embeddings).

      >>> import sonnet_like as snt, tensorflow as tf
      >>> lm = snt.nets.TransformerLM(vocab_size=11, num_layers=1,
      ...                             num_heads=2, model_size=8, name="lm")
      >>> lm(tf.constant([[1, 2, 3]])).shape        # [batch, time, vocab]
      TensorShape([1, 3, 11])
      >>> sample = tf.function(lambda p: lm.sample(p, 5, temperature=0.),
      ...                      jit_compile=True)
      >>> sample(tf.constant([[1, 2, 3]])).shape    # 5 tokens, one call
      TensorShape([1, 5])

  `sample` generates in one `tf.while_loop` from a fixed-size key/value
  cache, so it compiles with XLA; its tokens are those a loop recomputing
  the whole prefix at every step would choose.
  """

  def __init__(self, vocab_size: int, num_layers: int, num_heads: int,
               model_size: int, mlp_size: int | None = None, *,
               key_size: int | None = None, value_size: int | None = None,
               num_kv_heads: int | None = None, position: str = "rotary",
               max_length: int | None = None, norm: str = "layer",
               activation: types.Activation = tf.nn.gelu,
               dropout_rate: types.FloatLike | None = None,
               chunk_size: int | None = None, remat: bool = False,
               w_init: initializers.Initializer | None = None,
               name: str | None = None):
    """Constructs a TransformerLM.

    Args:
      vocab_size: Number of token ids.
      num_layers: Number of transformer blocks.
      num_heads: Attention heads per block; must divide `model_size`
        unless `key_size` is given.
      model_size: Width of the embeddings and the residual stream.
      mlp_size: Hidden width of the MLPs; `4 * model_size` by default.
      key_size: Size of each head's queries and keys;
        `model_size // num_heads` by default.
      value_size: Size of each head's values; `key_size` by default.
      num_kv_heads: Key/value heads (grouped-query attention).
      position: "rotary" or "learned".
      max_length: The longest sequence; needed for learned positions.
      norm: "layer" or "rms".
      activation: The MLPs' activation.
      dropout_rate: Dropout in training (see `Transformer`).
      chunk_size: Attention in chunks of this many keys (see `Transformer`).
      remat: Recompute each block's activations for the gradient.
      w_init: Initializer of the transformer's weight matrices.
      name: Name of the module.
    """
    super().__init__(name=name)
    owner = "TransformerLM"
    arguments.check_positive_int(owner, "vocab_size", vocab_size)
    transformer.check_heads(owner, num_heads, model_size, key_size,
                            value_size)
    checks.check_choice(owner, "position", position, POSITIONS)
    arguments.check_positive_int(owner, "max_length", max_length,
                                 optional=position != "learned")
    self.vocab_size = vocab_size
    self.model_size = model_size
    self.max_length = max_length
    self.position = position
    self.embed = embed_lib.Embed(vocab_size, model_size, name="embed")
    self.position_embed = embed_lib.Embed(
        max_length, model_size, name="position_embed") if (
            position == "learned") else None
    self.transformer = transformer.Transformer(
        num_layers, num_heads, model_size, mlp_size, key_size=key_size,
        value_size=value_size, num_kv_heads=num_kv_heads, causal=True, norm=norm,
        activation=activation, dropout_rate=dropout_rate,
        rotary=position == "rotary", chunk_size=chunk_size, remat=remat,
        w_init=w_init, name="transformer")
    self.logits = linear.Linear(vocab_size, name="logits")

  def initial_cache(self, batch_size: Any, max_length: int,
                    dtype: tf.DType = tf.float32) -> list[cache_lib.KVCache]:
    """One empty `KVCache` of `max_length` positions per block."""
    return self.transformer.initial_cache(batch_size, max_length, dtype)

  def __call__(self, tokens: tf.Tensor, *,
               is_training: types.BoolLike | None = None,
               cache: Sequence[cache_lib.KVCache] | None = None) -> Any:
    """Next-token logits for each position of `tokens` (`[batch, time]`).

    Args:
      tokens: Integer ids.
      is_training: Whether dropout is on (see `Transformer`).
      cache: Caches from `initial_cache` or the previous call: `tokens`
        then continue the sequence the caches hold.

    Returns:
      `[batch, time, vocab_size]` logits; with `cache`, a pair of them and
      the next caches.
    """
    tokens = tf.convert_to_tensor(tokens)
    checks.check_rank(self, tokens, rank=2, layout="[batch, time]")
    hidden = self.embed(tokens)
    if self.position_embed is not None:
      offset = 0 if cache is None else cache[0].length
      hidden += self.position_embed(offset + tf.range(tf.shape(tokens)[1]))
    kwargs = {} if is_training is None else {"is_training": is_training}
    outputs = self.transformer(hidden, cache=cache, **kwargs)
    if cache is not None:
      outputs, cache = outputs
      return self.logits(outputs), cache
    return self.logits(outputs)

  def sample(self, prompt: tf.Tensor, num_tokens: int, *,
             temperature: float = 1., top_k: int | None = None,
             seed: Any = None, max_length: int | None = None,
             use_cache: bool = True) -> tf.Tensor:
    """Generates `num_tokens` tokens after `prompt`, in one `tf.while_loop`.

    Call it inside a `tf.function` (with `jit_compile=True` if wanted) to
    generate everything in one call.

    Args:
      prompt: `[batch, prompt length]` ids (the length must be known).
      num_tokens: How many tokens to generate.
      temperature: Divides the logits; 0 takes the most likely token
        (greedy).
      top_k: If given, sample among the `top_k` most likely tokens only.
      seed: An int or a shape-[2] integer tensor; the tokens are a function
        of it, the same eagerly, in a `tf.function` and compiled with XLA
        (see below). Random when None.
      max_length: Positions in the cache; `prompt length + num_tokens` by
        default.
      use_cache: Whether to decode from a key/value cache (one position a
        step) or recompute the whole sequence at every step (slower; the
        reference the cache is checked against).

    Returns:
      `[batch, num_tokens]` int32 ids.

    Each step draws its token by the Gumbel-max trick: the argmax of the
    logits plus Gumbel noise made from 32-bit Philox integers of
    `stateless_fold_in(seed, step)`. TensorFlow's kernels and XLA give
    those integers bit for bit (not its float draws or its
    `stateless_categorical`, which XLA computes another way), so a seed
    gives the same tokens eagerly, in a `tf.function` and with
    `jit_compile=True`. The one exception is a near tie: XLA may round
    the logits differently in the last bits (fused kernels), and two
    tokens whose noisy logits are that close (about 1e-6 apart) may be
    chosen differently.
    """
    owner = checks.describe(self)
    arguments.check_positive_int(owner, "num_tokens", num_tokens)
    arguments.check_positive_int(owner, "top_k", top_k, optional=True)
    if temperature < 0:
      raise ValueError(f"{owner}: temperature must be >= 0, got "
                       f"{temperature!r}.")
    prompt = tf.cast(tf.convert_to_tensor(prompt), tf.int32)
    checks.check_rank(self, prompt, rank=2, layout="[batch, prompt length]")
    prompt_length = checks.known_dim(self, prompt, 1, "prompt length")
    total = prompt_length + num_tokens
    max_length = max_length or total
    self._check_fits(prompt_length, num_tokens, max_length)
    if seed is None:
      seed = tf.random.uniform([2], maxval=2**31 - 1, dtype=tf.int32)
    elif isinstance(seed, int):
      seed = tf.constant([seed, 0], tf.int32)
    batch = tf.shape(prompt)[0]

    @autograph.as_written
    def choose(logits, step):
      logits = logits[:, -1]
      if temperature == 0:
        return tf.argmax(logits, -1, output_type=tf.int32)
      logits = logits / tf.cast(temperature, logits.dtype)
      if top_k is not None:
        kth = tf.math.top_k(logits, top_k).values[:, -1:]
        logits = tf.where(logits < kth, tf.cast(-1e9, logits.dtype), logits)
      return tf.argmax(tf.cast(logits, tf.float32) + _gumbel(
          tf.random.experimental.stateless_fold_in(seed, step),
          logits.shape if logits.shape.is_fully_defined() else
          tf.shape(logits)), -1, output_type=tf.int32)

    @autograph.as_written
    def write(tokens, step, token):
      here = tf.equal(tf.range(num_tokens), step)[tf.newaxis]
      return tf.where(here, token[:, tf.newaxis], tokens)

    tokens = tf.zeros(tf.stack([batch, num_tokens]), tf.int32)
    if use_cache:
      logits, caches = self(prompt, cache=self.initial_cache(batch,
                                                             max_length))
      first = choose(logits, 0)

      def body(step, token, tokens, caches):
        tokens = write(tokens, step - 1, token)
        logits, caches = self(token[:, tf.newaxis], cache=caches)
        return step + 1, choose(logits, step), tokens, caches

      _, last, tokens, _ = tf.while_loop(
          lambda step, *_: step < num_tokens, body,
          (tf.constant(1), first, tokens, caches))
      return write(tokens, num_tokens - 1, last)

    # Recompute: the whole (fixed-size) sequence at every step; causal
    # attention makes the positions not yet written irrelevant.
    sequence = tf.concat([prompt, tokens], axis=1)

    def recompute(step, tokens, sequence):
      position = prompt_length + step
      logits = tf.gather(self(sequence), [position - 1], axis=1)
      token = choose(logits, step)
      here = tf.equal(tf.range(total), position)[tf.newaxis]
      sequence = tf.where(here, token[:, tf.newaxis], sequence)
      return step + 1, write(tokens, step, token), sequence

    _, tokens, _ = tf.while_loop(lambda step, *_: step < num_tokens,
                                 recompute, (tf.constant(0), tokens, sequence))
    return tokens

  def _check_fits(self, prompt: int, new: int, max_length: int) -> None:
    total = prompt + new
    message = dict(module=checks.describe(self), prompt=prompt, new=new,
                   total=total)
    if total > max_length:
      raise ValueError(TOO_LONG_ERROR.format(
          why="the key/value cache holds", limit=max_length,
          fix="pass a larger max_length or ask for fewer tokens", **message))
    if self.max_length is not None and total > self.max_length:
      raise ValueError(TOO_LONG_ERROR.format(
          why="its learned positions stop at", limit=self.max_length,
          fix="ask for fewer tokens or train with a larger max_length",
          **message))
