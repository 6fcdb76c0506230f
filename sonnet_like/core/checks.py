"""Input checks that turn bad input into errors naming the module.

Every layer calls these from `__call__` so that a mistake is reported as
"Linear 'encoder/linear' was built for input size 4, got 5" rather than as a
kernel error from inside TensorFlow, or not at all.
"""

import numbers
import os
import re
import textwrap
from typing import Any, Sequence

import numpy as np
import tensorflow as tf

from sonnet_like.core import autograph
from sonnet_like.core import mixed_precision


class _KernelLikeError(tf.errors.InvalidArgumentError):
  """An `InvalidArgumentError` made from a message alone.

  `Error("text")` is the usual form. Autograph, re-raising an error from
  code it converted (a module called in a `tf.function`), builds a new one
  as `type(e)(node_def, op, message, payloads)`, which works too, so the type
  survives tracing (otherwise it would become a `StagingError`).
  """

  def __init__(self, node_def, op=None, message=None, *args):
    if message is None:  # `Error(message)`.
      node_def, message = None, node_def
    tf.errors.InvalidArgumentError.__init__(self, node_def, op, message, *args)
    self.args = (message,)


class InputShapeError(ValueError, _KernelLikeError):
  """An input whose rank or size does not fit the module.

  Sonnet 2 reports some of these mistakes itself (a `ValueError`) and leaves
  others to the TensorFlow kernel (`tf.errors.InvalidArgumentError`); this
  error is both, so an `except` clause written for either still catches it.
  """

  __init__ = _KernelLikeError.__init__  # ValueError's comes first otherwise.


class InputDTypeError(TypeError, ValueError, _KernelLikeError):
  """An input or requested dtype the module cannot use.

  A `TypeError`, and also each type Sonnet 2 or the kernel it reaches
  raises for the same mistake (`ValueError` from its initializers,
  `tf.errors.InvalidArgumentError` from an op).
  """

  __init__ = _KernelLikeError.__init__


class UnknownRankError(InputShapeError, TypeError):
  """An input of unknown rank where the module needs to know it.

  Sonnet 2 compares the unknown rank (None) with an int there, a
  `TypeError`; this error is that too.
  """


class StateLengthError(ValueError, IndexError):
  """A state tuple with a different number of entries than there are cores.

  Sonnet 2 indexes past the end of a short tuple (an `IndexError`); this
  error is that too.
  """


class NotBuiltError(ValueError, AttributeError):
  """A module used in a way that needs its first call to have happened.

  Sonnet 2 reads an attribute that the first call creates (an
  `AttributeError`); this error is that too.
  """


@autograph.as_written
def describe(module: Any) -> str:
  """`Linear 'encoder/linear'`: the class and full name of a module."""
  name = getattr(module, "module_name", None) or getattr(module, "name", "")
  return f"{type(module).__name__} {name!r}"


class ArgumentTypeError(TypeError, ValueError):
  """A constructor argument of the wrong form.

  Sonnet 2 raises a `TypeError` for some of these (e.g. a kernel shape of
  the wrong length); our other argument checks raise `ValueError`. This is
  both.
  """


@autograph.as_written
def check_floating(module: Any, inputs: tf.Tensor) -> None:
  dtype = tf.as_dtype(inputs.dtype)
  if not (dtype.is_floating or dtype.is_complex):
    raise InputDTypeError(
        f"{describe(module)} expects a floating-point input. Expected "
        f"floating point type, got {dtype.name}. Cast it first, e.g. "
        "tf.cast(x, tf.float32).")


@autograph.as_written
def check_built_dtype(module: Any, inputs: tf.Tensor,
                      built_dtype: tf.DType) -> None:
  """Inputs must have the dtype the module was built for.

  Inside a `snt.mixed_precision.modes` call, a floating-point module also
  accepts the compute dtype (its variables are read cast to it).
  """
  if inputs.dtype != built_dtype and not (
      tf.as_dtype(built_dtype).is_floating and
      inputs.dtype == mixed_precision.compute_dtype()):
    raise InputDTypeError(
        f"{describe(module)} was built for {built_dtype.name} inputs, got "
        f"{tf.as_dtype(inputs.dtype).name}.")


