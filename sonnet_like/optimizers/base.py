"""`Optimizer`: the base class of optimizers, and the plumbing they share.

An optimizer is a `Module` with one public method, `apply(updates,
parameters)`, which changes `parameters` in place. Per-parameter state
("slots", e.g. Adam's `m` and `v`) is created on the first `apply`, in the
order of that call's `parameters`, and is tracked like any module variable, so
`tf.train.Checkpoint(optimizer=opt)` saves and restores it.

This file holds what every optimizer needs besides its update rule: argument
checks with errors that name the optimizer, slot creation, sparse updates
(`tf.IndexedSlices`), and `tf.distribute` support (see `Optimizer`).
"""

import abc
from typing import Any, Callable, Sequence

import numpy as np
import tensorflow as tf

from sonnet_like.core import autograph
from sonnet_like.core import base
from sonnet_like.core import checks
from sonnet_like.core import once
from sonnet_like.core import types
from sonnet_like.core import utils
from sonnet_like.core.tf_private import modules as tf_modules

PARAMETERS_CHANGED_ERROR = """\
{optimizer} created its state for {before}, but this call passes {after}.

An optimizer keeps one slot per parameter, matched by position to the
parameters of its first `apply`. Pass the same parameters in the same order on
every call, e.g.

    optimizer.apply(grads, model.trainable_variables)

or create one optimizer per set of parameters."""

class NotAVariableError(TypeError, AttributeError):
  """A parameter that is not a `tf.Variable`.

  Sonnet 2 calls the parameter's `assign_sub` (an `AttributeError` on a
  tensor); this error is that too.
  """


NOT_IN_STRATEGY_SCOPE_ERROR = (
    "{optimizer}: parameter {parameter!r} was not created under the scope of "
    "the current {strategy}, so its copies cannot be updated on each replica. "
    "Build the model (call it once) inside `with strategy.scope():`.")


class Optimizer(base.Module):
  """Base class for optimizers: `apply(updates, parameters)`.

  Subclasses implement `apply`. Updates may be dense tensors,
  `tf.IndexedSlices` (e.g. the gradient of `tf.gather` on an embedding), or
  None (that parameter is left alone).

  Under `tf.distribute` (e.g. `MirroredStrategy`), call `apply` in replica
  context (inside `strategy.run`) with updates that are already the same on
  every replica, typically all-reduced gradients. Each copy of a parameter is
  then updated once, on its own device. Updates that differ across replicas
  would make the copies drift apart: all-reduce them first.
  """

  # tf.Module's hook, named by TensorFlow (`core/tf_private/modules.py`).
  _TF_MODULE_IGNORED_PROPERTIES = tf_modules.ignored_properties(
      "_parameter_specs", of=base.Module)

  @abc.abstractmethod
  def apply(self, updates: Sequence[types.ParameterUpdate],
            parameters: Sequence[tf.Variable]) -> None:
    """Applies `updates` (often gradients) to `parameters` in place.

    Args:
      updates: One update per parameter: a tensor of the parameter's shape and
        dtype, a `tf.IndexedSlices`, or None to leave the parameter alone.
      parameters: The `tf.Variable`s to change.
    """

  # The helpers below are for subclasses.

  @autograph.as_written
  def _check_arguments(
      self, updates: Sequence[types.ParameterUpdate],
      parameters: Sequence[tf.Variable]) -> tuple[list[Any], list[tf.Variable]]:
    """Checks `apply`'s arguments; returns them as lists of tensors/variables.

    Raises:
      TypeError: if a parameter is not a variable.
      ValueError: on empty or mismatched lists, all-None updates, or an update
        whose dtype or shape does not match its parameter.
    """
    who = checks.describe(self)
    updates, parameters = list(updates), list(parameters)
    if len(updates) != len(parameters):
      raise ValueError(
          f"{who}: got {len(updates)} updates for {len(parameters)} "
          "parameters; `updates` and `parameters` must be the same length.")
    if not parameters:
      raise ValueError(f"{who}: `parameters` cannot be empty.")
    for i, parameter in enumerate(parameters):
      if not isinstance(parameter, tf.Variable):
        raise NotAVariableError(
            f"{who}: parameters[{i}] must be a tf.Variable, got "
            f"{utils.describe_value(parameter)}.")
    if all(update is None for update in updates):
      raise ValueError(
          f"{who}: No updates provided for any parameter (all "
          f"{len(updates)} updates are None). Are the parameters connected "
          "to the loss?")
    if tf.distribute.has_strategy():
      strategy = tf.distribute.get_strategy()
      for parameter in parameters:
        if not strategy.extended.variable_created_in_scope(parameter):
          raise ValueError(NOT_IN_STRATEGY_SCOPE_ERROR.format(
              optimizer=who, parameter=parameter.name,
              strategy=type(strategy).__name__))
    checked = [None if u is None else _check_update(who, i, u, p)
               for i, (u, p) in enumerate(zip(updates, parameters))]
    return checked, parameters

  @autograph.as_written
  def _check_same_parameters(self, parameters: Sequence[tf.Variable]) -> None:
    """Checks `parameters` against those the slots were created for."""
    specs = self.__dict__.get("_parameter_specs")
    if specs is None:
      return
    given = _specs(parameters)
    if given == specs:
      return
    if len(given) != len(specs):
      before = f"{len(specs)} parameters"
      after = f"{len(given)}"
      after += " parameter" if len(given) == 1 else " parameters"
    else:
      i = next(i for i, (a, b) in enumerate(zip(specs, given)) if a != b)
      before = f"parameters[{i}] = {_render(specs[i])}"
      after = _render(given[i])
    raise checks.InputShapeError(PARAMETERS_CHANGED_ERROR.format(
        optimizer=checks.describe(self), before=before, after=after))

  def _remember_parameters(self, parameters: Sequence[tf.Variable]) -> None:
    # Plain Python data, kept out of tf.Module tracking and checkpoints.
    object.__setattr__(self, "_parameter_specs", _specs(parameters))

  def _slots(self, scope: str,
             parameters: Sequence[tf.Variable]) -> list[tf.Variable]:
    """Zero-initialised, non-trainable copies of `parameters`.

    Named `<optimizer>/<scope>/<parameter name>` and placed with their
    parameter (on every replica under `tf.distribute`).
    """
    with tf.name_scope(scope):
      return [_zeros_like(p) for p in parameters]

  def _in_cross_replica_context(self, fn: Callable[..., None],
                                *args: Any) -> None:
    """Runs `fn(*args)` once, leaving replica context if inside one."""
    if (tf.distribute.has_strategy() and
        not tf.distribute.in_cross_replica_context()):
      tf.distribute.get_replica_context().merge_call(
          lambda _, *a: fn(*a), args=args)
    else:
      fn(*args)

  def _update(self, parameter: tf.Variable, fn: Callable[..., None],
              *args: Any) -> None:
    """Runs `fn(parameter, *args)` for each copy of `parameter`.

    Without a strategy there is one copy. Under one, `fn` runs on each copy's
    device and receives, for each distributed variable among `args` (slots),
    its copy on that device.
    """
    if not tf.distribute.has_strategy():
      fn(parameter, *args)
      return
    strategy = tf.distribute.get_strategy()

    def on_device(parameter_copy, *args):
      return fn(parameter_copy,
                *[_local_copy(strategy, a, parameter_copy) for a in args])

    strategy.extended.update(parameter, on_device, args=args, group=True)


