"""Draws in a population (`core.generator`): each member's numbers are
TensorFlow's, bit for bit, and `tf.vectorized_map` makes TensorFlow's op
once per member instead of a `While` over the members (or, before, Philox
written in ops)."""

import numpy as np
import pytest
import tensorflow as tf

from sonnet_like.core import generator
from sonnet_like.scenarios.population import members as members_lib

SHAPE = [3, 2]


def _op_types(function, *args) -> list[str]:
  """Every op type of `function`'s graph, its inner functions' too."""
  graph = function.get_concrete_function(*args).graph.as_graph_def()
  inner = [node.op for f in graph.library.function for node in f.node_def]
  return [node.op for node in graph.node] + inner


def _held_generator() -> generator.Generator:
  with members_lib.member_variables():
    return generator.Generator.from_key_counter(0, [0, 0], "philox")


def _member_states(members: int) -> tf.Tensor:
  # Member 1's counter is about to carry into its high word.
  return tf.constant([[5, 0, 7], [-300, 5, 9], [2, 0, 11]][:members],
                     tf.int64)


# A draw from a seed: ours in a member, TensorFlow's for the solo run.
STATELESS = {
    "normal": (generator.stateless_normal, tf.random.stateless_normal),
    "uniform": (lambda shape, seed: generator.stateless_uniform(
        shape, seed, -2.0, 3.0), lambda shape, seed: tf.random.
                stateless_uniform(shape, seed, -2.0, 3.0)),
}


def _stateless_draws(kind, **function_settings):
  """Seeds `[members, 2]` -> each member's draw of `kind` (SHAPE)."""
  draw = STATELESS[kind][0]
  return tf.function(lambda seeds: tf.vectorized_map(
      lambda seed: draw(SHAPE, seed), seeds), **function_settings)


def _assert_each_is_solo(drawn, seeds, solo):
  for i, seed in enumerate(seeds):
    np.testing.assert_array_equal(drawn[i].numpy(),
                                  solo(SHAPE, seed).numpy())


def _every_draw(generator_):
  """Each kind of draw a scenario makes, and the state after them."""
  return [generator_.normal(SHAPE), generator_.normal([4], 1.0, 2.0),
          generator_.uniform(SHAPE), generator_.uniform([4], -1.0, 5.0),
          generator_.uniform([5], 0, 9, tf.int32),
          generator_.uniform_full_int([2], tf.uint64),
          generator_.make_seeds(2), generator_.truncated_normal([3]),
          generator_.state.read_value()]


def _draws_of_held_states(held: generator.Generator):
  def member(state):
    held.state.tensor_value = state
    return _every_draw(held)

  return tf.function(lambda states: tf.vectorized_map(member, states))


@pytest.mark.parametrize("members", [1, 3])
def test_a_member_s_generator_draws_tensorflow_s_numbers(members):
  states = _member_states(members)
  drawn = _draws_of_held_states(_held_generator())(states)
  for i in range(members):
    state = states[i].numpy()
    real = tf.random.Generator.from_key_counter(state[2], state[:2], "philox")
    for x, y in zip(drawn, _every_draw(real)):
      np.testing.assert_array_equal(x[i].numpy(), y.numpy())


@pytest.mark.parametrize("kind", sorted(STATELESS))
@pytest.mark.parametrize("members", [1, 3])
def test_a_member_s_stateless_draw_is_tensorflow_s(kind, members):
  seeds = tf.constant([[i, 40 - 70 * i] for i in range(members)], tf.int64)
  _assert_each_is_solo(_stateless_draws(kind)(seeds), seeds,
                       STATELESS[kind][1])


def test_the_vectorised_draws_hold_no_while():
  states, seeds = _member_states(3), tf.zeros([3, 2], tf.int64)
  for function, args in [(_draws_of_held_states(_held_generator()), states),
                         (_stateless_draws("normal"), seeds),
                         (_stateless_draws("uniform"), seeds)]:
    types = _op_types(function, args)
    assert {"StatelessRandomNormalV2", "StatelessRandomUniformV2"} & set(
        types)
    assert not [t for t in types if "While" in t], types


def test_a_member_count_known_when_run_falls_back_to_a_loop():
  draw = _stateless_draws(
      "normal", input_signature=[tf.TensorSpec([None, 2], tf.int64)])
  seeds = tf.constant([[1, 2], [3, 4]], tf.int64)
  assert [t for t in _op_types(draw) if "While" in t]
  _assert_each_is_solo(draw(seeds), seeds, STATELESS["normal"][1])


@pytest.mark.parametrize("kind", sorted(STATELESS))
def test_under_xla_a_member_s_stateless_draw_is_xla_s(kind):
  # XLA makes another key of a seed beyond 32 bits than the CPU kernel; a
  # member's draw is TensorFlow's ops, so it follows.
  seeds = tf.constant([[5, -6], [2**40, 3]], tf.int64)
  _assert_each_is_solo(_stateless_draws(kind, jit_compile=True)(seeds),
                       seeds, tf.function(STATELESS[kind][1],
                                          jit_compile=True))
