"""The loss tried once on the first batch, before anything is traced.

A mistake that reaches the loss (one-hot targets under a sparse loss, too
few output units for the labels, class ids under a regression loss, logits
given to a loss that takes probabilities, a scalar loss of outputs and
targets that broadcast to `[B, B]`) would otherwise be a Keras or TensorFlow error from deep inside
the traced step, or no error at all and a wrong result. `check_loss` calls
the loss eagerly on the first batch's outputs and targets and turns each
into one sentence naming the scenario, what was expected and the fix:

    >>> import keras, numpy as np, tensorflow as tf
    >>> outputs = tf.constant([[2.0, -1.0, 0.5], [0.1, 0.3, -2.0]])
    >>> targets = tf.constant([2, 0])
    >>> check_loss("Supervised", "sparse_categorical_crossentropy",
    ...            outputs, targets)
    Traceback (most recent call last):
    ...
    ValueError: Supervised: loss_fn 'sparse_categorical_crossentropy' takes probabilities (from_logits=False), but the model's outputs on the first batch are not (values down to -2, rows summing to -1.6 to 1.5): they look like logits. Pass keras.losses.SparseCategoricalCrossentropy(from_logits=True), or end the model with a softmax.
"""

import re
import warnings
from typing import Any

import numpy as np
import tensorflow as tf

from sonnet_like.scenarios import data as data_lib
from sonnet_like.scenarios import losses as losses_lib

ONE_HOT_ERROR = (
    "{owner}: {argument} is a sparse categorical cross-entropy, which takes "
    "one class id per example, but the targets look one-hot ({targets}, "
    "rows of 0s and 1s like the outputs {outputs}): use "
    "CategoricalCrossentropy, or argmax the targets.")

TOO_FEW_UNITS_ERROR = (
    "{owner}: the model outputs {units} value{s} per example but the targets "
    "go up to {top}; {argument} takes one output per class, so give the "
    "model's last layer at least {classes} units.")

NOT_PROBABILITIES_ERROR = (
    "{owner}: {argument} {name}takes probabilities (from_logits=False), but "
    "the model's outputs on the first batch are not ({why}): they look like "
    "logits. Pass keras.losses.{klass}(from_logits=True), or end the model "
    "with a {activation}.")

SCALAR_BROADCAST_WARNING = (
    "{owner}: {argument} returned one value for outputs {outputs} and "
    "targets {targets}, whose shapes broadcast to {broadcast}: a loss such "
    "as tf.reduce_mean((outputs - targets) ** 2) then compares every output "
    "with every target. Give outputs and targets the same shape "
    "(tf.squeeze(outputs, -1) or targets[:, None]), or return one loss per "
    "example.")

CLASS_IDS_FIX = (
    "the targets are class ids ({targets}) and the outputs hold {units} "
    "values per example ({outputs}). For classification use a sparse "
    "categorical loss (keras.losses.SparseCategoricalCrossentropy("
    "from_logits=True)), or give one-hot targets (tf.one_hot(targets, "
    "{units})).")

CLASS_IDS_ERROR = (
    "{owner}: {argument} {name}compares outputs and targets value by value, "
    "but " + CLASS_IDS_FIX)

FAILED_ERROR = (
    "{owner}: {argument} failed on the first batch of {data} (outputs "
    "{outputs}, targets {targets}): {error}")

CLASS_IDS_FAILED_ERROR = (
    "{owner}: {argument} failed on the first batch of {data} ({error}): " +
    CLASS_IDS_FIX)

# Keras losses whose inputs can be checked, by class and function name:
# (kind, the class to name in a fix).
_KNOWN = {
    "SparseCategoricalCrossentropy": ("sparse", "SparseCategoricalCrossentropy"),
    "sparse_categorical_crossentropy": ("sparse",
                                        "SparseCategoricalCrossentropy"),
    "CategoricalCrossentropy": ("categorical", "CategoricalCrossentropy"),
    "categorical_crossentropy": ("categorical", "CategoricalCrossentropy"),
    "BinaryCrossentropy": ("binary", "BinaryCrossentropy"),
    "binary_crossentropy": ("binary", "BinaryCrossentropy"),
}
# Keras' regression losses (value by value), by class and function name.
_KNOWN.update({name: ("regression", name) for name in (
    "MeanSquaredError", "MeanAbsoluteError", "Huber", "LogCosh",
    "MeanSquaredLogarithmicError", "MeanAbsolutePercentageError",
    "mean_squared_error", "mean_absolute_error", "huber", "log_cosh",
    "mean_squared_logarithmic_error", "mean_absolute_percentage_error")})


