"""Populations of RL scenarios: each member is the solo run with its seed
(its weights, optimizer slots, environment, episode statistics and random
stream), trained in one compiled call, with swept settings, under XLA,
and with its replay buffer held once; and the parts that make it so
(`population.control_flow`, `core.generator`). Every scenario's members
against their solo runs at every surface: `test_population_table.py`."""

import collections

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.core import generator
from sonnet_like.scenarios.population import control_flow
from sonnet_like.scenarios.population import lockstep
from sonnet_like.scenarios.population import members as members_lib
from sonnet_like.scenarios.population import rows
from tests.scenarios.population import run_state

state_of, difference = run_state.state, run_state.largest_difference

# Member i against the solo run with seed i, float32 weights and Adam's
# slots after a few iterations (measured: at most 2.4e-7 for PPO, 0 for DQN,
# 9.5e-7 for SAC's and TD3's Adam slots and Pendulum replay).
TOLERANCE = 1e-5
NUM_ENVS, LENGTH = 4, 16


class _UserNet(snt.Module):
  """A user's own module: its `__call__` is rewritten by AutoGraph."""

  def __init__(self, outputs, name=None):
    super().__init__(name=name)
    self.hidden, self.out = snt.Linear(16), snt.Linear(outputs)

  def __call__(self, x):
    return self.out(tf.nn.relu(self.hidden(x)))


def _ppo(iterations=3, learning_rate=3e-3, **settings):
  ppo = snt.scenarios.PPO(
      num_env_steps=iterations * NUM_ENVS * LENGTH, num_envs=NUM_ENVS,
      rollout_length=LENGTH, num_epochs=2, num_minibatches=2,
      progress=False, tensorboard=False, log_every=1, **settings)
  # A user's actor (called through AutoGraph) and the catalogue's critic
  # (called as written): the step must call each member's own.
  actor = _UserNet(2, name="actor")
  critic = snt.nets.MLP([16, 1], name="critic")
  history = ppo(actor, critic, snt.optimizers.Adam(learning_rate),
                snt.envs.CartPole(num_envs=NUM_ENVS))
  return ppo, history


def test_each_ppo_member_is_the_solo_run_of_its_seed_and_settings():
  # Member 1 also sweeps scenario attributes read while the step is traced
  # and the rate that PPO's linear annealing scales (member 0 has PPO's
  # defaults): each is the solo run with its values.
  sweep = snt.scenarios.Population([0, 1, 2], entropy_coef=[0.0, 0.01, 0.0],
                                   gamma=[0.99, 0.9, 0.99],
                                   clip_ratio=[0.2, 0.3, 0.2],
                                   learning_rate=[3e-3, 1e-3, 3e-3])
  population, history = _ppo(population=sweep,
                             learning_rate_schedule="linear")
  states = [state_of(population, i)
            for i in range(3)]
  solos = [dict(seed=0), dict(seed=1, entropy_coef=0.01, gamma=0.9,
                              clip_ratio=0.3, learning_rate=1e-3)]
  for member, settings in enumerate(solos):
    solo, _ = _ppo(learning_rate_schedule="linear", **settings)
    assert difference(states[member], state_of(solo)) < TOLERANCE
  # The members differ (their own environments and streams).
  assert not np.array_equal(states[0]["env"][0], states[2]["env"][0])
  assert len(history.member_train["loss"][-1]) == 3


def _dqn(**settings):
  dqn = snt.scenarios.DQN(
      num_env_steps=40 * NUM_ENVS, num_envs=NUM_ENVS, buffer_size=64,
      batch_size=8, learning_starts=16, train_every=2, gradient_steps=2,
      target_update_every=4, progress=False, tensorboard=False, log_every=1,
      **settings)
  history = dqn(snt.nets.MLP([16, 2], name="q"), snt.optimizers.Adam(1e-3),
                snt.envs.CartPole(num_envs=NUM_ENVS))
  return dqn, history


def test_a_member_is_loaded_without_copying_a_stacked_variable():
  """`as_member` and `member(i)` gather a replay buffer's slice of the
  member: its whole reads copy it (TensorFlow's copy-on-read mode, which
  a read by rows turns on; 4 s for ten SAC HalfCheetah members' buffers).
  The other stacked variables are read whole: a gather would turn the
  mode on for them, and each step would copy them."""
  population, _ = _dqn(population=[4, 7])
  expected = [state_of(population, i) for i in range(2)]

  def refused(what):
    def read(*args, **kwargs):
      raise AssertionError(what)
    return read

  by_rows = 0
  for template, variable in zip(population.members.templates,
                                population.members.stacked):
    if rows.is_by_rows(template):
      by_rows += 1
      variable._read_variable_op = refused("a replay buffer read whole")  # pylint: disable=protected-access
    else:
      variable.sparse_read = refused(f"{variable.name} gathered")
  assert by_rows == 5  # The buffer's fields.
  for i in (1, 0):
    assert difference(state_of(population, i), expected[i]) == 0.0
  q_network = population.member(1)  # Its one model.
  np.testing.assert_array_equal(q_network.variables[0].numpy(),
                                expected[1]["q_network"][0])


