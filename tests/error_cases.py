"""The same mistakes, made with either library: a table for side-by-side tests.

Each `ErrorCase` builds something with `snt` (sonnet_like or dm-sonnet
2.0.2, passed in) and then misuses it. `tests/test_side_by_side.py` runs each
case with both libraries and checks that we raise where Sonnet raises, at the
same moment (construction or use), with the same exception type or a
subclass, with Sonnet's key phrase (`phrase`, which must be in both messages)
and with our module's name (`who`) in our message. Where we differ on
purpose, the case is named in one of the tables at the end, with the reason.
"""

import dataclasses
from typing import Any, Callable

import numpy as np
import tensorflow as tf


def x(*shape: int, dtype: tf.DType = tf.float32) -> tf.Tensor:
  return tf.constant(np.random.default_rng(0).normal(size=shape), dtype=dtype)


def built(module: Any, *shape: int, **kwargs) -> Any:
  """`module`, called once on an example of `shape`."""
  module(x(*shape), **kwargs)
  return module


def _state(core: Any, batch: int = 2) -> Any:
  return core.initial_state(batch)


def _three() -> tf.Tensor:
  return tf.constant([3, 3, 3])


def _step_twice(core: Any, first: tf.Tensor, second: tf.Tensor) -> None:
  core(first, _state(core))
  core(second, _state(core))


def _trace(module: Any, *shape: int | None) -> None:
  tf.function(module).get_concrete_function(tf.TensorSpec(shape))


def _no_super(snt: Any) -> Any:
  class NoSuper(snt.Module):
    def __init__(self):  # pylint: disable=super-init-not-called
      self.method()

    def method(self):
      pass
  return NoSuper()


def _never_super(snt: Any) -> Any:
  class NeverSuper(snt.Module):
    def __init__(self):  # pylint: disable=super-init-not-called
      pass
  return NeverSuper()


@dataclasses.dataclass(frozen=True)
class ErrorCase:
  """A mistake made in two steps.

  Attributes:
    name: Test id.
    build: `build(snt)` -> an object (the construction step; may raise).
    use: `use(snt, obj)`, the misuse; None if the mistake is in `build`.
    phrase: Sonnet's key phrase, in both messages; None where Sonnet's
      message comes from a TensorFlow kernel or Python itself.
    who: What our message must name (the module class or function); by
      default the start of `name`. None where both libraries pass on
      TensorFlow's own error (e.g. a value that an int tensor cannot hold).
  """
  name: str
  build: Callable[[Any], Any]
  use: Callable[[Any, Any], Any] | None = None
  phrase: str | None = None
  who: str | None = ""

  @property
  def owner(self) -> str:
    if self.who is None:
      return ""
    return self.who or self.name.split("_")[0]


def _case(name, build, use=None, phrase=None, who=""):
  return ErrorCase(name, build, use, phrase, who)


_B_INIT = "When not using a bias the b_init must be None"
_RESHAPE = "Input to reshape is a tensor with"
_PER_DIM = "must be a scalar or sequence of length 1 or sequence of length 3"
_NO_IS_TRAINING = "missing 1 required positional argument: 'is_training'"
_RANK_CHANGE = "The rank of the inputs cannot change between calls"
_AXIS = "`axis` should be an int, slice or iterable of ints"
_SCALE_INIT = "Cannot set `scale_init` if `create_scale=False`"
_OFFSET_INIT = "Cannot set `offset_init` if `create_offset=False`"
_PASS_SCALE = "Cannot pass `scale` at call time if `create_scale=True`."
_CHANNELS_UNKNOWN = "The number of input channels must be known"
_FLOAT = "Expected floating point type, got"
_NUMERIC = "Expected integer or floating point type, got"
_2D = "The tensor to initialize must be at least two-dimensional"


def _zeros(snt):
  return snt.initializers.Zeros()


def _conv_nd_transpose(snt, *args, **kwargs):
  """`ConvNDTranspose` (public in neither library's top level)."""
  if snt.__name__ == "sonnet":
    from sonnet.src import conv_transpose  # pylint: disable=g-import-not-at-top
  else:
    from sonnet_like.modules import conv_transpose  # pylint: disable=g-import-not-at-top
  return conv_transpose.ConvNDTranspose(*args, **kwargs)


def _ones(snt):
  return snt.initializers.Ones()