def first_batch(data: data_lib.Data, spec: Any, batch_size: int) -> Any:
  """The first batch of `data` as tensors shaped and typed like `spec`.

  Arrays give their first `batch_size` rows, in order (no tf.data pipeline
  is made for them); a dataset gives its first element, from an iterator of
  its own (the run's iterator does not move). None if the arrays' structure
  does not line up with `spec`.
  """
  if isinstance(data, tf.data.Dataset):
    for element in data.take(1):
      return element
    return None
  leaves, specs = tf.nest.flatten(data), tf.nest.flatten(spec)
  if len(leaves) != len(specs):
    return None
  return tf.nest.pack_sequence_as(spec, [
      tf.cast(np.asarray(leaf)[:batch_size], s.dtype)
      for leaf, s in zip(leaves, specs)])


def _known(loss_fn: Any) -> tuple[str, str, bool, str] | None:
  """`(kind, klass, from_logits, name)` of a Keras cross-entropy, or None."""
  if isinstance(loss_fn, str):
    try:
      loss_fn = losses_lib.by_name("", "", loss_fn, "loss")
    except ValueError:
      return None
  if callable(loss_fn) and not isinstance(loss_fn, type):
    for klass in type(loss_fn).__mro__:
      if klass.__name__ in _KNOWN and klass.__module__.startswith(
          losses_lib.KERAS_MODULES):
        kind, name = _KNOWN[klass.__name__]
        config = loss_fn.get_config() if hasattr(loss_fn, "get_config") else {}
        return kind, name, bool(config.get("from_logits", False)), ""
    name = getattr(loss_fn, "__name__", "")
    if name in _KNOWN and (getattr(loss_fn, "__module__", None) or
                           "").startswith(losses_lib.KERAS_MODULES):
      kind, klass = _KNOWN[name]
      return kind, klass, False, f"{name!r} "
  return None


def _spec(tensor: tf.Tensor) -> str:
  return f"{tensor.dtype.name}{tensor.shape.as_list()}"


def _number(value: float) -> str:
  return f"{value:.2g}"


def _check_sparse(owner: str, argument: str, outputs: tf.Tensor,
                  targets: tf.Tensor) -> None:
  units = outputs.shape[-1]
  if (targets.shape.rank == outputs.shape.rank and units and units > 1 and
      targets.shape[-1] == units):
    values = targets.numpy()
    if np.all((values == 0) | (values == 1)) and np.all(values.sum(-1) == 1):
      raise ValueError(ONE_HOT_ERROR.format(
          owner=owner, argument=argument, targets=_spec(targets),
          outputs=_spec(outputs)))
  _check_units(owner, argument, outputs, targets, always=True)


def _check_units(owner: str, argument: str, outputs: tf.Tensor,
                 targets: tf.Tensor, always: bool) -> None:
  """Class ids at or above the number of outputs: too few units.

  `always`: for a sparse loss; else only integer targets one rank below
  the outputs (a plain function's error is then explained by it).
  """
  units = outputs.shape[-1]
  if units is None or targets.shape.num_elements() == 0:
    return
  ids = targets.shape.rank == outputs.shape.rank - 1 or (
      targets.shape.rank == outputs.shape.rank and targets.shape[-1] == 1)
  if not ids or not (always or targets.dtype.is_integer):
    return
  top = int(np.max(targets.numpy()))
  if top >= units:
    raise ValueError(TOO_FEW_UNITS_ERROR.format(
        owner=owner, units=units, s="" if units == 1 else "s", top=top,
        argument=argument, classes=top + 1))


