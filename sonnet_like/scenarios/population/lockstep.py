"""A loop every member runs for the same number of iterations, vectorised
as one loop.

`tf.vectorized_map` converts a `tf.while_loop` in a member's step into a
loop that lets each member stop at its own iteration: every iteration it
runs the body inside a `tf.cond` and carries an accumulator per loop
variable for the members that are done (a list of lists for a
`TensorArray`, which XLA cannot compile), and the member count becomes
unknown inside (so a draw made once per member, `core/generator.py`,
falls back to a loop of its own). `mark_graph` gives every loop of a
member's step (`step.py`) a conversion that checks, when the step is
vectorised, whether the loop's condition is the same for every member (a
rollout's `t < length`, a fixed number of updates, a `tf.scan`): then the
loop is one `tf.while_loop` whose body is the body vectorised for all
members, its shapes known. A condition that differs per member (PPO's
`target_kl`, Acrobot's angle wrapping) runs the loop while any member's
holds, each member keeping the values its own last iteration left.
The same walk gives the ops pfor cannot convert well (`L2Loss` of
clipping or a weight penalty, a model's tensor `if`) `core.per_iteration`'s.

pfor's internals are reached through the wall (`core/tf_private/pfor.py`);
the `WrappedTensor`s it returns are read here by their fields `t` and
`is_stacked`.
"""

from typing import Any, Sequence

import tensorflow as tf

from sonnet_like.core import per_iteration
from sonnet_like.core.tf_private import graphs
from sonnet_like.core.tf_private import pfor
from sonnet_like.envs import gym_adapter
from sonnet_like.scenarios.population import ordered_sums
from sonnet_like.scenarios.population import python_envs

_WHILE_OPS = ("While", "StatelessWhile")
_PYTHON_OPS = ("PyFunc", "PyFuncStateless", "EagerPyFunc")

GYM_ERROR = (
    "{owner}: population= trains its members in one compiled call, but the "
    "step steps a gymnasium environment in Python (a GymEnvironment) that "
    "is not one of the members' own (not in trackables()), so all members "
    "would share it: none would be its solo run. Track it, train on an "
    "in-graph environment (env=snt.envs.make(id, in_graph=True): "
    "CartPole-v1, Pendulum-v1, Acrobot-v1, MountainCar-v0 and "
    "MountainCarContinuous-v0 have one), or train the members one at a "
    "time.")


def unconvertible(op: tf.Operation) -> bool:
  """Whether `op` should be made per member (`per_iteration.convert`): an
  op that pfor has no conversion for (it would run it in a `While` over the
  members) and that changes no state (its copies may run in any order), or a branch
  (`If`) passing variants (a model's tensor `if`: the intermediates its
  gradient reads, which pfor's conversion loses; an assert or print in it
  runs once per member). Only an op whose outputs have known shapes (they
  stack)."""
  if (pfor.has_converter(op) or not (op.inputs and op.outputs)
      or not all(x.shape.is_fully_defined() for x in op.outputs)):
    return False
  variants = any(x.dtype == tf.variant
                 for x in list(op.outputs) + list(op.inputs))
  if op.type in ("If", "StatelessIf"):
    return variants
  return (not pfor.has_conversion(op.type)
          and not op.op_def.is_stateful and not variants)


def _gym_kind(op: tf.Operation) -> str | None:
  """Which `GymEnvironment` op `op` is ("gym_step", ...), or None."""
  if op.type not in _PYTHON_OPS:
    return None
  name = op.name.rsplit("/", 1)[-1]
  return next((kind for kind in gym_adapter.OP_NAMES
               if name == kind or name.startswith(kind + "_")), None)


def mark_graph(graph: Any, owner: str, gym_envs: Sequence[Any] | None
               ) -> None:
  """Gives every loop in `graph` and in the functions its ops call (loop
  bodies, branches) the lockstep conversion, the ops `unconvertible`
  finds `per_iteration.convert`, and a gymnasium environment's ops the
  conversion that steps the members' own (`gym_envs`, in member order;
  `python_envs.py`). Without them such an op is refused (`owner`, the
  scenario's name, for the error)."""
  seen = set()

  def walk(g):
    for op in g.get_operations():
      kind = _gym_kind(op)
      if kind is not None:
        if gym_envs is None:
          raise ValueError(GYM_ERROR.format(owner=owner))
        pfor.set_converter(op, python_envs.converter(owner, kind, gym_envs))
        continue
      if op.type in _WHILE_OPS:
        pfor.set_converter(op, _lockstep)
      elif (op.type == "AddN" and len(op.inputs) > 2 and
            op.outputs[0].dtype != tf.variant):  # Not a sum of lists.
        pfor.set_converter(op, ordered_sums.convert)
      elif unconvertible(op):
        pfor.set_converter(op, per_iteration.convert)
      for value in op.node_def.attr.values():
        names = ([value.func.name] if value.HasField("func")
                 else [f.name for f in value.list.func])
        for name in names:
          if name and name not in seen:
            seen.add(name)
            function = graphs.function_in_graph(g, name)
            if getattr(function, "graph", None) is not None:
              walk(function.graph)

  walk(graph)