@autograph.as_written
def check_rank(module: Any, inputs: tf.Tensor, *, rank: int | None = None,
               min_rank: int | None = None, layout: str = "",
               built: bool = False, advice: str = "") -> None:
  """Checks the static rank; `layout` (e.g. "[N, H, W, C]") is shown.

  `built=True` says `rank` is the rank the module was built for (the
  message then says that it cannot change, as Sonnet's does). `advice`,
  if given, ends the message (how to fix the usual cause).
  """
  actual = inputs.shape.rank
  if actual is None:
    raise UnknownRankError(f"{describe(module)} needs an input of known "
                           "rank, got a tensor of unknown rank.")
  if rank is not None and actual != rank:
    expected, wanted = f"a rank-{rank} input {layout}".rstrip(), str(rank)
  elif min_rank is not None and actual < min_rank:
    expected = f"an input of rank >= {min_rank} {layout}".rstrip()
    wanted = f">= {min_rank}"
  else:
    return
  # "must have rank N" is Sonnet's wording for the same mistake.
  reason = (f" The rank of the inputs cannot change between calls (built "
            f"for rank {rank})." if built else "")
  raise InputShapeError(
      f"{describe(module)} expects {expected}, got shape {_shape(inputs)} "
      f"(rank {actual}; it must have rank {wanted}).{reason}"
      f"{' ' + advice if advice else ''}")


# Sonnet 2's wording for the same mistake, kept in ours (code matches it).
_UNKNOWN_DIM_PHRASES = {
    "input size": " Input size must be specified at module build time.",
    "number of input channels": " The number of input channels must be known.",
}


def known_dim(module: Any, inputs: tf.Tensor, axis: int, what: str) -> int:
  """The static size of `axis`, or an error saying how to make it known."""
  size = inputs.shape[axis]
  if size is None:
    phrase = _UNKNOWN_DIM_PHRASES.get(what, "")
    raise ValueError(
        f"{describe(module)} needs the {what} (axis {axis}) when it is built, "
        f"but the input has shape {_shape(inputs)}.{phrase} Call the module "
        "once on an example input before tracing, or give the tf.function an "
        f"input_signature in which axis {axis} is known.")
  return int(size)


@autograph.as_written
def check_dim(module: Any, inputs: tf.Tensor, axis: int, expected: int,
              what: str) -> tf.Tensor:
  """Checks `inputs.shape[axis] == expected`; returns `inputs`.

  A statically known size is checked now. An unknown one (inside a
  tf.function traced with a None dimension) is checked when the graph runs,
  with the same message.
  """
  size = inputs.shape[axis]
  if size == expected:
    return inputs
  message = (f"{describe(module)} was built for {what} {expected}, got "
             "{got}" + f" (input shape {_shape(inputs)}).")
  if size is not None:
    raise InputShapeError(message.format(got=size))
  check = tf.debugging.assert_equal(
      tf.shape(inputs)[axis], expected,
      message=message.format(got="a different size"))
  with tf.control_dependencies([check]):
    return tf.identity(inputs)


def check_is_training(module: Any, is_training: Any,
                      argument: str = "is_training") -> None:
  """`is_training` must be a bool (or an int, as 0/1) or a scalar boolean tensor.

  Sonnet 2 takes any Python value's truth; ints are taken the same way, but
  anything else (None, the truthy string "False") is refused. `argument`
  names the flag in the error, for other flags of the same kind (e.g.
  "test_local_stats").
  """
  if isinstance(is_training, (bool, np.bool_, numbers.Integral)):
    return
  dtype = getattr(is_training, "dtype", None)
  if (dtype is not None and tf.as_dtype(dtype) == tf.bool and
      tf.TensorShape(is_training.shape).rank == 0):
    return
  raise TypeError(f"{describe(module)}: {argument} must be a bool, an int or "
                  f"a scalar boolean tensor, got {is_training!r}.")


def check_choice(owner: str, argument: str, value: Any,
                 choices: Sequence[Any]) -> None:
  if value not in choices:
    raise ValueError(f"{owner}: {argument} must be one of {list(choices)}, "
                     f"got {value!r}.")


def _shape(inputs: tf.Tensor) -> tuple:
  return tuple(inputs.shape.as_list()) if inputs.shape.rank is not None else ()


_LIBRARY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in '
                    r'(?P<function>\S+)')


def error_text(error: BaseException) -> str:
  """`Type: message` of `error`, for a message of our own.

  For an error raised in traced code (AutoGraph's "in user code:" and its
  frames), the message under the frames and the innermost frame outside
  this library, as `(raised in fn, file line N)`, instead of the frames.
  """
  text = str(error).strip()
  if text.startswith("in user code:"):
    paragraphs = [part for part in text.split("\n\n") if part.strip()]
    frames = [_FRAME.match(line) for line in text.splitlines()]
    frames = [frame for frame in frames  # The user's, not the library's.
              if frame and not frame["file"].startswith(_LIBRARY)]
    text = textwrap.dedent(paragraphs[-1]).strip()
    # AutoGraph repeats the type at the start of the last paragraph.
    text = text.removeprefix(f"{type(error).__name__}: ")
    if frames:
      text += (f" (raised in {frames[-1]['function']}, "
               f"{frames[-1]['file']} line {frames[-1]['line']})")
  return f"{type(error).__name__}: {text}" if text else type(error).__name__
