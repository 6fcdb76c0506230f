"""One table of every public module with an example input.

It drives the cross-cutting tests in `test_conformance.py` (eager equals
tf.function, unknown batch size, XLA, Checkpoint, SavedModel, deepcopy), and
`test_conformance.py` also checks that the table covers every public module.
To add a module: add a `Descriptor` to `DESCRIPTORS` (or, for a module that
cannot take part, a reason to `NOT_DESCRIBED`).
"""

import dataclasses
from typing import Any, Callable

import tensorflow as tf

import sonnet_like as snt


def _call(module: Any, x: tf.Tensor) -> Any:
  return module(x)


# --- nets: cifar10_convnet, resnet ---
def _resnet(blocks, channels, **kwargs) -> Any:
  """A ResNet whose logits start random (Sonnet's start at zero)."""
  net = snt.nets.ResNet(blocks, 3, channels_per_group_list=channels, **kwargs)
  logits = net._logits  # pylint: disable=protected-access
  logits.w_init = snt.initializers.RandomNormal()
  return net


def _train_then_eval(module: Any, x: tf.Tensor) -> Any:
  """A training call, then the output of an evaluation call."""
  module(x, is_training=True)
  return module(x, is_training=False)


# --- optimizers ---
def _fresh_metric(metric: Any, x: tf.Tensor) -> tf.Tensor:
  """Builds (or restores) `metric`, resets it, returns it on sum(x, 0)."""
  total = tf.reduce_sum(x, 0)
  metric.update(total)
  metric.reset()
  return metric(total)


@dataclasses.dataclass(frozen=True)
class Descriptor:
  """How to build a module and call it on an example input.

  Attributes:
    name: Test id.
    create: Builds a fresh, unbuilt module.
    shape: Example input shape; the first axis is the batch.
    dtype: Example input dtype.
    call: `call(module, inputs)`, for modules that need more than `m(x)`.
    xla: Whether the module compiles with jit_compile=True.
  """
  name: str
  create: Callable[[], snt.Module]
  shape: tuple[int, ...]
  dtype: tf.DType = tf.float32
  call: Callable[[Any, tf.Tensor], Any] = _call
  xla: bool = True