class RuleOptimizer(Optimizer):
  """An optimizer that applies one update rule per parameter, with slots.

  Its `apply` checks the arguments (and, once slots exist, that the
  parameters are those they were made for), leaves replica context, builds
  the slots on the first call (`_initialize`), runs `_begin_step` and then
  `_apply_one(parameter, update, *slots)` on each copy of each parameter
  whose update is not None. Subclasses define `_apply_one` and, if they
  keep state, `_slot_lists` and `_begin_step`; scalars of the rule that all
  parameters share, `_scalars` (read with `_step_scalars`).
  """

  @autograph.as_written
  def apply(self, updates: Sequence[types.ParameterUpdate],
            parameters: Sequence[tf.Variable]) -> None:
    """Applies one step of the optimizer's rule to each pair.

    Args:
      updates: One update per parameter (a tensor, a `tf.IndexedSlices` or
        None to skip it), often gradients.
      parameters: The variables to change; the same list on every call.

    Raises:
      ValueError: if the lists are empty or of different lengths, all updates
        are None, an update's dtype or shape does not match its parameter, or
        the parameters differ from those of the first call.
      TypeError: if a parameter is not a `tf.Variable`.
    """
    updates, parameters = self._check_arguments(updates, parameters)
    self._check_same_parameters(parameters)
    first_of_dtype = {}  # One check a dtype, naming its first parameter.
    for parameter in parameters:
      first_of_dtype.setdefault(parameter.dtype.base_dtype, parameter)
    for parameter in first_of_dtype.values():  # Before any slot is made.
      self._check_held(parameter)
    self._in_cross_replica_context(self._apply_all, updates, parameters)

  def _held_by_dtype(self) -> list[tuple[str, Any, float, str]]:
    """`(name, value, bad, what follows)` of each hyperparameter that must
    not round to `bad` in a floating parameter's dtype (a decay to 1, an
    epsilon to 0), and what the updates would be if it did."""
    return []

  @autograph.as_written
  def _check_held(self, parameter: tf.Variable) -> None:
    """Refuses a hyperparameter (a Python number) that `parameter`'s
    floating dtype rounds to its bad value (`_held_by_dtype`): bfloat16
    holds nothing in (0.998, 1), float16 nothing below 3e-8."""
    dtype = parameter.dtype.base_dtype
    if not dtype.is_floating:  # Refused elsewhere, as in Sonnet.
      return
    for name, value, bad, result in self._held_by_dtype():
      if (isinstance(value, (int, float)) and value != bad and
          float(np.asarray(value, dtype.as_numpy_dtype)) == bad):
        raise ValueError(
            f"{type(self).__name__}: {name}={value} is {bad} in "
            f"{dtype.name}, the dtype of parameter {parameter.name}, so its "
            f"updates would be {result}. Keep the parameters in float32 "
            f"(snt.mixed_precision computes in {dtype.name} with float32 "
            f"variables) or pass a {name} that {dtype.name} holds.")

  def _apply_all(self, updates: Sequence[Any],
                 parameters: Sequence[tf.Variable]) -> None:
    self._initialize(parameters)
    # A subclass's rule may branch on tensors: AutoGraph rewrites it.
    autograph.as_user_code(self._begin_step)()
    apply_one = autograph.as_user_code(self._apply_one)
    # `_step_scalars` makes each dtype's scalars once for all parameters
    # (not an attribute tf.Module would track).
    object.__setattr__(self, "_scalars_made", {})
    try:
      for i, (update, parameter) in enumerate(zip(updates, parameters)):
        if update is not None:
          self._update(parameter, apply_one, update, *self._slots_of(i))
    finally:
      object.__setattr__(self, "_scalars_made", None)

  def _step_scalars(self, dtype: tf.DType) -> Any:
    """This step's `_scalars(dtype)`, made once per `apply` and dtype (the
    same numbers as making them for each parameter, and fewer ops a
    parameter in a compiled step: 5% of a TD3 step on Hopper with Adam)."""
    made = getattr(self, "_scalars_made", None)
    if made is None:
      return self._scalars(dtype)
    if dtype not in made:
      made[dtype] = self._scalars(dtype)
    return made[dtype]

  def _scalars(self, dtype: tf.DType) -> Any:
    """The rule's scalars for a step, in `dtype` (hyperparameters cast,
    terms of the step count); a subclass's `_apply_one` reads them through
    `_step_scalars`."""
    del dtype
    return None

  def _slot_lists(self) -> list[tuple[str, str]]:
    """`(attribute, scope)` of each list of slots, in `_apply_one`'s order.

    Each attribute is a list (empty until the first `apply`) that gets one
    slot per parameter, named `<optimizer>/<scope>/<parameter name>`.
    """
    return []

  @once.once
  def _initialize(self, parameters: Sequence[tf.Variable]) -> None:
    """Creates the slots and remembers the parameters they belong to."""
    if not self._slot_lists():
      return  # Without state, any parameters may come in each call.
    made = [(attribute, self._slots(scope, parameters))
            for attribute, scope in self._slot_lists()]
    self._remember_parameters(parameters)
    for attribute, slots in made:
      getattr(self, attribute).extend(slots)

  def _slots_of(self, i: int) -> list[tf.Variable]:
    return [getattr(self, attribute)[i]
            for attribute, _ in self._slot_lists()]

  @autograph.as_written
  def _begin_step(self) -> None:
    """Runs once per `apply`, before the updates (e.g. a step counter)."""
    return None  # A body AutoGraph can convert (a docstring alone warns).

  @abc.abstractmethod
  def _apply_one(self, parameter: tf.Variable, update: Any,
                 *slots: tf.Variable) -> None:
    """Applies the rule to one copy of `parameter`."""


