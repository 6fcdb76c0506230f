"""Probes: recurrent cores, unrolling and their states."""

import numpy as np
import tensorflow as tf

from tests.outside import inputs
from tests.outside.framework import probe
from tests.outside.framework import registered


def _seq(t=4, b=2, f=3, dtype=tf.float32):
  return inputs.sine([t, b, f], dtype)


def _cores(snt):
  return {"LSTM": snt.LSTM(4), "GRU": snt.GRU(4),
          "VanillaRNN": snt.VanillaRNN(4),
          "LSTM_projection": snt.LSTM(4, projection_size=2),
          "DeepRNN": snt.DeepRNN([snt.LSTM(3), snt.GRU(2)])}


def _for_each_core(name_prefix, fn):
  for key in ("LSTM", "GRU", "VanillaRNN", "LSTM_projection", "DeepRNN"):
    probe(f"{name_prefix}[{key}]")(
        lambda snt, key=key: fn(snt, _cores(snt)[key]))


def _initial_state_structure(snt, core):
  state = core.initial_state(3)
  return (type(state).__name__, tf.nest.map_structure(
      lambda t: (t.shape, t.dtype), state))


def _initial_state_tensor_batch(snt, core):
  f = tf.function(lambda b: core.initial_state(b))
  concrete = f.get_concrete_function(tf.TensorSpec([], tf.int32))
  return tf.nest.map_structure(lambda t: t.shape, concrete.structured_outputs)


def _dynamic_unroll(snt, core):
  out, state = snt.dynamic_unroll(core, _seq(), core.initial_state(2))
  return out, state


def _static_unroll_lengths(snt, core):
  return snt.static_unroll(core, _seq(), core.initial_state(2),
                           sequence_length=tf.constant([4, 2]))


def _dynamic_unroll_in_tf_function(snt, core):
  f = tf.function(lambda x: snt.dynamic_unroll(core, x, core.initial_state(
      tf.shape(x)[1])))
  concrete = f.get_concrete_function(tf.TensorSpec([None, None, 3]))
  shapes = tf.nest.map_structure(lambda t: t.shape.as_list(),
                                 concrete.structured_outputs)
  return shapes, f(_seq())


def _state_after_steps(snt, core):
  state = core.initial_state(2)
  outputs = []
  for x in tf.unstack(_seq()):
    out, state = core(x, state)
    outputs.append(out)
  return outputs, state


_for_each_core("initial_state_structure", _initial_state_structure)
_for_each_core("initial_state_tensor_batch", _initial_state_tensor_batch)
_for_each_core("dynamic_unroll", _dynamic_unroll)
_for_each_core("static_unroll_lengths", _static_unroll_lengths)
_for_each_core("dynamic_unroll_in_tf_function", _dynamic_unroll_in_tf_function)
_for_each_core("steps_by_hand", _state_after_steps)


@probe("lstm_state_namedtuple")
def _(snt):
  state = snt.LSTMState(hidden=tf.ones([1, 2]), cell=tf.zeros([1, 2]))
  return (snt.LSTMState._fields, state.hidden, state._replace(
      cell=tf.ones([1, 2])), repr(type(state).__name__),
          isinstance(state, tuple))


@probe("lstm_attributes_and_variables")
def _(snt):
  lstm = snt.LSTM(3, projection_size=2, forget_bias=0.5, name="lstm")
  lstm(tf.ones([1, 4]), lstm.initial_state(1))
  return ([(v.name, v.shape) for v in lstm.variables],
          {k: v for k, v in vars(lstm).items() if not k.startswith("_")})


@probe("gru_and_vanilla_variables")
def _(snt):
  gru, rnn = snt.GRU(3), snt.VanillaRNN(3)
  gru(tf.ones([1, 4]), gru.initial_state(1))
  rnn(tf.ones([1, 4]), rnn.initial_state(1))
  return ([(v.name, v.shape) for v in gru.variables],
          [(v.name, v.shape) for v in rnn.variables])


@probe("core_float64_dtype_argument")
def _(snt):
  lstm = snt.LSTM(2, dtype=tf.float64)
  out, state = lstm(tf.ones([1, 3], tf.float64), lstm.initial_state(1))
  gru = snt.GRU(2, dtype=tf.float64)
  return out, state, gru.initial_state(1)


@probe("initial_state_trainable_kwargs")
def _(snt):
  lstm = snt.LSTM(2)
  try:
    return lstm.initial_state(2, trainable=True)
  except TypeError as e:
    return "TypeError", str(e)[:40]


@probe("deep_rnn_with_functions_and_skip")
def _(snt):
  deep = snt.DeepRNN([snt.LSTM(3), tf.nn.relu, snt.Linear(2), snt.GRU(2)])
  out, state = deep(tf.ones([2, 3]), deep.initial_state(2))
  skip = snt.deep_rnn_with_skip_connections([snt.LSTM(3), snt.GRU(2)])
  out2, state2 = skip(tf.ones([2, 3]), skip.initial_state(2))
  res = snt.deep_rnn_with_residual_connections([snt.GRU(3), snt.GRU(3)])
  out3, _ = res(tf.ones([2, 3]), res.initial_state(2))
  return (out.shape, len(state), out2.shape, len(state2), out3.shape,
          [m.name for m in deep.submodules])