def test_a_replay_buffer_is_held_once_until_its_member_is_asked_for():
  """Each member's build makes its own buffer; its rows go into the
  stacked storage and its copy holds none (ten SAC members' 1M-row
  buffers held 1.7 GB twice), except the view's, which `as_member` loads.
  Only `member(i)` gives member i's copy its rows back, and they stay."""
  population, _ = _dqn(population=[4, 7, 9])
  members = population.members
  copies = members._parts.copy_variables  # pylint: disable=protected-access
  positions = [j for j, t in enumerate(members.templates)
               if rows.is_by_rows(t)]
  assert len(positions) == 5  # The buffer's fields.

  def rows_held(member):
    return [int(tf.shape(copies[member][j].read_value())[0])
            for j in positions]

  assert rows_held(0) == [64] * 5
  assert rows_held(1) == rows_held(2) == [0] * 5
  expected = state_of(population, 2)  # Through the view's copy.
  members.refresh()  # Every member's copies take the stacked values...
  assert rows_held(1) == rows_held(2) == [0] * 5  # ...but the emptied.
  population.member(2)
  assert rows_held(1) == [0] * 5 and rows_held(2) == [64] * 5
  members.refresh()
  assert rows_held(2) == [64] * 5
  for j in positions:
    np.testing.assert_array_equal(copies[2][j].numpy(),
                                  members.stacked[j][2].numpy())
  assert difference(state_of(population, 2), expected) == 0.0
  solo, _ = _dqn(seed=9)
  assert difference(expected, state_of(solo)) < TOLERANCE


def test_a_replay_buffer_population_compiles_with_xla():
  # Its replay buffers are read by rows; XLA refused the gather of that read
  # and the scalar copy of the step that `tf.vectorized_map` leaves behind.
  population, _ = _dqn(population=[4, 7], jit_compile=True)
  solo, _ = _dqn(seed=7, jit_compile=True)
  member = state_of(population, 1)
  assert difference(member, state_of(solo)) < TOLERANCE
  assert int(solo.optimizer.step) > 0


def test_the_generator_draws_as_tensorflow_s_also_from_a_tensor_state():
  # A counter about to carry into its high word.
  real = tf.random.Generator.from_key_counter(7, [-300, 5], "philox")
  with members_lib.member_variables():
    held = generator.Generator.from_key_counter(7, [-300, 5], "philox")
  assert hasattr(held.state, "tensor_value")

  def draws(g):
    return [g.uniform([3]), g.normal([2, 2]), g.make_seeds(2),
            g.uniform_full_int([5], tf.uint64),
            g.uniform([4], 0, 9, tf.int64)]

  for x, y in zip(draws(real), draws(held)):
    np.testing.assert_array_equal(x.numpy(), y.numpy())
  np.testing.assert_array_equal(real.state.numpy(), held.state.numpy())


def test_control_flow_is_tensorflow_s_outside_a_population():
  assert not control_flow.active()
  out = control_flow.while_loop(lambda i, s: i < 4,
                                lambda i, s: (i + 1, s * 2.0),
                                (tf.constant(0), tf.constant(1.0)))
  assert isinstance(out, tuple) and float(out[1]) == 16.0
  single = control_flow.while_loop(lambda i: i < 3, lambda i: (i + 1,),
                                   [tf.constant(0)])
  assert int(single[0]) == 3
  assert int(control_flow.cond(tf.constant(False), lambda: tf.constant(1),
                               lambda: tf.constant(2))) == 2


def test_control_flow_carries_member_state_written_inside():
  with members_lib.member_variables():
    total = tf.Variable(0.0)
    count = tf.Variable(0, dtype=tf.int64)

  def member(start):
    total.tensor_value, count.tensor_value = start, tf.constant(
        0, tf.int64)
    with control_flow.carrying([total, count]):

      def body(i):
        total.assign_add(tf.cast(i, tf.float32))
        count.assign_add(1)
        return (i + 1,)

      control_flow.while_loop(lambda i: i < 4, body, [tf.constant(0)])
      control_flow.cond(total > 10.0, lambda: total.assign(-total),
                        lambda: total.assign_add(100.0))
      control_flow.cond(total < 0.0, lambda: count.assign_add(10),
                        lambda: count.assign_add(0), per_member=True)
      return total.tensor_value, count.tensor_value

  members = tf.function(tf.vectorized_map)(member, tf.constant([0.0, 5.0]))
  np.testing.assert_array_equal(members[0].numpy(), [106.0, -11.0])
  np.testing.assert_array_equal(members[1].numpy(), [4, 14])


