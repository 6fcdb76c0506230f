"""Padding functions for convolutions, as `snt.pad.*`.

A padding function takes the *effective* kernel size of one spatial dimension
(`(kernel - 1) * rate + 1`, the kernel size when there is no dilation) and
returns `[before, after]`: how many elements to add on each side. Pass one (or
one per spatial dimension) as the `padding` of a convolution:

    >>> import sonnet_like as snt, tensorflow as tf
    >>> snt.pad.causal(3), snt.pad.same(4)
    ([2, 0], [1, 2])
    >>> conv = snt.Conv1D(2, kernel_shape=3, padding=snt.pad.causal, name="c")
    >>> conv(tf.ones([1, 5, 1])).shape
    TensorShape([1, 5, 2])
"""

from typing import Callable, Sequence

from sonnet_like.core import checks
from sonnet_like.core import utils

__all__ = ["causal", "create", "full", "reverse_causal", "same", "valid"]

Padding = Callable[[int], Sequence[int]]
Paddings = Padding | Sequence[Padding]


def valid(effective_kernel_size: int) -> list[int]:
  """No padding at all."""
  del effective_kernel_size  # Unused: every kernel gets none.
  return [0, 0]


def same(effective_kernel_size: int) -> list[int]:
  """Keeps the size at stride 1; the extra element (even kernels) goes after.

  Args:
    effective_kernel_size: The dilated kernel size of the dimension.

  Returns:
    `[before, after]`, summing to `effective_kernel_size - 1`.
  """
  return [(effective_kernel_size - 1) // 2, effective_kernel_size // 2]


def full(effective_kernel_size: int) -> list[int]:
  """Every output overlaps the input by at least one element.

  Args:
    effective_kernel_size: The dilated kernel size of the dimension.

  Returns:
    `[k - 1, k - 1]`: the output grows by `k - 1` at stride 1.
  """
  return [effective_kernel_size - 1, effective_kernel_size - 1]


def causal(effective_kernel_size: int) -> list[int]:
  """Pads before only, so output `t` sees inputs up to `t` and none later.

  Args:
    effective_kernel_size: The dilated kernel size of the dimension.

  Returns:
    `[k - 1, 0]`.
  """
  return [effective_kernel_size - 1, 0]


def reverse_causal(effective_kernel_size: int) -> list[int]:
  """Pads after only, so output `t` sees inputs from `t` on and none earlier.

  Args:
    effective_kernel_size: The dilated kernel size of the dimension.

  Returns:
    `[0, k - 1]`.
  """
  return [0, effective_kernel_size - 1]


def _per_dim(value, n: int, argument: str) -> tuple:
  """Scalar or length-1 sequence -> n copies; a length-n sequence as is."""
  if isinstance(value, (list, tuple)) and len(value) not in (1, n):
    # A TypeError too, as Sonnet 2's, with its words.
    raise checks.ArgumentTypeError(
        f"pad.create: {argument} must be a scalar or a sequence of {n} "
        f"values: {argument} must be a scalar or sequence of length 1 or "
        f"sequence of length {n}, got {value!r}.")
  if isinstance(value, (list, tuple)) and len(value) == 1:
    value = value[0]
  return utils.replicate(value, n, "pad.create", argument)


def create(padding: Paddings, kernel: int | Sequence[int],
           rate: int | Sequence[int], n: int,
           channel_index: int) -> list[list[int]]:
  """The `tf.pad` paddings of an `[N, ..., C]` or `[N, C, ...]` input.

      >>> import sonnet_like as snt
      >>> snt.pad.create(snt.pad.causal, kernel=3, rate=2, n=1,
      ...                channel_index=-1)
      [[0, 0], [4, 0], [0, 0]]
      >>> snt.pad.create([snt.pad.same, snt.pad.valid], kernel=(3, 3), rate=1,
      ...                n=2, channel_index=1)
      [[0, 0], [0, 0], [1, 1], [0, 0]]

  Args:
    padding: A padding function, or a sequence of `n` (or 1) of them, one per
      spatial dimension.
    kernel: Kernel size: an int, or a sequence of `n` (or 1) ints.
    rate: Dilation rate: an int, or a sequence of `n` (or 1) ints.
    n: Number of spatial dimensions.
    channel_index: 1 for channels-first inputs, -1 for channels-last.

  Returns:
    `n + 2` pairs `[before, after]`, with `[0, 0]` for batch and channels.

  Raises:
    ValueError: if `channel_index` is not 1 or -1, or a sequence has the
      wrong length (then a `TypeError` too, as in Sonnet 2).
  """
  if channel_index not in (1, -1):
    raise ValueError("pad.create: channel_index must be 1 or -1, got "
                     f"{channel_index!r}.")
  kernels = _per_dim(kernel, n, "kernel")
  rates = _per_dim(rate, n, "rate")
  functions = _per_dim(padding, n, "padding")
  spatial = [list(fn((k - 1) * r + 1))
             for fn, k, r in zip(functions, kernels, rates)]
  if channel_index == 1:
    return [[0, 0], [0, 0]] + spatial
  return [[0, 0]] + spatial + [[0, 0]]
