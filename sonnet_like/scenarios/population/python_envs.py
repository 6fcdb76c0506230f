"""Gymnasium environments in a population: each member steps its own.

A population copies every object of the scenario's state for each member
(`members.py`); a `GymEnvironment` copy is made again from its id or
factory (`GymEnvironment.__deepcopy__`) and reset with the member's seed
by the member's build, as its solo run resets its own. A member's step is
traced once, on the templates, where a `GymEnvironment` step is one
`tf.numpy_function` op (`gym_adapter.OP_NAMES`). `converter` is that op's
conversion under `tf.vectorized_map`: one op again, which steps each
member's own environments in turn with that member's actions and stacks
what they return, so member i plays its solo run's episodes. The Python
work is each member's, one after the other, in one call into Python a
step (`gym_adapter.python_steps_of`: the members' Envs as one batch when
they step in this process).
"""

from typing import Any, Callable, Sequence

import numpy as np
import tensorflow as tf

from sonnet_like.core.tf_private import pfor
from sonnet_like.envs import gym_adapter

SOME_MEMBERS_ERROR = (
    "{owner}: a gymnasium environment is stepped inside a branch or a loop "
    "that only some members take; with population= it must be stepped by "
    "every member alike (a rollout of a fixed length). Train on an "
    "in-graph environment (snt.envs.make(id, in_graph=True)) or the members "
    "one at a time.")

RESET_ERROR = (
    "{owner}: a gymnasium environment is reset inside the compiled step; "
    "with population= reset it in build() (eagerly, as the RL scenarios "
    "do) and let its steps restart ended episodes.")


def converter(owner: str, kind: str, envs: Sequence[Any]
              ) -> Callable[[Any], list[pfor.WrappedTensor]]:
  """The conversion of a `GymEnvironment` op of `kind` ("gym_step",
  "gym_observation", "gym_reset") on the templates, stepping `envs` (the
  members' own, in member order)."""

  def convert(pfor_input: Any) -> list[pfor.WrappedTensor]:
    if kind == "gym_reset":
      raise ValueError(RESET_ERROR.format(owner=owner))
    if (not pfor.every_iteration(pfor_input) or
        pfor.static_iteration_count(pfor_input) != len(envs)):
      raise ValueError(SOME_MEMBERS_ERROR.format(owner=owner))
    op = pfor.op_of(pfor_input)
    dtypes = [x.dtype for x in op.outputs]
    if kind == "gym_observation":
      made = tf.numpy_function(
          lambda: np.stack([env.python_observation() for env in envs]), [],
          dtypes[0], name="gym_observation_of_members")
      made = [made]
    else:
      pfor.stack_inputs(pfor_input, [0])
      made = tf.numpy_function(
          gym_adapter.python_steps_of(envs),
          [pfor.stacked_input(pfor_input, 0)], dtypes,
          name="gym_step_of_members")
    for out, like in zip(made, op.outputs):
      out.set_shape(tf.TensorShape([len(envs)]).concatenate(like.shape))
    return [pfor.wrap(out, True) for out in made]

  return convert