@pytest.mark.parametrize("writes", [(0, 0), (0, 2), (None, 3)],
                         ids=["same", "each_its_own", "false_only"])
def test_a_member_cond_carries_out_only_what_its_branches_write(writes):
  # Of six member values, the true branch writes `writes[0]`, the false
  # one `writes[1]` (None: nothing). The `If` carries out those (the
  # second branch traced writing another: traced again with both), the
  # branch's output and the verdict, not all six.
  with members_lib.member_variables():
    held = [tf.Variable(0.0) for _ in range(6)]

  def branch(index, add):
    def fn():
      if index is not None:
        held[index].assign_add(add)
      return tf.constant(add)
    return fn

  def member(start):
    for variable in held:
      variable.tensor_value = start
    with control_flow.carrying(held):
      out = control_flow.cond(start > 1.0, branch(writes[0], 1.0),
                              branch(writes[1], 10.0))
      return out, tf.stack([v.tensor_value for v in held])

  traced = tf.function(member).get_concrete_function(
      tf.TensorSpec([], tf.float32)).graph
  (op,) = [op for op in traced.get_operations()
           if op.type in ("If", "StatelessIf")]
  written = {w for w in writes if w is not None}
  assert len(op.outputs) == 1 + len(written) + 1
  outs, values = tf.function(tf.vectorized_map)(member,
                                                tf.constant([0.0, 5.0]))
  np.testing.assert_array_equal(outs.numpy(), [10.0, 1.0])
  expected = np.array([[0.0] * 6, [5.0] * 6])
  if writes[1] is not None:
    expected[0, writes[1]] += 10.0
  if writes[0] is not None:
    expected[1, writes[0]] += 1.0
  np.testing.assert_array_equal(values.numpy(), expected)


def _op_types(function) -> collections.Counter:
  """The op types of a traced function, its nested functions' included."""
  graph_def = function.get_concrete_function().graph.as_graph_def()
  found = collections.Counter(node.op for node in graph_def.node)
  for inner in graph_def.library.function:
    found.update(node.op for node in inner.node_def)
  return found


def test_a_loop_every_member_runs_alike_is_one_loop_xla_compiles():
  # A rollout's shape: a loop of a fixed length writing a TensorArray.
  def member_with(marked):
    def member(start):
      def body(t, total, steps):
        total += start * tf.cast(t, tf.float32)
        return t + 1, total, steps.write(t, total)

      _, total, steps = tf.while_loop(
          lambda t, *_: t < 4, body,
          (tf.constant(0), tf.constant(0.0), tf.TensorArray(tf.float32, 4)))
      if marked:
        lockstep.mark_graph(tf.compat.v1.get_default_graph(), "test", None)
      return total, steps.stack()
    return member

  starts = tf.constant([1.0, 2.0, 3.0])

  def vectorized(marked, **options):
    return tf.function(lambda: tf.vectorized_map(member_with(marked), starts),
                       **options)

  expected = [np.cumsum(s * np.arange(4.0)) for s in [1.0, 2.0, 3.0]]
  for total, steps in (vectorized(True)(),
                       vectorized(True, jit_compile=True)()):
    np.testing.assert_allclose(steps.numpy(), expected)
    np.testing.assert_allclose(total.numpy(), [e[-1] for e in expected])
  # TensorFlow's own conversion keeps an accumulator per loop variable for
  # the members that are done (for the TensorArray a list of lists, which
  # XLA cannot compile) and runs the body under a cond each iteration.
  own, ours = _op_types(vectorized(False)), _op_types(vectorized(True))
  assert own["TensorListReserve"] > ours["TensorListReserve"]
  assert {"If", "StatelessIf"} & set(own)
  assert not {"If", "StatelessIf"} & set(ours)


def test_a_loop_whose_condition_is_each_member_s_keeps_each_own_end():
  def member(limit):
    _, total = tf.while_loop(lambda t, total: t < limit,
                             lambda t, total: (t + 1, total + tf.pow(
                                 2.0, tf.cast(t, tf.float32))),
                             (tf.constant(0), tf.constant(0.0)))
    lockstep.mark_graph(tf.compat.v1.get_default_graph(), "test", None)
    return total

  limits = tf.constant([1, 4, 0])
  for options in ({}, {"jit_compile": True}):
    totals = tf.function(lambda: tf.vectorized_map(member, limits),
                         **options)()
    np.testing.assert_array_equal(totals.numpy(), [1.0, 15.0, 0.0])
