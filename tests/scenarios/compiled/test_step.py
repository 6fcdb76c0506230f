"""The K-step compiled function, the per-call rollback, the state it
watches, and the precision wrapper."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from sonnet_like.scenarios.compiled import carried
from sonnet_like.scenarios.compiled import guard
from sonnet_like.scenarios.compiled import step


def test_train_function_runs_n_steps_and_stops_on_nonfinite():
  counter = tf.Variable(0)
  values = tf.constant([1.0, 2.0, np.nan, 4.0])

  def one_step():
    value = values[counter % 4]
    finite = tf.math.is_finite(value)
    counter.assign_add(1)
    return {"value": value}, finite

  for stop, expected in [(True, 3), (False, 4)]:
    counter.assign(0)
    function = step.make_train_function(one_step, stop_on_nonfinite=stop)
    logs, finite = function(tf.constant(4))
    assert counter.numpy() == expected and not bool(finite)
    counter.assign(0)
    logs, finite = function(tf.constant(2))
    assert counter.numpy() == 2 and bool(finite)
    assert logs["value"].numpy() == 2.0
    assert function.experimental_get_tracing_count() == 1


def _calls_of(graph_def, name_part):
  """How many nodes of `graph_def` and its library call a function whose
  name holds `name_part`."""
  nodes = list(graph_def.node)
  for function in graph_def.library.function:
    nodes.extend(function.node_def)
  return sum(1 for node in nodes
             if node.op in ("PartitionedCall", "StatefulPartitionedCall")
             and name_part in node.attr["f"].func.name)


@pytest.mark.parametrize("log", ["scalar", "unknown shape", "sparse"])
def test_train_function_traces_the_step_once_and_calls_it_once(log):
  # Python traces the step once. With its logs tensors of known shapes, the
  # loop starts from zeros and the graph calls the step in the loop's body
  # only (a second call before the loop would double the graph's
  # optimisation at the first call); with a shape known only when run, or
  # a composite log, the first step runs before the loop.
  traces = []
  counter = tf.Variable(0)

  def one_step():
    traces.append(1)
    counter.assign_add(1)
    value = tf.fill([counter % 2 + 1], tf.cast(counter, tf.float32))
    if log == "scalar":
      value = value[0]
    elif log == "sparse":
      value = tf.sparse.from_dense(tf.ensure_shape(value[:1], [1]))
    return {"value": value}, tf.constant(True)

  function = step.make_train_function(one_step, stop_on_nonfinite=True)
  logs, finite = function(tf.constant(3))
  assert bool(finite) and len(traces) == 1 and counter.numpy() == 3
  value = logs["value"]
  if log == "sparse":
    value = tf.sparse.to_dense(value)
  assert value.numpy().tolist() == {
      "scalar": 3.0, "unknown shape": [3.0, 3.0], "sparse": [3.0]}[log]
  graph_def = function.get_concrete_function(
      tf.TensorSpec([], tf.int32)).graph.as_graph_def()
  assert _calls_of(graph_def, "one_step") == (1 if log == "scalar" else 2)


def test_state_variables_finds_each_variable_once():
  module = tf.Module()
  module.w = tf.Variable([1.0])
  optimizer = keras.optimizers.Adam(0.1)
  optimizer.build([module.w])
  generator = tf.random.Generator.from_seed(1)
  dataset_iterator = iter(tf.data.Dataset.range(3))
  found = guard.state_variables([module, module.w, optimizer, generator,
                                dataset_iterator])
  assert found[0] is module.w
  assert len(found) == 1 + len(optimizer.variables) + 1
  assert all(isinstance(v, tf.Variable) for v in found)
  assert found[-1] is generator.state


def _rollback_function(values):
  """A K-step function whose update adds `values[i]` to `total` at step i,
  each step finite unless its value is NaN, checked per call. `marker`
  holds NaN on purpose: state, but not updated."""
  counter = tf.Variable(0, dtype=tf.int64)
  total = tf.Variable(0.0)
  marker = tf.Variable(np.nan)
  rollback = guard.CallRollback(counter)
  rollback.watch([total, marker])
  values = tf.constant(values)

  def one_step():
    value = values[counter]
    rollback.updated(None, [total])
    total.assign_add(value)
    finite = tf.math.is_finite(value) | tf.math.is_inf(value)  # Inf: state.
    counter.assign_add(tf.cast(finite, tf.int64))
    return {"total": total.read_value()}, finite

  function = step.make_train_function(one_step, stop_on_nonfinite=True,
                                      rollback=rollback)
  return function, counter, total, rollback


def test_call_rollback_keeps_a_finite_call_and_undoes_a_nonfinite_one():
  function, counter, total, rollback = _rollback_function(
      [1.0, 2.0, 4.0, np.nan, 8.0, 16.0])
  _, finite = function(tf.constant(2))
  assert bool(finite) and counter.numpy() == 2 and total.numpy() == 3.0
  assert rollback.failed_at.numpy() == -1
  # Steps 2 and 3: step 3's value is NaN: the call is undone.
  _, finite = function(tf.constant(2))
  assert not bool(finite)
  assert counter.numpy() == 2 and total.numpy() == 3.0
  assert rollback.failed_at.numpy() == 3
  assert function.experimental_get_tracing_count() == 1


def test_call_rollback_restores_rows_through_a_backup_block_by_block(
    monkeypatch):
  # A variable by rows (a replay buffer) is copied into a backup variable,
  # a few rows at a time (here 3 of 7: blocks of 3, 3 and 1), never read
  # whole; a failed call takes the rows back the same way.
  monkeypatch.setattr(guard, "_COPY_BYTES", 3 * 2 * 4)
  counter = tf.Variable(0, dtype=tf.int64)
  rows = carried.by_rows(tf.Variable(
      np.arange(14, dtype=np.float32).reshape(7, 2)))
  rollback = guard.CallRollback(counter)
  rollback.watch([rows])
  values = tf.constant([1.0, np.nan])

  def one_step():
    value = values[counter]
    rollback.updated(None, [rows])
    rows.scatter_nd_update([[counter], [6]], tf.fill([2, 2], value))
    finite = tf.math.is_finite(value)
    counter.assign_add(tf.cast(finite, tf.int64))
    return {}, finite

  function = step.make_train_function(one_step, stop_on_nonfinite=True,
                                      rollback=rollback)
  assert bool(function(tf.constant(1))[1])
  kept = rows.numpy()
  assert kept[0].tolist() == [1.0, 1.0] and kept[6].tolist() == [1.0, 1.0]
  assert not bool(function(tf.constant(1))[1])  # NaN written: undone.
  np.testing.assert_array_equal(rows.numpy(), kept)
  ops = {op.type for op in function.get_concrete_function(
      tf.TensorSpec([], tf.int32)).graph.get_operations()}
  assert "ResourceGather" in ops  # Copied by rows, not by a whole read.


def test_call_rollback_keeps_a_backup_only_for_the_rows_it_watches():
  # A rebuild watches new state: the old buffer's backup (its size again)
  # goes, a buffer still watched keeps its own.
  counter = tf.Variable(0, dtype=tf.int64)
  old, kept = (carried.by_rows(tf.Variable(tf.zeros([4, 2])))
               for _ in range(2))
  rollback = guard.CallRollback(counter)
  rollback.watch([old, kept])
  backup = rollback._backups[kept.ref()]  # pylint: disable=protected-access
  rollback.watch([kept])
  assert list(rollback._backups) == [kept.ref()]  # pylint: disable=protected-access
  assert rollback._backups[kept.ref()] is backup  # pylint: disable=protected-access


def test_call_rollback_finds_a_nonfinite_state_under_finite_verdicts():
  # Step 1 adds Inf with a finite verdict (a gradient under a finite loss):
  # only the state shows it, at the end of the call.
  function, counter, total, rollback = _rollback_function(
      [1.0, np.inf, 2.0, 3.0])
  _, finite = function(tf.constant(3))
  assert not bool(finite)
  assert counter.numpy() == 0 and total.numpy() == 0.0
  assert rollback.failed_at.numpy() == -1


def test_in_precision_is_the_model_itself_in_float32():
  import sonnet_like as snt
  from sonnet_like.scenarios.compiled import precision
  from sonnet_like.scenarios import settings
  linear = snt.Linear(2)
  x = tf.ones([1, 3])
  plain = step.TracedStep("T", precision.parse("T", "float32"),
                          settings.GuardSettings())
  assert plain.in_precision(linear) is linear
  mixed = step.TracedStep("T", precision.parse("T", "mixed_bfloat16"),
                          settings.GuardSettings())
  call = mixed.in_precision(linear)
  assert call is not linear
  np.testing.assert_array_equal(call(x), linear(x))  # Not in the step.