DESCRIPTORS: list[Descriptor] = [
    # --- core layers ---
    Descriptor("Linear", lambda: snt.Linear(3), (2, 4)),
    Descriptor("Linear_no_bias", lambda: snt.Linear(3, with_bias=False),
               (2, 4)),
    Descriptor("Linear_rank3", lambda: snt.Linear(3), (2, 5, 4)),
    # --- conv ---
    Descriptor("Conv1D", lambda: snt.Conv1D(3, 3), (2, 8, 2)),
    Descriptor("Conv1D_NCW_causal_rate2",
               lambda: snt.Conv1D(3, 3, rate=2, padding=snt.pad.causal,
                                  data_format="NCW"), (2, 2, 8)),
    Descriptor("Conv2D", lambda: snt.Conv2D(3, 3), (2, 6, 6, 2)),
    Descriptor("Conv2D_NCHW", lambda: snt.Conv2D(3, 3, data_format="NCHW"),
               (2, 2, 6, 6)),
    Descriptor("Conv2D_valid_stride2",
               lambda: snt.Conv2D(3, (3, 2), stride=2, padding="VALID"),
               (2, 7, 6, 2)),
    Descriptor("Conv2D_rate2_no_bias",
               lambda: snt.Conv2D(3, 3, rate=2, with_bias=False),
               (2, 7, 7, 2)),
    Descriptor("Conv2D_pad_functions",
               lambda: snt.Conv2D(3, 3, padding=[snt.pad.full,
                                                 snt.pad.reverse_causal]),
               (2, 5, 5, 2)),
    Descriptor("Conv3D", lambda: snt.Conv3D(2, 2), (2, 3, 4, 4, 2)),
    Descriptor("Conv3D_NCDHW_stride2",
               lambda: snt.Conv3D(2, 2, stride=2, data_format="NCDHW"),
               (2, 2, 4, 4, 4)),
    Descriptor("Conv1DTranspose", lambda: snt.Conv1DTranspose(3, 3, stride=2),
               (2, 5, 2)),
    Descriptor("Conv2DTranspose", lambda: snt.Conv2DTranspose(3, 3, stride=2),
               (2, 4, 4, 2)),
    Descriptor("Conv2DTranspose_valid_rate2",
               lambda: snt.Conv2DTranspose(3, 2, rate=2, padding="VALID"),
               (2, 4, 4, 2)),
    Descriptor("Conv2DTranspose_NCHW_output_shape",
               lambda: snt.Conv2DTranspose(3, 3, output_shape=(7, 8), stride=2,
                                           data_format="NCHW"), (2, 2, 4, 4)),
    Descriptor("Conv3DTranspose",
               lambda: snt.Conv3DTranspose(2, 2, stride=(1, 2, 2)),
               (2, 2, 3, 3, 2)),
    Descriptor("DepthwiseConv2D",
               lambda: snt.DepthwiseConv2D(3, channel_multiplier=2),
               (2, 6, 6, 3)),
    Descriptor("DepthwiseConv2D_NCHW_unequal_stride",
               lambda: snt.DepthwiseConv2D(3, stride=(2, 1),
                                           data_format="NCHW"), (2, 3, 6, 6)),
    # --- normalization, dropout, containers, reshape ---
    Descriptor("BatchNorm", lambda: snt.BatchNorm(True, True), (3, 4),
               call=lambda m, x: m(x, is_training=True)),
    Descriptor("BatchNorm_nhwc_fused", lambda: snt.BatchNorm(True, True),
               (2, 3, 3, 4), call=lambda m, x: m(x, is_training=True)),
    Descriptor("BatchNorm_nchw",
               lambda: snt.BatchNorm(False, True, data_format="NCHW"),
               (2, 4, 3, 3), call=lambda m, x: m(x, is_training=True)),
    # With a tiny decay the moving statistics are the last batch's.
    Descriptor("BatchNorm_train_then_eval",
               lambda: snt.BatchNorm(True, True, decay_rate=1e-6),
               (2, 3, 3, 4),
               call=lambda m, x: (m(x, is_training=True),
                                  m(x, is_training=False))),
    # A boolean tensor known only when the graph runs: tf.cond paths.
    Descriptor("BatchNorm_tensor_is_training",
               lambda: snt.BatchNorm(True, False), (3, 4),
               call=lambda m, x: m(
                   x, is_training=tf.math.is_finite(tf.reduce_sum(x)))),
    Descriptor("BaseBatchNorm",
               lambda: snt.BaseBatchNorm(
                   True, True, snt.ExponentialMovingAverage(0.5),
                   snt.ExponentialMovingAverage(0.5)), (3, 4),
               call=lambda m, x: m(x, is_training=True)),
    # decay=0 makes the average the last value, whatever came before.
    Descriptor("ExponentialMovingAverage",
               lambda: snt.ExponentialMovingAverage(0.),
               (3, 4), call=lambda m, x: m(tf.reduce_mean(x, axis=0))),
    Descriptor("ExponentialMovingAverage_debiased",
               lambda: snt.ExponentialMovingAverage(0.9), (1, 3)),
    Descriptor("LayerNorm", lambda: snt.LayerNorm(-1, True, True), (2, 4)),
    Descriptor("LayerNorm_all_but_batch",
               lambda: snt.LayerNorm(slice(1, None), True, False),
               (2, 3, 4)),
    Descriptor("LayerNorm_stateless",
               lambda: snt.LayerNorm([1, 2], False, False), (2, 3, 4)),
    Descriptor("InstanceNorm", lambda: snt.InstanceNorm(True, True),
               (2, 3, 3, 4)),
    Descriptor("InstanceNorm_nchw",
               lambda: snt.InstanceNorm(True, True, data_format="NCHW"),
               (2, 4, 3, 3)),
    Descriptor("GroupNorm", lambda: snt.GroupNorm(2), (2, 3, 3, 4)),
    Descriptor("GroupNorm_nchw",
               lambda: snt.GroupNorm(2, data_format="channels_first"),
               (2, 4, 3, 3)),
    Descriptor("GroupNorm_rank2", lambda: snt.GroupNorm(3), (2, 6)),
    Descriptor("Dropout_eval", lambda: snt.Dropout(0.5), (2, 4),
               call=lambda m, x: m(x, is_training=False)),
    # Rate 0 runs the training path (random mask) deterministically.
    Descriptor("Dropout_train_rate0", lambda: snt.Dropout(0.), (2, 4),
               call=lambda m, x: m(x, is_training=True)),
    Descriptor("Dropout_tensor_is_training", lambda: snt.Dropout(0.5), (2, 4),
               call=lambda m, x: m(
                   x, is_training=tf.math.is_nan(tf.reduce_sum(x)))),
    Descriptor("Sequential",
               lambda: snt.Sequential([snt.Linear(4), tf.nn.relu,
                                       snt.Linear(3)]), (2, 5)),
    Descriptor("Sequential_stateless",
               lambda: snt.Sequential([snt.Flatten(), tf.nn.relu]),
               (2, 3, 4)),
    Descriptor("Reshape", lambda: snt.Reshape((-1, 2)), (2, 3, 4)),
    Descriptor("Reshape_preserve2", lambda: snt.Reshape((2, 2), 2),
               (2, 3, 4)),
    Descriptor("Flatten", lambda: snt.Flatten(), (2, 3, 4)),
    # --- nets ---
    Descriptor("MLP", lambda: snt.nets.MLP([4, 3]), (2, 5)),
    Descriptor("MLP_activate_final_no_bias",
               lambda: snt.nets.MLP([4, 3], with_bias=False,
                                    activation=tf.tanh, activate_final=True),
               (2, 5)),
    Descriptor("MLP_dropout_eval",
               lambda: snt.nets.MLP([4, 3], dropout_rate=0.5), (2, 5),
               call=lambda m, x: m(x, is_training=False)),
    Descriptor("MLP_dropout_tensor_is_training",
               lambda: snt.nets.MLP([4, 3], dropout_rate=0.5), (2, 5),
               call=lambda m, x: m(
                   x, is_training=tf.math.is_nan(tf.reduce_sum(x)))),
    # --- nets: cifar10_convnet, resnet ---
    Descriptor("Cifar10ConvNet",
               lambda: snt.nets.Cifar10ConvNet(
                   num_classes=3, output_channels=(4, 6, 8), strides=(1, 2, 1)),
               (2, 8, 8, 3), call=lambda m, x: m(x, is_training=True)),
    # Outside training BatchNorm uses the batch statistics by default.
    Descriptor("Cifar10ConvNet_NCHW_eval_local_stats",
               lambda: snt.nets.Cifar10ConvNet(
                   num_classes=3, data_format="NCHW", output_channels=(4, 6),
                   strides=(2, 1)),
               (2, 3, 8, 8), call=lambda m, x: m(x, is_training=False)),
    Descriptor("Cifar10ConvNet_tensor_is_training",
               lambda: snt.nets.Cifar10ConvNet(
                   num_classes=3, output_channels=(4,), strides=(1,)),
               (2, 6, 6, 3), call=lambda m, x: m(
                   x, is_training=tf.math.is_finite(tf.reduce_sum(x)),
                   test_local_stats=tf.math.is_nan(tf.reduce_sum(x)))),
    # Empty groups keep the rows small; group 1 has a block with a projected
    # shortcut and one without.
    Descriptor("ResNet",
               lambda: _resnet([1, 2, 0, 0], (8, 12, 8, 8)),
               (2, 16, 16, 3), call=lambda m, x: m(x, is_training=True)),
    # A tiny decay makes the moving statistics the last batch's (to float32
    # precision), so the evaluation after the training call does not depend
    # on earlier calls.
    Descriptor("ResNet_v2_train_then_eval",
               lambda: _resnet([1, 0, 0, 1], (8, 8, 8, 12), resnet_v2=True,
                               bn_config={"decay_rate": 1e-9, "eps": 1e-3}),
               (2, 32, 32, 3), call=lambda m, x: _train_then_eval(m, x)),
    # --- nets: vqvae ---
    Descriptor("VectorQuantizer",
               lambda: snt.nets.VectorQuantizer(4, 6, commitment_cost=0.25),
               (2, 3, 4), call=lambda m, x: m(x, is_training=True)),
    Descriptor("VectorQuantizerEMA_eval",
               lambda: snt.nets.VectorQuantizerEMA(4, 6, commitment_cost=0.25,
                                                   decay=0.9),
               (2, 3, 4), call=lambda m, x: m(x, is_training=False)),
    # With one code and a tiny decay, a training call moves the code to the
    # mean of its inputs whatever came before: train, then evaluate on it.
    Descriptor("VectorQuantizerEMA_train_then_eval",
               lambda: snt.nets.VectorQuantizerEMA(4, 1, commitment_cost=0.25,
                                                   decay=1e-9),
               (2, 3, 4), call=lambda m, x: _train_then_eval(m, x)),
    # A boolean tensor known only when the graph runs (False here): the
    # update is a tf.cond branch that does not run.
    Descriptor("VectorQuantizerEMA_tensor_is_training",
               lambda: snt.nets.VectorQuantizerEMA(4, 6, commitment_cost=0.25,
                                                   decay=0.9),
               (2, 3, 4), call=lambda m, x: m(
                   x, is_training=tf.math.is_nan(tf.reduce_sum(x)))),
    # --- distribute ---
    # Without a strategy (one replica) it is BatchNorm with given averages.
    Descriptor("CrossReplicaBatchNorm",
               lambda: snt.distribute.CrossReplicaBatchNorm(
                   True, True, snt.ExponentialMovingAverage(0.5),
                   snt.ExponentialMovingAverage(0.5)), (3, 4),
               call=lambda m, x: m(x, is_training=True)),
    Descriptor("CrossReplicaBatchNorm_nhwc_train_then_eval",
               lambda: snt.distribute.CrossReplicaBatchNorm(
                   True, False, snt.ExponentialMovingAverage(1e-6),
                   snt.ExponentialMovingAverage(1e-6)), (2, 3, 3, 4),
               call=lambda m, x: (m(x, is_training=True),
                                  m(x, is_training=False))),
    Descriptor("CrossReplicaBatchNorm_nchw_tensor_is_training",
               lambda: snt.distribute.CrossReplicaBatchNorm(
                   False, True, snt.ExponentialMovingAverage(0.5),
                   snt.ExponentialMovingAverage(0.5), data_format="NCHW"),
               (2, 4, 3, 3), call=lambda m, x: m(
                   x, is_training=tf.math.is_finite(tf.reduce_sum(x)))),
    # --- recurrent ---
    # Cores run one step from their own initial state (a tensor batch size
    # keeps the batch axis unknown under test_unknown_batch_size); sequence
    # modules get [B, T, F] examples and transpose them to time-major.
    Descriptor("VanillaRNN", lambda: snt.VanillaRNN(4), (2, 3),
               call=lambda m, x: m(x, m.initial_state(tf.shape(x)[0]))),
    Descriptor("LSTM", lambda: snt.LSTM(4), (2, 3),
               call=lambda m, x: m(x, m.initial_state(tf.shape(x)[0]))),
    Descriptor("LSTM_projection",
               lambda: snt.LSTM(4, projection_size=2, forget_bias=0.5),
               (2, 3), call=lambda m, x: m(x, m.initial_state(tf.shape(x)[0]))),
    Descriptor("LSTM_recurrent_dropout_0",  # Outputs and LSTM state (no None).
               lambda: snt.lstm_with_recurrent_dropout(4, dropout=0.)[0],
               (2, 3), call=lambda m, x: (lambda o, s: (o, s[0]))(
                   *m(x, m.initial_state(tf.shape(x)[0])))),
    Descriptor("GRU", lambda: snt.GRU(4), (2, 3),
               call=lambda m, x: m(x, m.initial_state(tf.shape(x)[0]))),
    Descriptor("DeepRNN",
               lambda: snt.DeepRNN([snt.LSTM(4), tf.nn.relu, snt.GRU(3)]),
               (2, 3), call=lambda m, x: m(x, m.initial_state(tf.shape(x)[0]))),
    Descriptor("DeepRNN_skip",
               lambda: snt.deep_rnn_with_skip_connections(
                   [snt.LSTM(4), snt.GRU(3)]),
               (2, 3), call=lambda m, x: m(x, m.initial_state(tf.shape(x)[0]))),
    Descriptor("DeepRNN_residual",
               lambda: snt.deep_rnn_with_residual_connections(
                   [snt.GRU(3), snt.VanillaRNN(3)]),
               (2, 3), call=lambda m, x: m(x, m.initial_state(tf.shape(x)[0]))),
    Descriptor("Conv1DLSTM", lambda: snt.Conv1DLSTM([6, 2], 3, 3), (2, 6, 2),
               call=lambda m, x: m(x, m.initial_state(tf.shape(x)[0]))),
    Descriptor("Conv2DLSTM", lambda: snt.Conv2DLSTM([4, 4, 2], 3, 3),
               (2, 4, 4, 2),
               call=lambda m, x: m(x, m.initial_state(tf.shape(x)[0]))),
    Descriptor("Conv3DLSTM", lambda: snt.Conv3DLSTM([3, 3, 3, 2], 2, 3),
               (2, 3, 3, 3, 2),
               call=lambda m, x: m(x, m.initial_state(tf.shape(x)[0]))),
    Descriptor("TrainableState",
               lambda: snt.TrainableState(
                   (tf.random.normal([3]), tf.random.normal([2, 2]))),
               (2, 3), call=lambda m, x: m(tf.shape(x)[0])),
    Descriptor("UnrolledLSTM", lambda: snt.UnrolledLSTM(4), (2, 5, 3),
               call=lambda m, x: m(tf.transpose(x, [1, 0, 2]),
                                   m.initial_state(tf.shape(x)[0]))),
    Descriptor("LSTM_dynamic_unroll_masked", lambda: snt.LSTM(4), (2, 5, 3),
               call=lambda m, x: snt.dynamic_unroll(
                   m, tf.transpose(x, [1, 0, 2]),
                   m.initial_state(tf.shape(x)[0]),
                   sequence_length=tf.range(tf.shape(x)[0]) + 3)),
    Descriptor("GRU_static_unroll", lambda: snt.GRU(4), (2, 5, 3),
               call=lambda m, x: snt.static_unroll(
                   m, tf.transpose(x, [1, 0, 2]),
                   m.initial_state(tf.shape(x)[0]))),
    Descriptor("DeepRNN_dynamic_unroll",
               lambda: snt.DeepRNN([snt.LSTM(4), snt.GRU(3)]), (2, 5, 3),
               call=lambda m, x: snt.dynamic_unroll(
                   m, tf.transpose(x, [1, 0, 2]),
                   m.initial_state(tf.shape(x)[0]))),
    # --- other modules ---
    Descriptor("Bias", lambda: snt.Bias(b_init=snt.initializers.Ones()),
               (2, 3, 4)),
    Descriptor("Bias_last_axis",
               lambda: snt.Bias(bias_dims=[-1],
                                b_init=snt.initializers.RandomNormal()),
               (2, 3, 4)),
    Descriptor("BatchApply_Linear", lambda: snt.BatchApply(snt.Linear(3)),
               (2, 5, 4)),
    Descriptor("Embed", lambda: snt.Embed(vocab_size=10, embed_dim=3),
               (2, 5), dtype=tf.int32,
               # Valid, varied ids from the (small, truncated) example ints.
               call=lambda m, x: m(tf.math.floormod(
                   x + tf.range(tf.shape(x)[-1]), 10))),
    Descriptor("Embed_dense_gradients",
               lambda: snt.Embed(vocab_size=4, embed_dim=2,
                                 densify_gradients=True),
               (3,), dtype=tf.int64,
               call=lambda m, x: m(tf.math.floormod(x, 4))),
    Descriptor("Deferred_Linear",
               lambda: snt.Deferred(lambda: snt.Linear(3)), (2, 4)),
    # --- optimizers ---
    # Metrics accumulate across calls and fix the full value shape (batch
    # included) on their first update. Summing over the batch, and resetting
    # after a first update (which builds or restores the state), makes each
    # call repeatable and batch-size independent.
    Descriptor("Sum", lambda: snt.Sum(), (3, 4),
               call=lambda m, x: _fresh_metric(m, x)),
    Descriptor("Mean", lambda: snt.Mean(), (3, 2, 2),
               call=lambda m, x: _fresh_metric(m, x)),
]