def apply_rule(parameter: tf.Variable, update: Any,
               slots: Sequence[tf.Variable],
               rule: Callable[..., tuple[tf.Tensor, ...]]) -> None:
  """Updates `parameter` and its `slots` with `rule`, densely or sparsely.

  Args:
    parameter: The variable to change.
    update: A dense tensor or a `tf.IndexedSlices`.
    slots: The parameter's state variables.
    rule: `rule(update, *slot_values) -> (delta, *new_slot_values)`; the
      parameter becomes `parameter - delta`. For a `tf.IndexedSlices` update
      it sees only the touched rows (duplicate indices summed first).
  """
  if isinstance(update, tf.IndexedSlices):
    values, indices = _deduplicate(update)
    delta, *new_values = rule(values, *[s.sparse_read(indices) for s in slots])
    parameter.scatter_sub(tf.IndexedSlices(delta, indices))
    for slot, value in zip(slots, new_values):
      slot.scatter_update(tf.IndexedSlices(value, indices))
  else:
    delta, *new_values = rule(update, *slots)
    parameter.assign_sub(delta)
    for slot, value in zip(slots, new_values):
      slot.assign(value)


def check_hyperparameter(owner: str, argument: str, value: Any, *,
                         low: float = 0., high: float | None = None,
                         high_inclusive: bool = True) -> Any:
  """Checks a number or a scalar tensor/variable; returns it unchanged.

  Python numbers must lie in [low, high] (or [low, high) when
  `high_inclusive` is False). Tensors and variables (e.g. a learning rate
  that a schedule assigns) must be scalars; their values are not checked.
  """
  if isinstance(value, (tf.Tensor, tf.Variable)):
    if value.shape.rank != 0:
      raise ValueError(f"{owner}: {argument} must be a scalar, got "
                       f"{utils.describe_value(value)}.")
    return value
  if isinstance(value, bool) or not isinstance(value, (int, float)) and not (
      hasattr(value, "dtype") and getattr(value, "ndim", None) == 0):
    raise TypeError(f"{owner}: {argument} must be a number or a scalar "
                    f"tf.Variable, got {utils.describe_value(value)}.")
  too_high = high is not None and (value > high if high_inclusive
                                   else value >= high)
  if not value >= low or too_high:
    closing = "]" if high_inclusive else ")"
    limits = (f"in [{low:g}, {high:g}{closing}" if high is not None
              else f">= {low:g}")
    raise ValueError(f"{owner}: {argument} must be {limits}, got {value!r}.")
  return value


