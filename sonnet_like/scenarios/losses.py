"""Losses and metrics as users bring them, as per-example functions.

A scenario's plain callable takes `(outputs, targets)`, the order of
`fn(prediction, label)` in the rest of sonnet_like. Keras takes
`(y_true, y_pred)`. Both come here and leave as one kind of function,
`per_example(outputs, targets) -> [batch]`:

- a Keras loss or metric *function* (`keras.losses.mean_squared_error`) or
  its string name (`"mse"`, `"sparse_categorical_crossentropy"`): called as
  `fn(targets, outputs)`;
- a Keras `Loss` object (`keras.losses.BinaryCrossentropy(from_logits=True)`):
  its unreduced `call(targets, outputs)`, so the scenario weighs and averages
  over the global batch itself;
- any other callable: `fn(outputs, targets)`.

Keras `Metric` objects keep their own state; `is_keras_metric` tells them
apart and the scenario feeds them `update_state(targets, outputs)`.

    >>> import keras, tensorflow as tf
    >>> outputs, targets = tf.constant([[2.0, -1.0]]), tf.constant([0])
    >>> keras_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    >>> plain = lambda logits, labels: (
    ...     tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
    >>> a = as_per_example("Supervised", "loss_fn", keras_loss)
    >>> b = as_per_example("Supervised", "loss_fn", plain)
    >>> bool(abs(a(outputs, targets) - b(outputs, targets))[0] < 1e-6)
    True
"""

import inspect
from typing import Any, Callable

import tensorflow as tf

from sonnet_like.core import autograph

PerExample = Callable[[Any, Any], tf.Tensor]

KERAS_MODULES = ("keras.", "tf_keras.", "tensorflow.python.keras.")

ARITY_ERROR = (
    "{owner}: {argument} must take two arguments, (outputs, targets) for a "
    "plain callable or (y_true, y_pred) for a Keras loss or metric, got "
    "{value!r} with signature {signature}. For a loss of the outputs alone, "
    "override compute_loss (see Supervised.compute_loss).")

BROADCAST_ERROR = (
    "{owner}: {argument} returned {got} values for a batch of outputs "
    "{outputs} and targets {targets}: the shapes broadcast against each other "
    "(e.g. outputs [B, 1] with targets [B] make [B, B]). Give outputs and "
    "targets the same shape (`tf.squeeze(outputs, -1)` or targets[:, None]).")


def _is_keras(value: Any, base_name: str) -> bool:
  return any(klass.__name__ == base_name and
             klass.__module__.startswith(KERAS_MODULES)
             for klass in type(value).__mro__)


def is_keras_metric(value: Any) -> bool:
  """A stateful Keras `Metric` object (keras 3 or tf-keras)."""
  return _is_keras(value, "Metric")


def _from_keras_module(fn: Any) -> bool:
  # `__module__` is None for a function made by exec() without __name__.
  return (getattr(fn, "__module__", None) or "").startswith(KERAS_MODULES)


def by_name(owner: str, argument: str, name: str, kind: str) -> Any:
  """The Keras loss or metric registered under `name`."""
  import keras  # pylint: disable=g-import-not-at-top  (only for names)
  getter = keras.losses.get if kind == "loss" else keras.metrics.get
  try:
    return getter(name)
  except (ValueError, TypeError) as error:
    raise ValueError(f"{owner}: {argument}={name!r} is not a Keras {kind} "
                     f"name ({error}).") from None


def _check_two_arguments(owner: str, argument: str, fn: Any) -> None:
  try:
    signature = inspect.signature(fn)
  except (TypeError, ValueError):
    return  # Builtins and C functions: nothing to check.
  try:
    signature.bind(None, None)
  except TypeError:
    raise TypeError(ARITY_ERROR.format(owner=owner, argument=argument,
                                       value=fn, signature=signature)) from None


def as_per_example(owner: str, argument: str, fn: Any,
                   kind: str = "loss") -> PerExample:
  """`fn` as `per_example(outputs, targets)`, whatever its convention.

  Args:
    owner: The scenario's name, for errors.
    argument: The argument `fn` came in ("loss_fn", "metrics['acc']").
    fn: A plain callable, a Keras loss/metric function, object or name.
    kind: "loss" or "metric" (which Keras registry names are looked up in).

  Returns:
    A function of `(outputs, targets)` returning values with a leading batch
    axis (or a scalar, for a plain callable that averages itself).
  """
  if isinstance(fn, str):
    fn = by_name(owner, argument, fn, kind)
  if _is_keras(fn, "Loss"):
    return lambda outputs, targets: fn.call(targets, outputs)
  if is_keras_metric(fn):
    raise TypeError(f"{owner}: {argument} is a Keras Metric object, which "
                    f"keeps state across batches; pass it in `metrics`, not "
                    f"as a loss.")
  if not callable(fn):
    raise TypeError(f"{owner}: {argument} must be callable or a Keras "
                    f"{kind} name, got {fn!r}.")
  _check_two_arguments(owner, argument, fn)
  if _from_keras_module(fn):
    return lambda outputs, targets: fn(targets, outputs)
  return fn


@autograph.as_written
def _size(nest: Any) -> int | None:
  total = 0
  for leaf in tf.nest.flatten(nest):
    count = getattr(leaf, "shape", tf.TensorShape(None)).num_elements()
    if count is None:
      return None
    total += count
  return total


def per_example(owner: str, argument: str, values: Any, outputs: Any,
                targets: Any) -> tf.Tensor:
  """A loss's values as a `[batch]` vector (scalars become `[1]`).

  Values with more elements than the outputs and the targets together are
  the result of broadcasting two mismatched shapes: an error, not a mean.
  """
  values = tf.convert_to_tensor(values)
  if values.shape.rank == 0:
    return values[tf.newaxis]
  count, limit = values.shape.num_elements(), max(_size(outputs) or 0,
                                                  _size(targets) or 0)
  if count is not None and limit and count > limit:
    describe = lambda n: [list(t.shape) for t in tf.nest.flatten(n)]
    raise ValueError(BROADCAST_ERROR.format(
        owner=owner, argument=argument, got=values.shape.as_list(),
        outputs=describe(outputs), targets=describe(targets)))
  if values.shape.rank != 1:
    values = tf.reshape(values, [tf.shape(values)[0], -1])
    values = tf.reduce_mean(values, axis=1)
  return values
