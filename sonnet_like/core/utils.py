"""Small helpers shared by modules."""

import functools
import inspect
from typing import Any, Callable, Sequence, TypeVar

import tensorflow as tf

from sonnet_like.core import autograph
from sonnet_like.core import generator

T = TypeVar("T")


def replicate(value: T | Sequence[T], num: int, owner: str,
              argument: str) -> tuple[T, ...]:
  """`3 -> (3, 3)`; a sequence of length `num` is returned as a tuple.

  Args:
    value: A scalar or a sequence of `num` values.
    num: How many values are wanted (e.g. the number of spatial dimensions).
    owner: Who asks, for the error message (e.g. "Conv2D").
    argument: The argument's name, for the error message.

  Raises:
    ValueError: if `value` is a sequence of another length.
  """
  if isinstance(value, (list, tuple)):
    if len(value) != num:
      raise ValueError(f"{owner}: {argument} must be a scalar or a sequence of "
                       f"{num} values, got {value!r}.")
    return tuple(value)
  return (value,) * num


def channel_index(data_format: str, owner: str = "") -> int:
  """Axis of the channels: -1 for channels-last formats, 1 for channels-first.

  Accepts "channels_last", "channels_first" and layout strings such as "NHWC",
  "NCHW", "NWC" or "NCDHW".
  """
  if data_format == "channels_last" or (
      data_format.startswith("N") and data_format.endswith("C")):
    return -1
  if data_format == "channels_first" or data_format.startswith("NC"):
    return 1
  raise ValueError(f"{owner + ': ' if owner else ''}Unable to extract channel "
                   f"information from {data_format!r}. data_format must be "
                   "'channels_last', 'channels_first' or a layout such as "
                   "'NHWC' or 'NCHW'.")


def describe_value(value: Any) -> str:
  """A short repr for error messages (tensors show shape and dtype)."""
  shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
  if shape is not None and dtype is not None:
    return f"{type(value).__name__}(shape={tuple(shape)}, dtype={dtype!r})"
  text = repr(value)
  return text if len(text) < 80 else text[:77] + "..."


def static_bool(flag: Any) -> bool | None:
  """The Python value of a bool or boolean tensor; None if unknown until run.

  A boolean `tf.function` argument is only known when the graph runs.
  """
  if isinstance(flag, bool):
    return flag
  value = tf.get_static_value(flag)
  return None if value is None else bool(value)



def seeded_generator(seed: Any) -> tf.random.Generator:
  """A Philox `tf.random.Generator` whose stream is set by `seed`.

  `tf.random.Generator.from_seed(s)` puts `s` in the low word of the
  counter, which every draw advances: seeds 0 and 1 give the same stream
  shifted by one block, so a scenario's generator and an environment seeded
  next to it would share their noise. Here the seed is the counter's high
  word: streams of different seeds start 2**64 blocks apart. It is a
  `core.generator.Generator`: it draws as TensorFlow's does, and also when
  its state is a population member's tensor.
  """
  return generator.Generator.from_key_counter(0, [0, seed], "philox")


def reseed(generator: tf.random.Generator, seed: Any) -> None:
  """Resets `generator` to the start of `seeded_generator(seed)`'s stream.

  `seed` may be a Python int or an integer tensor (inside `tf.function`).
  """
  generator.reset_from_key_counter(
      tf.constant(0, tf.int64),
      tf.stack([tf.constant(0, tf.int64), tf.cast(seed, tf.int64)]))


def _is_training_parameter(model: Any) -> inspect.Parameter | None:
  try:  # A function, a lambda, or an object with __call__.
    return inspect.signature(model).parameters.get("is_training")
  except (TypeError, ValueError):
    return None


@autograph.as_written
def call_model(model: Any, inputs: Any, training: bool) -> Any:
  """`model(inputs, is_training=training)` where the model takes it.

  An optional `is_training` (Sonnet's MLP: only with dropout) is passed
  unless the model refuses it with an error that names it.
  """
  return bound_model(model, inputs, training)[1]


@autograph.as_written
def bound_model(model: Any, inputs: Any,
                training: bool) -> tuple[Callable[[Any], Any], Any]:
  """`model` as `call_model` calls it, with `is_training` bound where it is
  passed, and the outputs of that call on `inputs`: a step that calls the
  model again finds the convention once (Keras reads a layer's `training`
  argument once too)."""
  parameter = _is_training_parameter(model)
  user = autograph.as_user_code  # The model may branch on tensors.
  if parameter is None:
    return model, user(model)(inputs)
  bound = functools.partial(model, is_training=training)
  if parameter.default is inspect.Parameter.empty:
    return bound, user(bound)(inputs)
  try:
    return bound, user(bound)(inputs)
  except ValueError as error:
    if "is_training" not in str(error):
      raise
    return model, user(model)(inputs)