def check_bool(owner: str, argument: str, value: Any) -> bool:
  if not isinstance(value, bool):
    raise TypeError(f"{owner}: {argument} must be a bool, got {value!r}.")
  return value


@autograph.as_written
def _check_update(who: str, i: int, update: Any,
                  parameter: tf.Variable) -> Any:
  """Converts one update and checks its dtype and shape against `parameter`."""
  what = f"updates[{i}] (for parameter {parameter.name!r}"
  if isinstance(update, tf.distribute.DistributedValues):
    return update  # Per-replica values: checked on each replica.
  if isinstance(update, tf.IndexedSlices):
    dtype, shape = update.values.dtype, update.values.shape
    expected = tf.TensorShape([None]).concatenate(parameter.shape[1:])
    kind = "values of shape"
  else:
    update = tf.convert_to_tensor(update, dtype_hint=parameter.dtype)
    dtype, shape, expected = update.dtype, update.shape, parameter.shape
    kind = "shape"
  if dtype != parameter.dtype:
    raise ValueError(f"{who}: DType of update {what}, dtype "
                     f"{parameter.dtype.name}) is not equal to that of "
                     f"parameter: {dtype.name}; cast it to the parameter's "
                     "dtype.")
  if not shape.is_compatible_with(expected):
    raise checks.InputShapeError(
        f"{who}: {what}, shape {parameter.shape}) has {kind} {shape}, "
        f"expected {expected}.")
  return update


def _local_copy(strategy: tf.distribute.Strategy, value: Any,
                parameter_copy: tf.Variable) -> Any:
  """The copy of a distributed variable on `parameter_copy`'s device."""
  if not isinstance(value, tf.distribute.DistributedValues):
    return value
  for copy in strategy.experimental_local_results(value):
    if copy.device == parameter_copy.device:
      return copy
  raise ValueError(f"No copy of {value.name!r} on {parameter_copy.device}; "
                   "slots are created next to their parameter, so the "
                   "parameter must have moved.")


def _deduplicate(update: tf.IndexedSlices) -> tuple[tf.Tensor, tf.Tensor]:
  """Sums the rows of `update` that share an index; (values, unique indices)."""
  unique, positions = tf.unique(update.indices)
  values = tf.math.unsorted_segment_sum(update.values, positions,
                                        tf.shape(unique)[0])
  return values, unique


def _zeros_like(parameter: tf.Variable) -> tf.Variable:
  name = parameter.name.split(":")[0]
  shape, dtype = parameter.shape, parameter.dtype
  if tf.distribute.has_strategy():
    placement = tf.distribute.get_strategy().extended.colocate_vars_with(
        parameter)
  else:
    placement = tf.device(parameter.device)
  with placement:
    return tf.Variable(tf.zeros(shape, dtype), trainable=False, name=name)


@autograph.as_written
def _specs(parameters: Sequence[tf.Variable]) -> tuple:
  return tuple((p.name, p.shape, p.dtype.name)
               for p in parameters)


def _render(spec: tuple) -> str:
  name, shape, dtype = spec
  return f"{name!r} of shape {shape} and dtype {dtype}"