def _class_ids(outputs: tf.Tensor, targets: tf.Tensor) -> bool:
  """Integer targets one rank below outputs with several values each."""
  return (targets.dtype.is_integer and outputs.shape.rank is not None and
          targets.shape.rank == outputs.shape.rank - 1 and
          (outputs.shape[-1] or 0) > 1)


def _runs(per_example: Any, outputs: tf.Tensor, targets: tf.Tensor) -> bool:
  """Whether the loss runs on these targets (one-hot ones: the fix)."""
  try:
    per_example(outputs, targets)
  except (ValueError, TypeError, tf.errors.OpError):
    return False
  return True


def _first_line(error: BaseException) -> str:
  """The error's first line without an eager op's node prefix and suffix."""
  lines = str(error).strip().splitlines()
  line = re.sub(r"^\{\{function_node [^}]*\}\}\s*", "", lines[0] if lines
                else "")
  return re.sub(r"\s*name:\s*$", "", line)


def _check_probabilities(owner: str, argument: str, known: tuple,
                         outputs: tf.Tensor) -> None:
  kind, klass, _, name = known
  values = outputs.numpy().astype(np.float64)
  if values.size == 0:
    return
  reasons = []
  if values.min() < 0:
    reasons.append(f"values down to {_number(values.min())}")
  if kind == "binary":
    activation = "sigmoid"
    if values.max() > 1:
      reasons.append(f"values up to {_number(values.max())}")
  else:
    activation = "softmax"
    sums = values.sum(axis=-1)
    if np.any(np.abs(sums - 1) > 1e-2):
      reasons.append(f"rows summing to {_number(sums.min())} to "
                     f"{_number(sums.max())}")
  if reasons:
    raise ValueError(NOT_PROBABILITIES_ERROR.format(
        owner=owner, argument=argument, name=name, why=", ".join(reasons),
        klass=klass, activation=activation))


def _broadcasts_wider(outputs: tf.Tensor, targets: tf.Tensor) -> list | None:
  """The broadcast shape of two different shapes that is bigger than both."""
  if outputs.shape == targets.shape:
    return None
  try:
    shape = tf.broadcast_static_shape(outputs.shape, targets.shape)
  except ValueError:
    return None
  count = shape.num_elements()
  if count is None or count <= max(outputs.shape.num_elements() or 0,
                                   targets.shape.num_elements() or 0):
    return None
  return shape.as_list()


def _makes(per_example: Any, outputs: tf.Tensor, targets: tf.Tensor,
           shape: list) -> bool:
  """Whether the graph of `per_example` holds a value of `shape`."""
  graph = tf.function(per_example).get_concrete_function(
      tf.TensorSpec(outputs.shape, outputs.dtype),
      tf.TensorSpec(targets.shape, targets.dtype)).graph
  return any(value.shape.rank is not None and value.shape.as_list() == shape
             for op in graph.get_operations() for value in op.outputs)


def _warn_scalar_broadcast(owner: str, argument: str, per_example: Any,
                           outputs: tf.Tensor, targets: tf.Tensor) -> None:
  broadcast = _broadcasts_wider(outputs, targets)
  # A function that lines them up itself (squeezes) never makes that shape.
  if broadcast is None or not _makes(per_example, outputs, targets,
                                     broadcast):
    return
  warnings.warn(SCALAR_BROADCAST_WARNING.format(
      owner=owner, argument=argument, outputs=_spec(outputs),
      targets=_spec(targets), broadcast=broadcast), stacklevel=4)


def _describe(nest: Any) -> str:
  return data_lib.describe(tf.nest.map_structure(
      lambda t: tf.TensorSpec(t.shape, t.dtype), nest))


