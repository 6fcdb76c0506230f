"""Functional optimizers: an `snt.Optimizer` as pure `init` and `apply`."""

import collections
import functools
from typing import Any, Callable

import tensorflow as tf

from sonnet_like.functional import tensor_variable
from sonnet_like.functional import transform as transform_lib
from sonnet_like.optimizers import base

TransformedOptimizer = collections.namedtuple("TransformedOptimizer",
                                              ("init", "apply"))


def optimizer(
    cls: type[base.Optimizer]) -> Callable[..., TransformedOptimizer]:
  """Turns an optimizer class into a factory of functional optimizers.

  `optimizer(cls)(*args, **kwargs)` builds `cls(*args, **kwargs)` (under
  `snt.functional.variables()`) and returns `TransformedOptimizer(init,
  apply)`: `init(params) -> opt_state` and `apply(opt_state, updates,
  params) -> (new_params, new_opt_state)`, where `params` and `updates` are
  dictionaries keyed by `variable.ref()` (as `transform(f).init` returns).

      >>> import sonnet_like as snt, tensorflow as tf
      >>> with snt.functional.variables():
      ...   net = snt.Linear(1, name="net")
      >>> loss = snt.functional.transform(
      ...     lambda x: tf.reduce_sum(net(x) ** 2))
      >>> x = tf.ones([1, 2])
      >>> params = loss.init(x)
      >>> opt = snt.functional.sgd(learning_rate=0.1)
      >>> opt_state = opt.init(params)
      >>> grads = snt.functional.grad(loss.apply)(params, x)
      >>> new_params, opt_state = opt.apply(opt_state, grads, params)
      >>> float(loss.apply(new_params, x)) < float(loss.apply(params, x))
      True

  Args:
    cls: An `snt.Optimizer` subclass.

  Returns:
    A function with `cls`'s constructor arguments.
  """

  @functools.wraps(cls.__init__)
  def factory(*args, **kwargs):
    with tensor_variable.variables():
      opt = cls(*args, **kwargs)
    return _functional(opt)

  return factory


def _sorted_refs(params) -> list[Any]:
  return sorted(params.keys())


def _functional(opt: base.Optimizer) -> TransformedOptimizer:
  """`init` and `apply` driving `opt` on TensorVariables."""

  def first_apply(params):
    variables = [ref.deref() for ref in _sorted_refs(params)]
    zeros = [tf.zeros_like(v) for v in variables]
    for variable, zero in zip(variables, zeros):
      variable.assign(zero)  # Parameters may have no value outside apply.
    opt.apply(zeros, variables)

  initialize = transform_lib.transform_with_state(first_apply)

  def init_fn(params):
    trainable, non_trainable = initialize.init(params)
    return {ref: value
            for ref, value in list(trainable.items()) +
            list(non_trainable.items()) if ref not in params}

  def step(opt_state, params, updates):
    refs = _sorted_refs(params)
    if isinstance(updates, dict):
      updates = [updates[ref] for ref in refs]
    else:
      updates = tf.nest.flatten(updates)
    opt.apply(updates, [ref.deref() for ref in refs])
    return ({ref: ref.deref().tensor_value for ref in params},
            {ref: ref.deref().tensor_value for ref in opt_state})

  stepper = transform_lib.transform_with_state(step)

  def apply_fn(opt_state, updates, params):
    trainable = dict(params)
    non_trainable = {}
    for ref, value in opt_state.items():
      (trainable if ref.deref().trainable else non_trainable)[ref] = value
    (new_params, new_opt_state), _ = stepper.apply(
        trainable, non_trainable, opt_state, params, updates)
    return new_params, new_opt_state

  return TransformedOptimizer(init=init_fn, apply=apply_fn)