# Modules dm-sonnet 2.0.2 does not have (the attention family, NatureCNN). The
# same cross-cutting checks run on them from
# `tests/test_conformance_not_in_sonnet.py`; they stay out of `DESCRIPTORS`
# because the dm-sonnet comparisons (`test_side_by_side.py`, the outside
# probes) run every row of it in both libraries, and here there is nothing
# to compare with.
NOT_IN_SONNET_ROWS: list[Descriptor] = [
    # One row for every option: self-attention, causal, a padding mask,
    # grouped-query heads, rotary positions, chunks of 2 keys.
    Descriptor("MultiHeadAttention_causal_masked_gqa_rotary_chunked",
               lambda: snt.MultiHeadAttention(
                   4, 2, num_kv_heads=2, causal=True, rotary=True,
                   chunk_size=2), (2, 3, 4),
               call=lambda m, x: m(x, mask=tf.sequence_mask(
                   tf.fill(tf.shape(x)[:1], 2), 3))),
    Descriptor("RotaryEmbedding", lambda: snt.RotaryEmbedding(),
               (2, 3, 2, 4)),
    Descriptor("RMSNorm", lambda: snt.RMSNorm(), (2, 4)),
    # Its Transformer has RMSNorms, rotary attention and the MLP.
    Descriptor("TransformerLM", lambda: snt.nets.TransformerLM(
        7, 1, 2, 4, norm="rms", max_length=5), (2, 3),
               dtype=tf.int32, call=lambda m, x: m(tf.math.floormod(x, 7))),
    # The DQN Nature network; 36x36 is the smallest input its three VALID
    # convolutions take.
    Descriptor("NatureCNN",
               lambda: snt.nets.NatureCNN(3, hidden_size=8), (2, 36, 36, 4)),
    Descriptor("NatureCNN_uint8_features",
               lambda: snt.nets.NatureCNN(None, hidden_size=8),
               (2, 36, 36, 4), call=lambda m, x: m(
                   tf.cast(tf.clip_by_value(x * 64 + 128, 0, 255), tf.uint8))),
]

