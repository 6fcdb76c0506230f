"""The settings every normalization module shares, checked in one place.

`BaseBatchNorm` (and `CrossReplicaBatchNorm`), `LayerNorm`, `InstanceNorm`
and `GroupNorm` take the same `create_scale`, `create_offset`, `eps`,
`scale_init`, `offset_init` and `data_format`; `NormSettings` checks and
stores them with one wording per rule, and `documented` writes their
constructors' docstrings from one description of each.
"""

import inspect
import numbers
import textwrap
from typing import Any, Callable, TypeVar

import tensorflow as tf

from sonnet_like.core import base
from sonnet_like.core import checks
from sonnet_like.core import initializers
from sonnet_like.core import types
from sonnet_like.core import utils


F = TypeVar("F", bound=Callable[..., Any])

# The shared constructor arguments, described once.
ARGUMENTS = {
    "create_scale": "Whether to learn a per-channel scale.",
    "create_offset": "Whether to learn a per-channel offset.",
    "eps": "Added to the variance before the square root.",
    "scale_init": "Initializer of the scale (ones by default); only with "
                  "`create_scale=True`.",
    "offset_init": "Initializer of the offset (zeros by default); only with "
                   "`create_offset=True`.",
    "data_format": '"channels_last" (default), "channels_first", or a layout '
                   'such as "NHWC" or "NCHW".',
    "name": "Name of the module.",
}


def documented(**own: str) -> Callable[[F], F]:
  """Gives a norm's `__init__` its docstring: an `Args:` entry for each
  parameter, from `own` or else from `ARGUMENTS`, in signature order."""

  def decorate(init: F) -> F:
    lines = ["Constructs the module.", "", "Args:"]
    for name in inspect.signature(init).parameters:
      if name != "self":
        lines += textwrap.wrap(f"{name}: {own.get(name) or ARGUMENTS[name]}",
                               width=74, initial_indent="  ",
                               subsequent_indent="    ")
    init.__doc__ = "\n".join(lines)
    return init

  return decorate


class NormSettings(base.Module):
  """A module with the normalization settings (see `_set_norm_settings`)."""

  def _set_norm_settings(self, create_scale: bool, create_offset: bool,
                         eps: types.FloatLike,
                         scale_init: initializers.Initializer | None,
                         offset_init: initializers.Initializer | None,
                         data_format: str) -> None:
    """Checks the settings and stores them (initializers default to ones and
    zeros).

    Raises:
      ValueError: if `eps` is not a non-negative number (or a tensor), an
        initializer is given for a scale or offset that is not created, or
        `data_format` names no channel axis.
    """
    cls = type(self).__name__
    if not isinstance(eps, (tf.Tensor, tf.Variable)) and (
        isinstance(eps, bool) or not isinstance(eps, numbers.Real) or eps < 0):
      raise ValueError(f"{cls}: eps must be a non-negative number, got "
                       f"{eps!r}.")
    if not create_scale and scale_init is not None:
      raise ValueError(f"{cls}: Cannot set `scale_init` if "
                       f"`create_scale=False`, got scale_init={scale_init!r}.")
    if not create_offset and offset_init is not None:
      raise ValueError(f"{cls}: Cannot set `offset_init` if "
                       f"`create_offset=False`, got offset_init="
                       f"{offset_init!r}.")
    self._channel_index = utils.channel_index(data_format, cls)
    self._data_format = data_format
    self._create_scale = create_scale
    self._create_offset = create_offset
    self._eps = eps
    self._scale_init = scale_init or initializers.Ones()
    self._offset_init = offset_init or initializers.Zeros()

  def _check_no_learnt_override(self, scale: Any, offset: Any) -> None:
    """Refuses a call-time scale or offset where the module learns its own."""
    for kind, value, created in (("scale", scale, self._create_scale),
                                 ("offset", offset, self._create_offset)):
      if created and value is not None:
        raise ValueError(f"{checks.describe(self)} learns its own {kind}: "
                         f"Cannot pass `{kind}` at call time if "
                         f"`create_{kind}=True`.")