def _tensorflows(pfor_input: Any) -> list[Any]:
  return pfor.convert_while(pfor_input)


def _lockstep(pfor_input: Any) -> list[Any]:
  """`pfor_input`'s loop as one loop over the members. A condition that
  reads a member's own values runs the loop while any member's holds,
  each member keeping its values from the iteration its own ended
  (`masked`); with a `TensorArray` among the values, or a member count
  known only when run, TensorFlow's conversion."""
  count = pfor.static_iteration_count(pfor_input)
  if count is None:
    return _tensorflows(pfor_input)
  op = pfor.op_of(pfor_input)
  functions = [graphs.function_in_graph(op.graph, op.get_attr(name).name)
               for name in ("cond", "body")]
  masked = False
  while True:  # Until the values that vary per member stay so.
    inputs = pfor.inputs(pfor_input)
    stacked = [x.is_stacked for x in inputs]
    loop, found = _loop(pfor_input, *functions, stacked, count, masked)
    loop.get_concrete_function()  # Traced, not yet in the graph.
    if found["cond_stacked"] and not masked:
      if any(x.t.dtype == tf.variant for x in inputs):
        return _tensorflows(pfor_input)
      masked = True  # Every value per member, selected by its condition.
      found["to_stack"] = [i for i, s in enumerate(stacked) if not s]
    elif not found["to_stack"]:
      return [pfor.wrap(t, s) for t, s in zip(loop(), stacked)]
    if found["to_stack"]:
      pfor.stack_inputs(pfor_input, found["to_stack"], tile_variants=True)


def _loop(pfor_input: Any, cond_fn: Any, body_fn: Any, stacked: list[bool],
          members: int, masked: bool) -> tuple[Any, dict[str, Any]]:
  """A `tf.function` running the vectorised loop from `pfor_input`'s
  inputs (`stacked`: which hold one value per member; `masked`: every
  one, and each member's condition selects its new values), and what
  tracing it found: whether the condition is per member, which inputs
  must be stacked because the body makes them per member."""
  found = {"cond_stacked": False, "to_stack": []}
  inputs = [x.t for x in pfor.inputs(pfor_input)]
  shapes = [_shape(pfor_input, i, s, members) for i, s in enumerate(stacked)]

  def converted(fn, args):
    inner = pfor.inner_converter(pfor_input, members,
                                 fn.graph.get_operations())
    wrapped = [pfor.wrap(a, s) for a, s in zip(args, stacked)]
    return pfor.convert_function_call(fn, inner, wrapped)

  def going(args):  # Each member's condition, [members] bools.
    (value,) = converted(cond_fn, args)
    if value.is_stacked:
      found["cond_stacked"] = True
      return tf.reshape(value.t, [members])
    return tf.fill([members], tf.reshape(value.t, []))

  def cond(*args):
    return tf.reduce_any(going(args))

  def body(*args):
    results = []
    for i, (out, arg) in enumerate(zip(converted(body_fn, args), args)):
      if arg.dtype == tf.resource:  # A variable it reads: the same one.
        results.append(arg)
      elif out.is_stacked and not stacked[i]:
        found["to_stack"].append(i)  # This trace is dropped.
        results.append(arg)
      elif stacked[i] and not out.is_stacked:
        results.append(pfor.stack(out.t, pfor.iteration_count(pfor_input)))
      else:
        results.append(out.t)
    if masked:  # A member whose condition ended keeps its values.
      active = going(args)
      results = [tf.where(tf.reshape(active, [members] + [1] * (
          result.shape.rank - 1)), result, arg)
                 for result, arg in zip(results, args)]
    for result, shape in zip(results, shapes):
      result.set_shape(shape)  # Vectorising may forget the member count.
    return results

  @tf.function(autograph=False)
  def loop():
    return tf.while_loop(
        cond, body, inputs, shape_invariants=shapes,
        parallel_iterations=pfor.attr(pfor_input, "parallel_iterations"))

  return loop, found


def _shape(pfor_input: Any, index: int, stacked: bool,
           members: int) -> tf.TensorShape:
  """A loop variable's shape: the op's, behind the member axis if it is
  per member (a list of tensors keeps the members inside: a scalar)."""
  value = pfor.input_at(pfor_input, index).t
  if value.dtype == tf.variant:
    return value.shape
  shape = pfor.op_of(pfor_input).outputs[index].shape
  return tf.TensorShape([members]).concatenate(shape) if stacked else shape