_NOT_IN_SONNET = ("not in dm-sonnet 2.0.2: its row is in NOT_IN_SONNET_ROWS "
                  "(tests/test_conformance_not_in_sonnet.py).")

# Public Module subclasses that the table does not instantiate, and why.
NOT_DESCRIBED: dict[str, str] = {
    **{name: _NOT_IN_SONNET for name in ("MultiHeadAttention",
                                         "RotaryEmbedding", "RMSNorm",
                                         "TransformerLM", "NatureCNN")},
    "Module": "the abstract base class; every row exercises it.",
    # --- optimizers ---
    "Metric": "abstract base of Sum and Mean; their rows exercise it.",
    "Optimizer": "abstract base of the optimizers.",
    **{name: ("not called on an input (apply(updates, parameters)); "
              "tests/optimizer_common.py covers tf.function, XLA, "
              "checkpoint and tf.distribute for each.")
       for name in ("SGD", "Momentum", "Adam", "RMSProp")},
    # --- nets / distribute (NOT_DESCRIBED) ---
    "ResNet50": ("ResNet with 3, 4, 6 and 3 blocks, whose code the ResNet rows "
                 "run; a row would build its 23.5M weights in each test "
                 "(about 2 minutes in all). tests/nets/test_resnet.py builds it "
                 "once against dm-sonnet."),
    "RNNCore": "abstract base of the recurrent cores; their rows exercise it.",
    "UnrolledRNN": "abstract base of UnrolledLSTM; its row exercises it.",
    "Transformer": ("the TransformerLM row of NOT_IN_SONNET_ROWS runs one "
                    "(every block, the final norm)."),
}


