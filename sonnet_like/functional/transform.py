"""`transform`: a function that uses modules, as pure `init` and `apply`.

The Haiku-style API of Sonnet 2's `snt.functional`: parameters and state
leave the modules and travel as dictionaries keyed by `variable.ref()`.
"""

import collections
import itertools
from typing import Any, Callable

from sonnet_like.functional import tensor_variable

Transformed = collections.namedtuple("Transformed", ("init", "apply"))
TransformedWithState = collections.namedtuple("TransformedWithState",
                                              ("init", "apply"))

NEW_VARIABLES_ERROR = (
    "Apply function cannot create new variables: {names}. Variables are "
    "created by `init`; build every module inside "
    "`snt.functional.variables()` and call `init` first.")

STATEFUL_ERROR = (
    "Stateful networks must use `transform_with_state(f)`: {what} "
    "non-trainable variables {names}.")


def _names(variables) -> str:
  return ", ".join(repr(v.name) for v in variables)


def transform_with_state(f: Callable[..., Any]) -> TransformedWithState:
  """Like `transform`, for functions with non-trainable state too.

  `init(*args, **kwargs)` runs `f` once and returns `(params, state)`: the
  initial values of the trainable and of the non-trainable variables `f`
  uses, keyed by `variable.ref()`. `apply(params, state, *args, **kwargs)`
  runs `f` with those values and returns `(output, new_state)`; the
  variables themselves are left as they were.

      >>> import sonnet_like as snt
      >>> with snt.functional.variables():
      ...   ema = snt.ExponentialMovingAverage(decay=0.5, name="ema")
      >>> f = snt.functional.transform_with_state(ema)
      >>> params, state = f.init(3.0)
      >>> params, len(state)
      ({}, 3)
      >>> y, state = f.apply(params, state, 3.0)
      >>> y, state = f.apply(params, state, 6.0)
      >>> float(y)
      5.0

  Args:
    f: A function closing over modules built under
      `snt.functional.variables()`.

  Returns:
    `TransformedWithState(init, apply)`.
  """

  def init_fn(*args, **kwargs):
    used = {}  # ref -> variable, in order of first use.
    before = {}  # ref -> (initial value, value) at first use.

    def on_use(variable):
      ref = variable.ref()
      if ref not in used:
        used[ref] = variable
        before[ref] = (variable.initial_tensor_value, variable.tensor_value)

    with tensor_variable.variables(), \
        tensor_variable.new_variables() as created, \
        tensor_variable.listening(on_use):
      f(*args, **kwargs)  # Only the variables' values are kept.

    tensor_variables = [v for v in used.values()
                        if isinstance(v, tensor_variable.TensorVariable)]
    params = {v.ref(): v.initial_tensor_value for v in tensor_variables
              if v.trainable}
    state = {v.ref(): v.initial_tensor_value for v in tensor_variables
             if not v.trainable}
    created = {v.ref() for v in created}
    for v in tensor_variables:
      ref = v.ref()
      # Variables made by `f` forget their values (they travel in `params`
      # and `state`); variables that existed get theirs back.
      v.initial_tensor_value, v.tensor_value = (
          (None, None) if ref in created else before[ref])
    return params, state

  def apply_fn(params, state, *args, **kwargs):
    saved = {}
    try:
      for ref, value in itertools.chain(params.items(), state.items()):
        variable = ref.deref()
        saved.setdefault(ref, (variable.tensor_value,
                               variable.initial_tensor_value))
        variable.assign(value)
      with tensor_variable.new_variables() as created:
        out = f(*args, **kwargs)
      if created:
        raise ValueError(NEW_VARIABLES_ERROR.format(names=_names(created)))
      new_state = {ref: ref.deref().tensor_value for ref in state}
      return out, new_state
    finally:
      for ref, (value, initial) in saved.items():
        variable = ref.deref()
        variable.tensor_value = value
        variable.initial_tensor_value = initial

  return TransformedWithState(init=init_fn, apply=apply_fn)


def without_state(with_state: TransformedWithState) -> Transformed:
  """`init`/`apply` of a `transform_with_state` result that has no state.

  Args:
    with_state: The result of `transform_with_state(f)`.

  Returns:
    `Transformed(init, apply)`: `init` returns `params` only and `apply`
    takes `(params, *args)` and returns the output only. Both raise a
    `ValueError` if `f` turns out to have non-trainable state.
  """

  def init_fn(*args, **kwargs):
    params, state = with_state.init(*args, **kwargs)
    if state:
      raise ValueError(STATEFUL_ERROR.format(
          what="init found", names=_names(r.deref() for r in state)))
    return params

  def apply_fn(params, *args, **kwargs):
    out, state = with_state.apply(params, {}, *args, **kwargs)
    if state:
      raise ValueError(STATEFUL_ERROR.format(
          what="apply returned", names=_names(r.deref() for r in state)))
    return out

  return Transformed(init_fn, apply_fn)


def transform(f: Callable[..., Any]) -> Transformed:
  """Turns a function that uses modules into pure `init` and `apply`.

  Build the modules under `snt.functional.variables()`, then:

      >>> import sonnet_like as snt, tensorflow as tf
      >>> with snt.functional.variables():
      ...   a = snt.Linear(3, name="a")
      ...   b = snt.Linear(3, name="b")
      >>> f = snt.functional.transform(lambda x: a(x) + b(x))
      >>> x = tf.ones([1, 2])
      >>> params = f.init(x)  # {w.ref(): initial value, ...} for a and b.
      >>> sorted(r.deref().name for r in params)
      ['a/b:0', 'a/w:0', 'b/b:0', 'b/w:0']
      >>> f.apply(params, x).shape
      TensorShape([1, 3])
      >>> zeros = {r: tf.zeros_like(p) for r, p in params.items()}
      >>> f.apply(zeros, x).numpy()
      array([[0., 0., 0.]], dtype=float32)

  Functions with non-trainable state (e.g. BatchNorm's moving averages) need
  `transform_with_state`.

  Args:
    f: A function closing over modules built under
      `snt.functional.variables()`.

  Returns:
    `Transformed(init, apply)`: `init(*args, **kwargs) -> params` and
    `apply(params, *args, **kwargs) -> output`.
  """
  return without_state(transform_with_state(f))