CASES: list[ErrorCase] = [
    # --- linear ---
    _case("Linear_size", lambda snt: built(snt.Linear(3), 2, 4),
          lambda snt, m: m(x(2, 5))),
    _case("Linear_rank1", lambda snt: snt.Linear(3),
          lambda snt, m: m(x(4)), "must have rank >= 2"),
    _case("Linear_int", lambda snt: snt.Linear(3),
          lambda snt, m: m(tf.ones([2, 4], tf.int32)), _FLOAT),
    _case("Linear_dtype_after_build", lambda snt: built(snt.Linear(3), 2, 4),
          lambda snt, m: m(x(2, 4, dtype=tf.float64))),
    _case("Linear_unknown_size", lambda snt: snt.Linear(3),
          lambda snt, m: _trace(m, 2, None),
          "Input size must be specified at module build time"),
    _case("Linear_b_init_no_bias",
          lambda snt: snt.Linear(3, with_bias=False, b_init=_zeros(snt)),
          phrase=_B_INIT),
    # --- conv family ---
    _case("Conv2D_rank3", lambda snt: snt.Conv2D(3, 3),
          lambda snt, m: m(x(2, 6, 6)), "must have rank 4"),
    _case("Conv2D_channels", lambda snt: built(snt.Conv2D(3, 3), 2, 6, 6, 2),
          lambda snt, m: m(x(2, 6, 6, 4))),
    _case("Conv2D_int", lambda snt: snt.Conv2D(3, 3),
          lambda snt, m: m(tf.ones([2, 6, 6, 2], tf.int32)), _FLOAT),
    _case("Conv2D_unknown_channels", lambda snt: snt.Conv2D(3, 3),
          lambda snt, m: _trace(m, 2, 6, 6, None), _CHANNELS_UNKNOWN),
    _case("Conv2D_bad_data_format",
          lambda snt: snt.Conv2D(3, 3, data_format="NWHC"),
          lambda snt, m: m(x(2, 6, 6, 2))),
    _case("Conv2D_bad_kernel_length", lambda snt: snt.Conv2D(3, (3, 3, 3)),
          lambda snt, m: m(x(2, 6, 6, 2)),
          "must be a scalar or sequence of length 1 or sequence of length 2"),
    _case("Conv2D_b_init_no_bias",
          lambda snt: snt.Conv2D(3, 3, with_bias=False, b_init=_zeros(snt)),
          phrase=_B_INIT),
    _case("Conv1D_rank4", lambda snt: snt.Conv1D(3, 3),
          lambda snt, m: m(x(2, 6, 6, 2)), "must have rank 3"),
    _case("Conv3D_rank4", lambda snt: snt.Conv3D(3, 3),
          lambda snt, m: m(x(2, 6, 6, 2)), "must have rank 5"),
    _case("Conv2DTranspose_rank3", lambda snt: snt.Conv2DTranspose(3, 3),
          lambda snt, m: m(x(2, 6, 2)), "must have rank 4"),
    _case("Conv2DTranspose_channels",
          lambda snt: built(snt.Conv2DTranspose(3, 3), 2, 4, 4, 2),
          lambda snt, m: m(x(2, 4, 4, 3))),
    _case("Conv2DTranspose_padding_function",
          lambda snt: snt.Conv2DTranspose(3, 3, padding=snt.pad.causal),
          phrase="only takes string padding"),
    _case("Conv2DTranspose_output_shape_length",
          lambda snt: snt.Conv2DTranspose(3, 3, output_shape=(4,)),
          lambda snt, m: m(x(2, 4, 4, 2)),
          "The output_shape must be of length 2 but instead was 1"),
    _case("Conv2DTranspose_unknown_channels",
          lambda snt: snt.Conv2DTranspose(3, 3),
          lambda snt, m: _trace(m, 2, 6, 6, None), _CHANNELS_UNKNOWN),
    _case("Conv2DTranspose_b_init_no_bias",
          lambda snt: snt.Conv2DTranspose(3, 3, with_bias=False,
                                          b_init=_zeros(snt)),
          phrase=_B_INIT),
    _case("DepthwiseConv2D_rank3", lambda snt: snt.DepthwiseConv2D(3),
          lambda snt, m: m(x(2, 6, 3))),
    _case("DepthwiseConv2D_channels",
          lambda snt: built(snt.DepthwiseConv2D(3), 2, 6, 6, 3),
          lambda snt, m: m(x(2, 6, 6, 4))),
    _case("DepthwiseConv2D_unknown_channels",
          lambda snt: snt.DepthwiseConv2D(3),
          lambda snt, m: _trace(m, 2, 6, 6, None), _CHANNELS_UNKNOWN),
    _case("DepthwiseConv2D_b_init_no_bias",
          lambda snt: snt.DepthwiseConv2D(3, with_bias=False,
                                          b_init=_zeros(snt)),
          phrase=_B_INIT),
    # --- batch norm ---
    _case("BatchNorm_channels",
          lambda snt: built(snt.BatchNorm(True, True), 3, 4, is_training=True),
          lambda snt, m: m(x(3, 5), is_training=True)),
    _case("BatchNorm_no_is_training", lambda snt: snt.BatchNorm(True, True),
          lambda snt, m: m(x(3, 4)), _NO_IS_TRAINING),
    _case("BatchNorm_scale_init",
          lambda snt: snt.BatchNorm(False, True, scale_init=_ones(snt)),
          phrase=_SCALE_INIT),
    _case("BatchNorm_offset_init",
          lambda snt: snt.BatchNorm(True, False, offset_init=_ones(snt)),
          phrase=_OFFSET_INIT),
    _case("BatchNorm_pass_scale", lambda snt: snt.BatchNorm(True, True),
          lambda snt, m: m(x(3, 4), is_training=True, scale=tf.ones([4])),
          _PASS_SCALE),
    _case("BatchNorm_rank_change",
          lambda snt: built(snt.BatchNorm(True, True), 3, 4, is_training=True),
          lambda snt, m: m(x(3, 2, 4), is_training=True)),
    _case("BatchNorm_bad_data_format",
          lambda snt: snt.BatchNorm(True, True, data_format="XYZ"),
          lambda snt, m: m(x(3, 4), is_training=True),
          "Unable to extract channel information from 'XYZ'"),
    # --- axis norm, group norm ---
    _case("LayerNorm_rank_change",
          lambda snt: built(snt.LayerNorm(-1, True, True), 2, 4),
          lambda snt, m: m(x(2, 3, 4)), _RANK_CHANGE),
    _case("LayerNorm_size_change",
          lambda snt: built(snt.LayerNorm(-1, True, True), 2, 4),
          lambda snt, m: m(x(2, 5))),
    _case("LayerNorm_axis_type", lambda snt: snt.LayerNorm("a", True, True),
          phrase=_AXIS),
    _case("LayerNorm_scale_init",
          lambda snt: snt.LayerNorm(-1, False, True, scale_init=_ones(snt)),
          phrase=_SCALE_INIT),
    _case("LayerNorm_pass_scale", lambda snt: snt.LayerNorm(-1, True, True),
          lambda snt, m: m(x(2, 4), scale=tf.ones([4])), _PASS_SCALE),
    _case("LayerNorm_int", lambda snt: snt.LayerNorm(-1, True, True),
          lambda snt, m: m(tf.ones([2, 4], tf.int32))),
    _case("InstanceNorm_rank_change",
          lambda snt: built(snt.InstanceNorm(True, True), 2, 3, 3, 4),
          lambda snt, m: m(x(2, 3, 4)), _RANK_CHANGE),
    _case("GroupNorm_divisible", lambda snt: snt.GroupNorm(3),
          lambda snt, m: m(x(2, 3, 3, 4)),
          "The number of channels must be divisible by the number of groups, "
          "was channels = 4, groups = 3"),
    _case("GroupNorm_rank_change",
          lambda snt: built(snt.GroupNorm(2), 2, 3, 3, 4),
          lambda snt, m: m(x(2, 3, 4)), _RANK_CHANGE),
    _case("GroupNorm_axis_type", lambda snt: snt.GroupNorm(2, axis="a"),
          phrase=_AXIS),
    _case("GroupNorm_scale_init",
          lambda snt: snt.GroupNorm(2, create_scale=False,
                                    scale_init=_ones(snt)),
          phrase=_SCALE_INIT),
    _case("GroupNorm_pass_scale", lambda snt: snt.GroupNorm(2),
          lambda snt, m: m(x(2, 4), scale=tf.ones([4])), _PASS_SCALE),
    _case("GroupNorm_channels_change",
          lambda snt: built(snt.GroupNorm(2), 2, 4),
          lambda snt, m: m(x(2, 6))),
    # --- dropout, reshape ---
    _case("Dropout_rate", lambda snt: snt.Dropout(1.5),
          lambda snt, m: m(x(2, 3), is_training=True), "[0, 1)"),
    _case("Dropout_no_is_training", lambda snt: snt.Dropout(0.5),
          lambda snt, m: m(x(2, 4)), _NO_IS_TRAINING),
    _case("Dropout_int", lambda snt: snt.Dropout(0.5),
          lambda snt, m: m(tf.ones([2, 4], tf.int32), is_training=True)),
    _case("Reshape_preserve_dims_0",
          lambda snt: snt.Reshape((2,), preserve_dims=0),
          phrase="preserve_dims"),
    _case("Reshape_preserve_dims_above_rank",
          lambda snt: snt.Reshape((2,), preserve_dims=3),
          lambda snt, m: m(x(2, 4)),
          "should have at least as many as preserve_dims=3"),
    _case("Reshape_incompatible", lambda snt: snt.Reshape((5,)),
          lambda snt, m: m(x(2, 3, 4)),
          f"{_RESHAPE} 24 values, but the requested shape has 10"),
    _case("Reshape_wildcard_incompatible", lambda snt: snt.Reshape((-1, 5)),
          lambda snt, m: m(x(2, 3, 4)),
          f"{_RESHAPE} 24 values, but the requested shape has 20"),
    _case("Reshape_two_wildcards", lambda snt: snt.Reshape((-1, -1)),
          lambda snt, m: m(x(2, 3, 4)), _RESHAPE),
    _case("Flatten_rank1", lambda snt: snt.Flatten(),
          lambda snt, m: m(x(4))),
    _case("Flatten_preserve_dims_above_rank",
          lambda snt: snt.Flatten(preserve_dims=3),
          lambda snt, m: m(x(2, 4)),
          "should have at least as many as preserve_dims=3"),
    # --- nets ---
    _case("MLP_size", lambda snt: built(snt.nets.MLP([4, 3]), 2, 5),
          lambda snt, m: m(x(2, 6)), who="mlp"),
    _case("MLP_is_training_needed",
          lambda snt: snt.nets.MLP([4, 3], dropout_rate=0.5),
          lambda snt, m: m(x(2, 5)),
          "The `is_training` argument is required when dropout is used."),
    _case("MLP_is_training_unused", lambda snt: snt.nets.MLP([4, 3]),
          lambda snt, m: m(x(2, 5), is_training=True),
          "The `is_training` argument should only be used with dropout."),
    _case("MLP_b_init_no_bias",
          lambda snt: snt.nets.MLP([4], with_bias=False, b_init=_zeros(snt)),
          phrase="b_init must not be set"),
    _case("VectorQuantizer_last_axis",
          lambda snt: snt.nets.VectorQuantizer(4, 6, 0.25),
          lambda snt, m: m(x(2, 3, 5), is_training=True)),
    _case("VectorQuantizerEMA_decay",
          lambda snt: snt.nets.VectorQuantizerEMA(4, 6, 0.25, decay=1.5),
          phrase="decay must be in range"),
    _case("Cifar10ConvNet_lengths",
          lambda snt: snt.nets.Cifar10ConvNet(output_channels=(4, 6),
                                              strides=(1,)),
          phrase="The length of `output_channels` and `strides` must be "
          "equal"),
    _case("Cifar10ConvNet_rank",
          lambda snt: snt.nets.Cifar10ConvNet(num_classes=3,
                                              output_channels=(4,),
                                              strides=(1,)),
          lambda snt, m: m(x(2, 8, 3), is_training=True), "must have rank 4"),
    _case("ResNet_blocks_length", lambda snt: snt.nets.ResNet([1, 1, 1], 3),
          phrase="`blocks_per_group_list` must be of length 4 not 3"),
    _case("ResNet_channels_length",
          lambda snt: snt.nets.ResNet([1, 1, 1, 1], 3,
                                      channels_per_group_list=(8, 8)),
          phrase="`channels_per_group_list` must be of length 4 not 2"),
    # --- bias, embed, batch apply ---
    _case("Bias_shape", lambda snt: built(snt.Bias(), 2, 3, 4),
          lambda snt, m: m(x(2, 3, 5))),
    _case("Bias_batch_axis", lambda snt: snt.Bias(bias_dims=[0]),
          lambda snt, m: m(x(2, 3)),
          "Cannot apply bias across the minibatch dimension"),
    _case("Bias_axis_out_of_range", lambda snt: snt.Bias(bias_dims=[3]),
          lambda snt, m: m(x(2, 3)), "out of range for input of rank 2"),
    _case("Bias_output_size", lambda snt: snt.Bias(output_size=(5,)),
          lambda snt, m: m(x(2, 3)), "Input shape must be (-1, 5) not (2, 3)"),
    _case("Embed_no_vocabulary", lambda snt: snt.Embed(),
          phrase="Must provide one of vocab_size or existing_vocab"),
    _case("Embed_both_vocabularies",
          lambda snt: snt.Embed(vocab_size=3,
                                existing_vocab=np.ones([3, 2], np.float32)),
          phrase="If `existing_vocab` is provided, none of `vocab_size`, "
          "`embedding_dim`, `initializer` are needed"),
    _case("Embed_float_ids", lambda snt: snt.Embed(10, 3),
          lambda snt, m: m(x(2, 3))),
    _case("Embed_out_of_range", lambda snt: snt.Embed(10, 3),
          lambda snt, m: m(tf.constant([[11]]))),
    _case("Embed_bad_vocab_size", lambda snt: snt.Embed(vocab_size=-1),
          phrase="Invalid vocab_size -1"),
    _case("BatchApply_no_tensor", lambda snt: snt.BatchApply(lambda: 1),
          lambda snt, m: m(), "requires at least one tensor input"),
    _case("BatchApply_rank", lambda snt: snt.BatchApply(snt.Linear(3)),
          lambda snt, m: m(x(4)), "must have rank >= 2", who="Linear"),
    _case("BatchApply_unknown_rank", lambda snt: snt.BatchApply(snt.Linear(3)),
          lambda snt, m: tf.function(m).get_concrete_function(
              tf.TensorSpec(None)),
          "Can't merge leading dimensions of tensor of unknown rank",
          who="merge_leading_dims"),
    # --- recurrent ---
    _case("LSTM_input_size", lambda snt: snt.LSTM(4),
          lambda snt, m: _step_twice(m, x(2, 3), x(2, 4))),
    _case("LSTM_int_input", lambda snt: snt.LSTM(4),
          lambda snt, m: m(tf.ones([2, 3], tf.int32), _state(m)),
          "inputs must have dtype tf.float32, got tf.int32"),
    _case("LSTM_float64_input", lambda snt: snt.LSTM(4),
          lambda snt, m: m(x(2, 3, dtype=tf.float64), _state(m)),
          "inputs must have dtype tf.float32, got tf.float64"),
    _case("LSTM_tuple_state", lambda snt: snt.LSTM(4),
          lambda snt, m: m(x(2, 3), tuple(_state(m)))),
    _case("LSTM_state_batch", lambda snt: snt.LSTM(4),
          lambda snt, m: m(x(2, 3), _state(m, 3))),
    _case("LSTM_projection_init",
          lambda snt: snt.LSTM(4, projection_init=_zeros(snt)),
          phrase="projection_init must be None when projection is not used"),
    _case("LSTM_rank3", lambda snt: snt.LSTM(4),
          lambda snt, m: m(x(2, 5, 3), _state(m)), "must have rank 2"),
    _case("GRU_input_size", lambda snt: snt.GRU(4),
          lambda snt, m: _step_twice(m, x(2, 3), x(2, 4))),
    _case("GRU_int_input", lambda snt: snt.GRU(4),
          lambda snt, m: m(tf.ones([2, 3], tf.int32), _state(m)),
          "inputs must have dtype tf.float32, got tf.int32"),
    _case("VanillaRNN_input_size", lambda snt: snt.VanillaRNN(4),
          lambda snt, m: _step_twice(m, x(2, 3), x(2, 4)), who="vanilla_rnn"),
    _case("VanillaRNN_state_size", lambda snt: snt.VanillaRNN(4),
          lambda snt, m: m(x(2, 3), tf.zeros([2, 5]))),
    _case("VanillaRNN_float64_input", lambda snt: snt.VanillaRNN(4),
          lambda snt, m: m(x(2, 3, dtype=tf.float64), _state(m)),
          "inputs must have dtype tf.float32, got tf.float64"),
    _case("Conv2DLSTM_spatial_shape",
          lambda snt: snt.Conv2DLSTM([4, 4, 2], 3, 3),
          lambda snt, m: m(x(2, 5, 5, 2), _state(m))),
    _case("Conv2DLSTM_channels", lambda snt: snt.Conv2DLSTM([4, 4, 2], 3, 3),
          lambda snt, m: _step_twice(m, x(2, 4, 4, 2), x(2, 4, 4, 3))),
    _case("UnrolledLSTM_input_size", lambda snt: snt.UnrolledLSTM(4),
          lambda snt, m: _step_twice(m, x(5, 2, 3), x(5, 2, 4))),
    _case("UnrolledLSTM_float64_input", lambda snt: snt.UnrolledLSTM(4),
          lambda snt, m: m(x(5, 2, 3, dtype=tf.float64), _state(m)),
          "inputs must have dtype tf.float32, got tf.float64"),
    _case("lstm_with_recurrent_dropout_rate",
          lambda snt: snt.lstm_with_recurrent_dropout(4, dropout=1.0),
          phrase="dropout must be in the range [0, 1), got 1.0"),
    _case("static_unroll_no_step", lambda snt: snt.LSTM(4),
          lambda snt, m: snt.static_unroll(m, x(0, 2, 3), _state(m)),
          "must have at least a single time step"),
    _case("dynamic_unroll_no_step", lambda snt: snt.LSTM(4),
          lambda snt, m: snt.dynamic_unroll(m, x(0, 2, 3), _state(m)),
          "must have at least a single time step"),
    _case("static_unroll_inconsistent", lambda snt: snt.LSTM(4),
          lambda snt, m: snt.static_unroll(m, (x(3, 2, 3), x(4, 2, 3)),
                                           _state(m)),
          "must have consistent number of time steps"),
    _case("dynamic_unroll_inconsistent", lambda snt: snt.LSTM(4),
          lambda snt, m: snt.dynamic_unroll(m, (x(3, 2, 3), x(4, 2, 3)),
                                            _state(m)),
          "must have consistent number of time steps"),
    _case("static_unroll_unknown_steps", lambda snt: snt.GRU(4),
          lambda snt, m: tf.function(
              lambda s: snt.static_unroll(m, s, tf.zeros([2, 4])))
          .get_concrete_function(tf.TensorSpec([None, 2, 3])),
          "must have a statically known number of time steps"),
    _case("deep_rnn_with_skip_connections_not_cores",
          lambda snt: snt.deep_rnn_with_skip_connections(
              [snt.LSTM(4), tf.nn.relu]),
          phrase="requires all layers to be instances of RNNCore"),
    _case("deep_rnn_with_residual_connections_not_cores",
          lambda snt: snt.deep_rnn_with_residual_connections(
              [snt.LSTM(4), tf.nn.relu]),
          phrase="requires all layers to be instances of RNNCore"),
    _case("DeepRNN_state_length",
          lambda snt: snt.DeepRNN([snt.LSTM(4), snt.GRU(3)]),
          lambda snt, m: m(x(2, 3), (_state(snt.LSTM(4)),))),
    _case("TrainableState_negative_batch",
          lambda snt: snt.TrainableState(tf.zeros([3])),
          lambda snt, m: m(tf.constant(-1))),
    # --- moving averages, metrics ---
    _case("ExponentialMovingAverage_shape",
          lambda snt: snt.ExponentialMovingAverage(0.9),
          lambda snt, m: (m(x(3)), m(x(4)))),
    _case("ExponentialMovingAverage_value_before_update",
          lambda snt: snt.ExponentialMovingAverage(0.9),
          lambda snt, m: m.value),
    _case("Sum_shape", lambda snt: snt.Sum(),
          lambda snt, m: (m(x(3)), m(x(4)))),
    _case("Mean_shape", lambda snt: snt.Mean(),
          lambda snt, m: (m(x(3)), m(x(4)))),
    _case("Sum_value_before_update", lambda snt: snt.Sum(),
          lambda snt, m: m.value),
    # --- optimizers ---
    *[case for cls, make in [
        ("SGD", lambda snt: snt.optimizers.SGD(0.1)),
        ("Adam", lambda snt: snt.optimizers.Adam(0.1)),
        ("Momentum", lambda snt: snt.optimizers.Momentum(0.1, 0.9)),
        ("RMSProp", lambda snt: snt.optimizers.RMSProp(0.1))]
      for case in [
          _case(f"{cls}_lengths", make,
                lambda snt, o: o.apply([tf.ones([2])],
                                       [tf.Variable([1., 2.]),
                                        tf.Variable([1.])]),
                "`updates` and `parameters` must be the same length."),
          _case(f"{cls}_lengths_no_parameters", make,
                lambda snt, o: o.apply([tf.ones([2])], []),
                "`updates` and `parameters` must be the same length."),
          _case(f"{cls}_empty", make, lambda snt, o: o.apply([], []),
                "`parameters` cannot be empty."),
          _case(f"{cls}_all_none", make,
                lambda snt, o: o.apply([None], [tf.Variable([1., 2.])]),
                "No updates provided for any parameter"),
          _case(f"{cls}_dtype", make,
                lambda snt, o: o.apply([tf.ones([2], tf.float64)],
                                       [tf.Variable([1., 2.])]),
                "DType of update"),
          _case(f"{cls}_shape", make,
                lambda snt, o: o.apply([tf.ones([3])],
                                       [tf.Variable([1., 2.])])),
      ]],
    # --- base, once, initializers, regularizers, containers ---
    _case("Module_bad_name", lambda snt: snt.Module(name="1abc"),
          phrase="'1abc' is not a valid module name. Module names must be "
          "valid Python identifiers"),
    _case("Module_no_variables", lambda snt: snt.Module(name="m"),
          lambda snt, m: m.variables,
          "does not currently contain any variables"),
    _case("Module_no_super_constructor", _no_super,
          phrase="The super constructor must be called before any other "
          "methods in your constructor", who="NoSuper"),
    _case("Module_super_constructor_never_called", _never_super,
          phrase="Constructing a snt.Module without calling the super "
          "constructor is not supported", who="NeverSuper"),
    _case("Constant_list", lambda snt: snt.initializers.Constant([1, 2]),
          phrase="Invalid type for value: <class 'list'> (expected scalar)"),
    _case("Orthogonal_rank1", lambda snt: snt.initializers.Orthogonal(),
          lambda snt, i: i([3], tf.float32), _2D),
    _case("Identity_rank1", lambda snt: snt.initializers.Identity(),
          lambda snt, i: i([3], tf.float32), _2D),
    _case("VarianceScaling_scale",
          lambda snt: snt.initializers.VarianceScaling(scale=-1.),
          phrase="`scale` must be positive float"),
    _case("VarianceScaling_mode",
          lambda snt: snt.initializers.VarianceScaling(mode="fan"),
          phrase="Invalid `mode` argument"),
    _case("VarianceScaling_distribution",
          lambda snt: snt.initializers.VarianceScaling(distribution="x"),
          phrase="Invalid `distribution` argument"),
    _case("RandomNormal_int", lambda snt: snt.initializers.RandomNormal(),
          lambda snt, i: i([3], tf.int32), _FLOAT),
    _case("TruncatedNormal_int", lambda snt: snt.initializers.TruncatedNormal(),
          lambda snt, i: i([3], tf.int32), _FLOAT),
    _case("RandomUniform_string", lambda snt: snt.initializers.RandomUniform(),
          lambda snt, i: i([3], tf.string), _NUMERIC),
    _case("L2_negative_scale", lambda snt: snt.regularizers.L2(-1.),
          phrase="scale must be >=0"),
    _case("L1_negative_scale", lambda snt: snt.regularizers.L1(-1.),
          phrase="scale must be >=0"),
    _case("once_returns_a_value", lambda snt: snt.once(lambda: 1),
          lambda snt, f: f(), "@snt.once decorated functions cannot return "
          "values", who="lambda"),
    _case("Sequential_not_callable", lambda snt: snt.Sequential([1]),
          lambda snt, m: m(x(2)), "'int' object is not callable"),
    _case("Deferred_attribute_before_call",
          lambda snt: snt.Deferred(lambda: snt.Linear(3)),
          lambda snt, m: m.foo, "'Deferred' object has no attribute 'foo'"),
    # --- second sweep: recurrent, normalization, reshape, optimizers ---
    _case("Sum_reset_before_update", lambda snt: snt.Sum(),
          lambda snt, m: m.reset()),
    _case("ExponentialMovingAverage_reset_before_update",
          lambda snt: snt.ExponentialMovingAverage(0.9),
          lambda snt, m: m.reset()),
    _case("ExponentialMovingAverage_float64_in_tf_function",
          lambda snt: snt.ExponentialMovingAverage(0.9),
          lambda snt, m: tf.function(m)(x(3, dtype=tf.float64))),
    _case("BatchNorm_eval_before_training",
          lambda snt: snt.BatchNorm(True, True),
          lambda snt, m: m(x(3, 4), is_training=False)),
    _case("BatchNorm_string_is_training", lambda snt: snt.BatchNorm(True, True),
          lambda snt, m: m(x(3, 4), is_training="False")),
    _case("Dropout_string_is_training", lambda snt: snt.Dropout(0.5),
          lambda snt, m: m(x(3, 4), is_training="False")),
    _case("Reshape_variables", lambda snt: built(snt.Reshape((-1,)), 2, 3, 4),
          lambda snt, m: m.variables, "does not currently contain any "
          "variables", who="Reshape"),
    _case("Dropout_variables", lambda snt: snt.Dropout(0.5),
          lambda snt, m: m.variables, "does not currently contain any "
          "variables", who="Dropout"),
    _case("Adam_same_shapes_other_parameters",
          lambda snt: snt.optimizers.Adam(0.1),
          lambda snt, o: [o.apply([tf.ones([2])], [tf.Variable([1., 2.])])
                          for _ in range(2)]),
    _case("Momentum_other_parameters",
          lambda snt: snt.optimizers.Momentum(0.1, 0.9),
          lambda snt, o: (
              o.apply([tf.ones([2])], [tf.Variable([1., 2.])]),
              o.apply([tf.ones([3])], [tf.Variable([1., 2., 3.])]))),
    _case("DepthwiseConv2D_stride_and_rate",
          lambda snt: snt.DepthwiseConv2D(3, stride=2, rate=2),
          lambda snt, m: m(x(2, 8, 8, 2))),
    _case("LSTM_state_size", lambda snt: snt.LSTM(4),
          lambda snt, m: m(x(2, 3), snt.LSTM(5).initial_state(2))),
    _case("GRU_state_size", lambda snt: snt.GRU(4),
          lambda snt, m: m(x(2, 3), tf.zeros([2, 5]))),
    _case("dynamic_unroll_sequence_length_size", lambda snt: snt.LSTM(4),
          lambda snt, m: snt.dynamic_unroll(m, x(3, 2, 3), _state(m),
                                            sequence_length=_three())),
    _case("static_unroll_sequence_length_size", lambda snt: snt.LSTM(4),
          lambda snt, m: snt.static_unroll(m, x(3, 2, 3), _state(m),
                                           sequence_length=_three())),
    _case("Conv1DLSTM_rank", lambda snt: snt.Conv1DLSTM([6, 2], 3, 3),
          lambda snt, m: m(x(2, 6), _state(m)), "must have rank 3"),
    _case("Conv2DLSTM_bad_data_format",
          lambda snt: snt.Conv2DLSTM([4, 4, 2], 3, 3, data_format="NWHC")),
    _case("UnrolledLSTM_rank", lambda snt: snt.UnrolledLSTM(4),
          lambda snt, m: m(x(2, 3), _state(m)), "must have rank 3"),
    _case("TrainableState_mask_structure",
          lambda snt: snt.TrainableState((tf.zeros([2]), tf.zeros([3])),
                                         mask=(True,))),
    _case("InstanceNorm_rank2", lambda snt: snt.InstanceNorm(True, True),
          lambda snt, m: m(x(2, 3))),
    _case("LayerNorm_axis_out_of_range",
          lambda snt: snt.LayerNorm(3, True, True),
          lambda snt, m: m(x(2, 3))),
    _case("GroupNorm_rank1", lambda snt: snt.GroupNorm(2),
          lambda snt, m: m(x(4))),
    _case("BatchNorm_rank1", lambda snt: snt.BatchNorm(True, True),
          lambda snt, m: m(x(4), is_training=True)),
    _case("BatchNorm_pass_offset", lambda snt: snt.BatchNorm(True, True),
          lambda snt, m: m(x(3, 4), is_training=True, offset=tf.ones([4])),
          "Cannot pass `offset` at call time if `create_offset=True`."),
    _case("BatchApply_num_dims_0",
          lambda snt: snt.BatchApply(snt.Linear(2), num_dims=0),
          lambda snt, m: m(x(2, 3))),
    _case("BatchApply_leading_dims_disagree",
          lambda snt: snt.BatchApply(lambda a, b: a + b),
          lambda snt, m: m(x(2, 3, 4), x(3, 2, 4))),
    _case("Reshape_output_shape_type", lambda snt: snt.Reshape("ab"),
          lambda snt, m: m(x(2, 3)),
          "Can't convert Python sequence with mixed types to Tensor"),
    _case("pad_create_kernel_length",
          lambda snt: snt.pad.create(snt.pad.same, [3, 3], 1, 3, -1),
          phrase=f"kernel {_PER_DIM}", who="pad.create"),
    _case("pad_create_rate_length",
          lambda snt: snt.pad.create(snt.pad.same, 3, [1, 2], 3, -1),
          phrase=f"rate {_PER_DIM}", who="pad.create"),
    _case("ConvNDTranspose_num_spatial_dims",
          lambda snt: _conv_nd_transpose(snt, 4, 3, 3, data_format="NHWC"),
          phrase="We only support transpose convolution operations for "
          "num_spatial_dims=1, 2 or 3, received num_spatial_dims=4"),
    _case("ConvNDTranspose_b_init_no_bias",
          lambda snt: _conv_nd_transpose(snt, 2, 3, 3, with_bias=False,
                                         b_init=_zeros(snt),
                                         data_format="NHWC"),
          phrase=_B_INIT),
    _case("ConvNDTranspose_output_shape_length",
          lambda snt: _conv_nd_transpose(snt, 2, 3, 3, output_shape=(4, 4, 4),
                                         data_format="NHWC"),
          lambda snt, m: m(x(2, 4, 4, 2)),
          "The output_shape must be of length 2 but instead was 3"),
    _case("Flatten_unknown_rank", lambda snt: snt.Flatten(),
          lambda snt, m: _trace(m, None)),
    _case("Adam_int_parameters", lambda snt: snt.optimizers.Adam(0.1),
          lambda snt, o: o.apply([tf.constant([1, 2])], [tf.Variable([1, 2])]),
          "Cannot convert 1.0 to EagerTensor of dtype int32", who=None),
    _case("Metric_abstract", lambda snt: snt.Metric(),
          phrase="Can't instantiate abstract class Metric", who="Metric"),
    _case("Optimizer_abstract", lambda snt: snt.Optimizer(),
          phrase="Can't instantiate abstract class Optimizer"),
    _case("RNNCore_abstract", lambda snt: snt.RNNCore(),
          phrase="Can't instantiate abstract class RNNCore"),
    _case("Linear_output_size_0", lambda snt: snt.Linear(0),
          lambda snt, m: m(x(2, 3))),
    _case("Embed_float_ids_2d", lambda snt: snt.Embed(10, 3),
          lambda snt, m: m(tf.constant([[1.5]]))),
    _case("Orthogonal_int", lambda snt: snt.initializers.Orthogonal(),
          lambda snt, i: i([2, 3], tf.int32), _FLOAT),
    _case("Constant_int_dtype", lambda snt: snt.initializers.Constant(1.5),
          lambda snt, i: i([2], tf.int32),
          "Cannot convert 1.5 to EagerTensor of dtype int32", who=None),
    _case("VarianceScaling_int", lambda snt: snt.initializers.VarianceScaling(),
          lambda snt, i: i([2, 3], tf.int32), _FLOAT),
    _case("Deferred_constructor_not_callable",
          lambda snt: snt.Deferred(lambda: 3), lambda snt, m: m(x(2))),
    _case("Conv1D_padding_string", lambda snt: snt.Conv1D(2, 3,
                                                          padding="CAUSAL"),
          lambda snt, m: m(x(2, 5, 2))),
    _case("Conv2D_padding_functions_length",
          lambda snt: snt.Conv2D(2, 3, padding=[snt.pad.same] * 3),
          lambda snt, m: m(x(2, 5, 5, 2))),
    _case("MLP_dropout_rate",
          lambda snt: snt.nets.MLP([2, 2], dropout_rate=1.5),
          lambda snt, m: m(x(2, 3), is_training=True)),
    _case("ResNet_unknown_bn_config_key",
          lambda snt: snt.nets.ResNet([1, 1, 1, 1], 3,
                                      bn_config={"decay_rate": 0.9, "bad": 1})),
]