@probe("lstm_with_recurrent_dropout_cores")
def _(snt):
  train, test = snt.lstm_with_recurrent_dropout(3, dropout=0.5, seed=1)
  x = tf.ones([2, 4])
  out_test, state_test = test(x, test.initial_state(2))
  state = train.initial_state(2)
  shapes = lambda s: tf.nest.map_structure(
      lambda t: None if t is None else t.shape, s)
  out_train, _ = train(x, state)
  return (out_test, shapes(state_test), shapes(state), out_train.shape,
          [v.name for v in test.variables], train.name, test.name)


@probe("unrolled_lstm")
def _(snt):
  lstm = snt.UnrolledLSTM(3, forget_bias=0.5)
  out, state = lstm(_seq(), lstm.initial_state(2))
  return out, state, [v.name for v in lstm.variables]


@probe("unrolled_lstm_matches_lstm_core")
def _(snt):
  unrolled = snt.UnrolledLSTM(3)
  core = snt.LSTM(3)
  x = _seq()
  out, _ = unrolled(x, unrolled.initial_state(2))
  core(x[0], core.initial_state(2))
  for a, b in zip(core.variables, unrolled.variables):
    a.assign(b)
  reference, _ = snt.dynamic_unroll(core, x, core.initial_state(2))
  return bool(np.allclose(out, reference, atol=1e-5)), [
      v.name for v in core.variables]


@probe("conv2d_lstm_steps")
def _(snt):
  core = snt.Conv2DLSTM([4, 4, 2], 3, 3, name="conv_lstm")
  x = inputs.sine([2, 4, 4, 2])
  out, state = core(x, core.initial_state(2))
  return out, state, [(v.name, v.shape) for v in core.variables]


@probe("trainable_state_for_core_and_gradients")
def _(snt):
  state = snt.TrainableState.for_core(snt.LSTM(2), mask=None)
  with tf.GradientTape() as tape:
    value = state(3)
    loss = tf.reduce_sum(value.hidden) + 2. * tf.reduce_sum(value.cell)
  return (value, [v.name for v in state.trainable_variables],
          tape.gradient(loss, state.trainable_variables))


@probe("unroll_nested_inputs_and_outputs")
def _(snt):
  class Pair(snt.RNNCore):

    def __call__(self, inputs, prev_state):
      a, b = inputs["a"], inputs["b"]
      state = prev_state + a + b
      return {"sum": state, "diff": a - b}, state

    def initial_state(self, batch_size):
      return tf.zeros([batch_size, 2])

  core = Pair()
  inputs = {"a": _seq(3, 2, 2), "b": _seq(3, 2, 2) * 2.}
  return (snt.dynamic_unroll(core, inputs, core.initial_state(2)),
          snt.static_unroll(core, inputs, core.initial_state(2)))


@probe("dynamic_unroll_options")
def _(snt):
  core = snt.GRU(2)
  return snt.dynamic_unroll(core, _seq(), core.initial_state(2),
                            sequence_length=tf.constant([3, 1]),
                            parallel_iterations=1, swap_memory=True)


@probe("unroll_one_step")
def _(snt):
  core = snt.VanillaRNN(2)
  seq = _seq(1)
  return (snt.dynamic_unroll(core, seq, core.initial_state(2)),
          snt.static_unroll(core, seq, core.initial_state(2)))


@probe("core_in_tf_function_then_eager")
def _(snt):
  core = snt.LSTM(3)
  step = tf.function(core)
  a = step(tf.ones([2, 4]), core.initial_state(2))
  b = core(tf.ones([2, 4]), core.initial_state(2))
  return a, b


@probe("static_unroll_in_tf_function_unknown_batch")
def _(snt):
  core = snt.LSTM(3)
  f = tf.function(lambda x: snt.static_unroll(core, x, core.initial_state(
      tf.shape(x)[1])))
  concrete = f.get_concrete_function(tf.TensorSpec([4, None, 3]))
  return tf.nest.map_structure(lambda t: t.shape.as_list(),
                               concrete.structured_outputs)


@probe("dynamic_unroll_empty_sequence", mistake=True,
       phrase="must have at least a single time step")
def _(snt):
  core = snt.GRU(2)
  return snt.dynamic_unroll(core, tf.zeros([0, 2, 3]), core.initial_state(2))


@probe("core_wrong_input_dtype", mistake=True)
def _(snt):
  core = snt.GRU(2)
  return core(tf.ones([2, 3], tf.float64), core.initial_state(2))


@probe("lstm_recurrent_dropout_bad_rate", mistake=True)
def _(snt):
  return snt.lstm_with_recurrent_dropout(2, dropout=-0.1)


def probes():
  return registered(__name__)