# --- Rows only `tests/test_side_by_side.py` runs. ---
# Variants of the modules above (several calls, unroll options, arguments at
# call time, functions) compared with dm-sonnet 2.0.2; `test_conformance.py`
# does not need them, so they stay out of `DESCRIPTORS` to keep it fast.


def _time_major(x: tf.Tensor) -> tf.Tensor:
  return tf.transpose(x, [1, 0, 2])


def _unroll(unroll: Callable[..., Any], **kwargs) -> Callable[[Any, Any], Any]:
  """`call` unrolling a core over a [B, T, F] example (time-major inside)."""
  return lambda m, x: unroll(m, _time_major(x), m.initial_state(x.shape[0]),
                             **kwargs)


def _lengths(x: tf.Tensor) -> tf.Tensor:
  return tf.constant([x.shape[1], 2] + [1] * (x.shape[0] - 2))


def _twice_then_eval(module: Any, x: tf.Tensor) -> Any:
  """Two training calls on different batches, then an evaluation."""
  module(x, is_training=True)
  module(x * 2. + 1., is_training=True)
  return module(x, is_training=False)


def _updates(metric: Any, x: tf.Tensor) -> Any:
  """`metric` updated with each row of `x` in turn; its value."""
  for row in tf.unstack(x):
    metric.update(row)
  return metric.value