# --- Where we differ on purpose (each checked to still differ). ---

# Ours raises when the module is constructed; Sonnet at its first call
# (where Sonnet's error comes from a TensorFlow kernel, ours is a ValueError).
EARLIER: dict[str, str] = {
    "Bias_batch_axis": "bias_dims are checked in __init__.",
    "Sequential_not_callable": "layers are checked in __init__.",
    "Conv2D_bad_data_format": "constructor arguments are checked in "
                              "__init__ (house rule); Sonnet fails in the "
                              "kernel.",
    "Conv2D_bad_kernel_length": "same: checked in __init__.",
    "Conv2DTranspose_output_shape_length": "same: checked in __init__.",
    "ConvNDTranspose_output_shape_length": "same: checked in __init__.",
    "Dropout_rate": "same: checked in __init__ (Sonnet: tf.nn.dropout).",
    "Reshape_two_wildcards": "same: checked in __init__ (Sonnet: a reshape "
                             "kernel error).",
    "Reshape_output_shape_type": "same (Sonnet: converting it to a tensor); "
                                 "ours ends with Sonnet's words.",
    "BatchApply_num_dims_0": "same (Sonnet: a TypeError from TensorShape).",
    "Conv1D_padding_string": "same (Sonnet: the kernel rejects 'CAUSAL').",
    "Conv2D_padding_functions_length": "same; a TypeError too, as Sonnet's.",
    "MLP_dropout_rate": "same (Sonnet: tf.nn.dropout at the first call).",
}

