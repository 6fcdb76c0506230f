"""Calling a user's model: `is_training` where it takes it, and building it.

    >>> import tensorflow as tf
    >>> double = lambda x, is_training: 2 * x if is_training else x
    >>> float(call_model(double, tf.constant(3.0), training=True))
    6.0
"""

from typing import Any, Callable, Sequence

import tensorflow as tf

from sonnet_like.core import utils

call_model = utils.call_model  # Lives in core: export uses it too.
bound_model = utils.bound_model


def build_models(modules: Sequence[Any], call: Callable[[], Any]) -> Any:
  """Runs `call()` to create the variables of `modules`, then undoes it.

  Building in training mode (as the first step will run) works for every
  layer, where inference mode would make a `BatchNorm` refuse its unset
  moving statistics. Whatever the call changed is put back: variables of
  `modules` that existed to their values, new ones to the values they were
  created with, so building changes nothing.

  Returns:
    What `call()` returned.
  """
  saved = {}
  for module in modules:
    try:
      existing = tuple(getattr(module, "variables", ()))
    except ValueError:  # A sonnet_like module not built yet.
      existing = ()
    for variable in existing:
      saved.setdefault(variable.ref(), (variable, tf.identity(variable)))

  def record(next_creator, **kwargs):
    variable = next_creator(**kwargs)
    saved.setdefault(variable.ref(), (variable, tf.identity(variable)))
    return variable

  with tf.variable_creator_scope(record), tf.GradientTape() as tape:
    result = call()
  for variable in tape.watched_variables():  # Read, not created, by `call`.
    saved.setdefault(variable.ref(), (variable, tf.identity(variable)))
  for variable, value in saved.values():
    variable.assign(value)
  for module in modules:
    if isinstance(module, FunctionModel):
      module.tracked = [variable for variable, _ in saved.values()]
  return result


class FunctionModel(tf.Module):
  """A plain function used as a model, with the variables it uses tracked.

  A function has no `trainable_variables` and cannot be checkpointed; this
  wrapper records the variables the function creates or reads during
  `build_models`, so the scenario trains and saves them like a module's.
  """

  def __init__(self, fn: Callable[..., Any]):
    super().__init__(name=getattr(fn, "__name__", "function").strip("<>"))
    self.fn = fn
    self.tracked: list[tf.Variable] = []

  def __call__(self, inputs: Any, is_training: bool = False) -> Any:
    return call_model(self.fn, inputs, is_training)

  def __repr__(self) -> str:
    return f"FunctionModel({self.fn!r})"


def as_model(model: Any) -> Any:
  """`model` itself if it is a `tf.Module`, else a `FunctionModel`."""
  return model if isinstance(model, tf.Module) else FunctionModel(model)