def _ema_steps(ema: Any, x: tf.Tensor) -> Any:
  return [ema(row) for row in tf.unstack(x)]


SIDE_BY_SIDE_ROWS: list[Descriptor] = [
    # --- recurrent ---
    Descriptor("VanillaRNN_relu_b_init",
               lambda: snt.VanillaRNN(
                   4, activation=tf.nn.relu,
                   b_init=snt.initializers.Constant(0.5)), (2, 3),
               call=lambda m, x: m(x, m.initial_state(x.shape[0]))),
    Descriptor("LSTM_initial_state", lambda: snt.LSTM(4, projection_size=2),
               (3, 2), call=lambda m, x: m.initial_state(x.shape[0])),
    Descriptor("GRU_initial_state", lambda: snt.GRU(4), (3, 2),
               call=lambda m, x: m.initial_state(x.shape[0])),
    Descriptor("DeepRNN_initial_state",
               lambda: snt.DeepRNN([snt.LSTM(4), snt.GRU(3)]), (3, 2),
               call=lambda m, x: m.initial_state(x.shape[0])),
    Descriptor("Conv2DLSTM_initial_state",
               lambda: snt.Conv2DLSTM([4, 4, 2], 3, 3), (3, 2),
               call=lambda m, x: m.initial_state(x.shape[0])),
    Descriptor("LSTM_static_unroll_lengths", lambda: snt.LSTM(4), (3, 4, 2),
               call=lambda m, x: _unroll(snt.static_unroll,
                                         sequence_length=_lengths(x))(m, x)),
    Descriptor("GRU_dynamic_unroll_lengths_options", lambda: snt.GRU(3),
               (3, 4, 2),
               call=lambda m, x: _unroll(
                   snt.dynamic_unroll, sequence_length=_lengths(x),
                   parallel_iterations=2, swap_memory=True)(m, x)),
    Descriptor("VanillaRNN_dynamic_unroll", lambda: snt.VanillaRNN(3),
               (2, 4, 2), call=_unroll(snt.dynamic_unroll)),
    Descriptor("DeepRNN_skip_static_unroll_lengths",
               lambda: snt.deep_rnn_with_skip_connections(
                   [snt.LSTM(4), snt.VanillaRNN(3)],
                   concat_final_output=False), (3, 4, 2),
               call=lambda m, x: _unroll(snt.static_unroll,
                                         sequence_length=_lengths(x))(m, x)),
    Descriptor("Conv1DLSTM_dynamic_unroll",
               lambda: snt.Conv1DLSTM([5, 2], 2, 3, forget_bias=0.5),
               (2, 3, 5, 2),
               call=lambda m, x: snt.dynamic_unroll(
                   m, tf.transpose(x, [1, 0, 2, 3]),
                   m.initial_state(x.shape[0]))),
    Descriptor("Conv2DLSTM_NCHW_static_unroll",
               lambda: snt.Conv2DLSTM([2, 3, 3], 2, 2, data_format="NCHW"),
               (2, 3, 2, 3, 3),
               call=lambda m, x: snt.static_unroll(
                   m, tf.transpose(x, [1, 0, 2, 3, 4]),
                   m.initial_state(x.shape[0]))),
    Descriptor("lstm_with_recurrent_dropout_eval_core",
               lambda: snt.lstm_with_recurrent_dropout(4, dropout=0.5)[1],
               (2, 5, 3), call=_unroll(snt.dynamic_unroll)),
    Descriptor("UnrolledLSTM_forget_bias",
               lambda: snt.UnrolledLSTM(3, forget_bias=0.2), (2, 4, 3),
               call=lambda m, x: m(_time_major(x),
                                   m.initial_state(x.shape[0]))),
    Descriptor("TrainableState_for_core",
               lambda: snt.TrainableState.for_core(snt.LSTM(3)), (2, 3),
               call=lambda m, x: m(x.shape[0])),
    Descriptor("TrainableState_nested_mask",
               lambda: snt.TrainableState(
                   {"a": tf.ones([2]), "b": tf.zeros([1, 3])},
                   mask={"a": True, "b": False}), (3, 2),
               call=lambda m, x: m(x.shape[0])),
    # --- normalization ---
    Descriptor("BatchNorm_rank3_twice_then_eval",
               lambda: snt.BatchNorm(True, True, decay_rate=0.5), (4, 3, 2),
               call=_twice_then_eval),
    Descriptor("BatchNorm_nhwc_twice_then_eval",
               lambda: snt.BatchNorm(True, False, decay_rate=0.5),
               (2, 3, 3, 4), call=_twice_then_eval),
    Descriptor("BatchNorm_nchw_twice_then_eval",
               lambda: snt.BatchNorm(False, True, decay_rate=0.5,
                                     data_format="channels_first"),
               (2, 4, 3, 3), call=_twice_then_eval),
    Descriptor("BatchNorm_float64_twice_then_eval",
               lambda: snt.BatchNorm(True, True, decay_rate=0.5, eps=1e-3),
               (5, 3), dtype=tf.float64, call=_twice_then_eval),
    Descriptor("BatchNorm_scale_offset_at_call",
               lambda: snt.BatchNorm(False, False), (3, 4),
               call=lambda m, x: m(x, is_training=True, scale=x[0] + 2.,
                                   offset=x[1])),
    Descriptor("BatchNorm_test_local_stats",
               lambda: snt.BatchNorm(True, True), (3, 2, 2, 4),
               call=lambda m, x: m(x, is_training=False,
                                   test_local_stats=True)),
    Descriptor("CrossReplicaBatchNorm_rank3_twice_then_eval",
               lambda: snt.distribute.CrossReplicaBatchNorm(
                   True, True, snt.ExponentialMovingAverage(0.5),
                   snt.ExponentialMovingAverage(0.5)), (4, 3, 2),
               call=_twice_then_eval),
    Descriptor("CrossReplicaBatchNorm_nhwc_twice_then_eval",
               lambda: snt.distribute.CrossReplicaBatchNorm(
                   True, True, snt.ExponentialMovingAverage(0.5),
                   snt.ExponentialMovingAverage(0.5)), (2, 3, 3, 4),
               call=_twice_then_eval),
    Descriptor("LayerNorm_channels_first_eps",
               lambda: snt.LayerNorm(1, True, True, eps=1e-2,
                                     data_format="channels_first"),
               (2, 4, 3)),
    Descriptor("LayerNorm_axis_list_scale_at_call",
               lambda: snt.LayerNorm([1, 2], False, False), (2, 3, 4),
               call=lambda m, x: m(x, scale=x[0] + 1., offset=x[1])),
    Descriptor("LayerNorm_float64", lambda: snt.LayerNorm(-1, True, True),
               (2, 5), dtype=tf.float64),
    Descriptor("InstanceNorm_rank3", lambda: snt.InstanceNorm(True, False),
               (2, 5, 3)),
    Descriptor("GroupNorm_axis_slice_eps",
               lambda: snt.GroupNorm(2, axis=slice(1, -1), eps=1e-2),
               (2, 3, 4, 4)),
    Descriptor("GroupNorm_rank5_no_scale_offset",
               lambda: snt.GroupNorm(2, create_scale=False,
                                     create_offset=False), (2, 2, 2, 3, 4)),
    Descriptor("ExponentialMovingAverage_steps",
               lambda: snt.ExponentialMovingAverage(0.7), (4, 3),
               call=_ema_steps),
    Descriptor("Sum_updates", lambda: snt.Sum(), (4, 3), call=_updates),
    Descriptor("Mean_updates", lambda: snt.Mean(), (4, 3), call=_updates),
    # --- reshape, batch apply ---
    Descriptor("Reshape_preserve3_wildcard_middle",
               lambda: snt.Reshape((2, -1, 2), preserve_dims=3),
               (2, 3, 2, 4, 2)),
    Descriptor("Flatten_preserve2", lambda: snt.Flatten(preserve_dims=2),
               (2, 3, 2, 2)),
    Descriptor("BatchApply_num_dims3",
               lambda: snt.BatchApply(snt.Linear(2), num_dims=3),
               (2, 3, 2, 4)),
    Descriptor("BatchApply_nested_and_kwargs",
               lambda: snt.BatchApply(
                   lambda a, b, scale: (a * scale, {"s": a + b})), (2, 3, 4),
               call=lambda m, x: m(x, tf.ones([2, 3, 1]), scale=2.)),
    Descriptor("merge_and_split_leading_dims",
               lambda: (snt.merge_leading_dims, snt.split_leading_dim),
               (2, 3, 4),
               call=lambda fs, x: fs[1](fs[0](x, 2), x, 2)),
    # --- others ---
    Descriptor("Embed_existing_vocab_not_trainable",
               lambda: snt.Embed(existing_vocab=tf.reshape(tf.range(12.),
                                                           [4, 3]),
                                 trainable=False), (2, 3), dtype=tf.int32,
               call=lambda m, x: m(tf.math.floormod(x, 4))),
    Descriptor("Bias_output_size",
               lambda: snt.Bias(output_size=(3, 4),
                                b_init=snt.initializers.Constant(0.5)),
               (2, 3, 4)),
    Descriptor("Linear_custom_initializers",
               lambda: snt.Linear(3, w_init=snt.initializers.Identity(),
                                  b_init=snt.initializers.Constant(0.25)),
               (2, 3), call=lambda m, x: m(x)),
    Descriptor("Dropout_seeded_train", lambda: snt.Dropout(0.5, seed=3),
               (4, 5), call=lambda m, x: m(x, is_training=True)),
    Descriptor("Dropout_noise_shape",
               lambda: snt.Dropout(0.5, noise_shape=[4, 1], seed=2), (4, 5),
               call=lambda m, x: m(x, is_training=True)),
    Descriptor("leaky_clip_by_value",
               lambda: snt.leaky_clip_by_value, (2, 4),
               call=lambda f, x: f(x, -0.5, 0.5)),
    Descriptor("scale_gradient", lambda: snt.scale_gradient, (2, 4),
               call=lambda f, x: f(x, 0.5)),
    Descriptor("Deferred_call_methods",
               lambda: snt.Deferred(lambda: snt.Linear(3),
                                    call_methods=("__call__",)), (2, 4)),
    Descriptor("Sequential_functions_only",
               lambda: snt.Sequential([tf.nn.relu, lambda t: (t, t * 2.),
                                       lambda p: p[0] + p[1]]), (2, 3)),
]