# Sonnet runs without an error (and computes something else); we raise.
OURS_ONLY: dict[str, str] = {
    "GroupNorm_channels_change": "inputs are checked against what the "
                                 "module was built for (BUILD_NOTES).",
    "VanillaRNN_state_size": "the state is checked against the core's "
                             "state size; Sonnet broadcasts it.",
    "BatchNorm_eval_before_training": "the moving statistics are still zero "
                                      "(Sonnet returns inputs / sqrt(eps)); "
                                      "BUILD_NOTES.",
    "BatchNorm_string_is_training": "'False' is truthy: Sonnet trains; ours "
                                    "asks for a bool (a TypeError).",
    "Dropout_string_is_training": "same as BatchNorm_string_is_training.",
    "DepthwiseConv2D_stride_and_rate": "TensorFlow computes wrong values "
                                       "there (Sonnet returns them).",
    "Conv2DLSTM_bad_data_format": "Sonnet treats anything but NCHW as NHWC.",
    "InstanceNorm_rank2": "no axis to normalize over; Sonnet returns the "
                          "offset.",
    "GroupNorm_rank1": "Sonnet normalizes a lone vector silently.",
    "BatchNorm_rank1": "Sonnet normalizes the batch axis away silently.",
    "BatchApply_leading_dims_disagree": "Sonnet merges [2, 3] and [3, 2] "
                                        "alike and adds rows of different "
                                        "examples.",
    "Linear_output_size_0": "sizes must be positive ints in every module "
                            "(Sonnet builds a [3, 0] weight).",
}

# Sonnet fails with an incidental Python or TensorFlow error; ours runs.
SONNET_ONLY: dict[str, str] = {
    "Sum_reset_before_update": "Sonnet: AttributeError on a None variable; "
                               "resetting a fresh metric is a no-op here.",
    "ExponentialMovingAverage_reset_before_update": "the same.",
    "ExponentialMovingAverage_float64_in_tf_function":
        "Sonnet: a float32 decay power meets float64 values (BUILD_NOTES).",
}

# Sonnet fails with an incidental Python error; ours is a ValueError that
# names the module and says what was expected.
OTHER_TYPE: dict[str, str] = {
    "LSTM_tuple_state": "Sonnet: AttributeError ('tuple' object has no "
                        "attribute 'hidden').",
    "ExponentialMovingAverage_value_before_update":
        "Sonnet: AttributeError ('NoneType' object has no attribute "
        "'read_value'): a property raising AttributeError would make "
        "hasattr() say False.",
    "Deferred_constructor_not_callable":
        "Sonnet: AttributeError ('int' object has no attribute 'target'); "
        "ours a TypeError naming the Deferred module.",
}