def check_loss(owner: str, loss_fn: Any, outputs: Any, targets: Any,
               argument: str = "loss_fn", data: str = "train_data") -> None:
  """Calls `loss_fn` once on a batch's outputs and targets, eagerly.

  Args:
    owner: The scenario's name, for messages.
    loss_fn: The loss as the user gave it (a function, Keras object or name).
    outputs: The model's outputs on the first batch (eager tensors).
    targets: The first batch's targets.
    argument: The loss's argument name.
    data: The data's argument name.

  Raises:
    ValueError: one sentence for a known mistake (one-hot targets under a
      sparse loss, too few output units, logits under from_logits=False);
      Keras and TensorFlow errors of the call, wrapped (TypeError stays a
      TypeError), with the original as the cause.

  Warns:
    A plain function returned a scalar for outputs and targets whose shapes
    broadcast to a bigger shape (`[B, 1]` and `[B]` make `[B, B]`) and a
    value of that shape is made inside it (the function traced alone).
  """
  single = isinstance(outputs, tf.Tensor) and isinstance(targets, tf.Tensor)
  known = _known(loss_fn)
  if single and known is not None:
    kind, _, from_logits, _ = known
    if kind == "sparse":
      _check_sparse(owner, argument, outputs, targets)
    if kind == "regression":  # Silent when the batch equals the classes.
      if _class_ids(outputs, targets):
        _check_units(owner, argument, outputs, targets, always=False)
        raise ValueError(CLASS_IDS_ERROR.format(
            owner=owner, argument=argument, name=known[3],
            targets=_spec(targets), units=outputs.shape[-1],
            outputs=_spec(outputs)))
    elif not from_logits and outputs.dtype.is_floating:
      _check_probabilities(owner, argument, known, outputs)
  per_example = losses_lib.as_per_example(owner, argument, loss_fn)
  try:
    value = per_example(outputs, targets)
    losses_lib.per_example(owner, argument, value, outputs, targets)
  except (ValueError, TypeError, tf.errors.OpError) as error:
    if str(error).startswith(f"{owner}: "):
      raise  # Already one of ours.
    text = f"{type(error).__name__}: {_first_line(error)}"
    if single:
      _check_units(owner, argument, outputs, targets, always=False)
      if _class_ids(outputs, targets) and _runs(per_example, outputs, (
          tf.one_hot(targets, outputs.shape[-1], dtype=outputs.dtype))):
        raise ValueError(CLASS_IDS_FAILED_ERROR.format(
            owner=owner, argument=argument, data=data, error=text,
            targets=_spec(targets), units=outputs.shape[-1],
            outputs=_spec(outputs))) from error
    kind = TypeError if isinstance(error, TypeError) else ValueError
    raise kind(FAILED_ERROR.format(
        owner=owner, argument=argument, data=data, outputs=_describe(outputs),
        targets=_describe(targets), error=text)) from error
  if single and known is None and tf.convert_to_tensor(value).shape.rank == 0:
    _warn_scalar_broadcast(owner, argument, per_example, outputs, targets)


EVAL_DATA_ERROR = (
    "{owner}: {argument} does not fit the model trained on {train}: its "
    "inputs are {got} where {train}'s are {expected} ({error}). Give "
    "{argument} the features of {train}.")


def check_eval_inputs(owner: str, call: Any, inputs_spec: Any,
                      train_spec: Any, argument: str = "eval_data",
                      train: str = "train_data") -> None:
  """Runs `call(zeros)` on a batch shaped like `inputs_spec`, before training.

  Args:
    owner: The scenario's name, for messages.
    call: Calls the (built) model on a batch of inputs.
    inputs_spec: The eval data's inputs (`tf.TensorSpec` leaves).
    train_spec: The training data's inputs, to name in the error.
    argument: The eval data's argument name.
    train: The training data's argument name.

  Raises:
    ValueError: (TypeError for a TypeError) the model refuses the eval
      data's inputs; the model's error is the cause.
  """
  try:
    call(data_lib.zeros_like_batch(inputs_spec, 2))
  except (ValueError, TypeError, tf.errors.OpError) as error:
    kind = TypeError if isinstance(error, TypeError) else ValueError
    text = str(error).strip().splitlines()
    raise kind(EVAL_DATA_ERROR.format(
        owner=owner, argument=argument, train=train,
        got=data_lib.describe(data_lib.any_batch(inputs_spec)),
        expected=data_lib.describe(data_lib.any_batch(train_spec)),
        error=f"{type(error).__name__}: "
        f"{text[0].rstrip('.') if text else ''}")) from error

