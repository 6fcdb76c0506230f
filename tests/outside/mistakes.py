"""Probes: mistakes Sonnet 2 users make, and a few valid corner cases.

Where dm-sonnet raises, ours must raise the same type or a subclass (the
key phrases are checked in `tests/error_cases.py`); where dm-sonnet runs,
ours must run and give the same result.
"""

import numpy as np
import tensorflow as tf

from tests.outside import inputs
from tests.outside.framework import probe
from tests.outside.framework import registered


def _x(*shape, dtype=tf.float32):
  return inputs.sine(shape, dtype)


@probe("weights_before_first_call", mistake=True)
def _(snt):
  return snt.Linear(3).w


@probe("conv_weights_before_first_call", mistake=True)
def _(snt):
  return snt.Conv2D(3, 3).w


@probe("extra_positional_argument", mistake=True)
def _(snt):
  return snt.Linear(3)(_x(2, 4), _x(2, 4))


@probe("unknown_keyword_argument", mistake=True)
def _(snt):
  return snt.Linear(3)(_x(2, 4), training=True)


@probe("unknown_constructor_keyword", mistake=True)
def _(snt):
  return snt.Linear(3, use_bias=False)


@probe("missing_constructor_argument", mistake=True)
def _(snt):
  return snt.Linear()


@probe("linear_input_of_rank_one", mistake=True)
def _(snt):
  return snt.Linear(2)(tf.ones([3]))


@probe("dropout_is_training_none", mistake=True)
def _(snt):
  return snt.Dropout(0.5)(_x(2, 3), is_training=None)


@probe("batch_norm_is_training_none", mistake=True)
def _(snt):
  return snt.BatchNorm(True, True)(_x(2, 3), is_training=None)


@probe("sequential_extra_arguments_reach_first_layer", mistake=True)
def _(snt):
  return snt.Sequential([snt.Linear(2)])(_x(2, 3), _x(2, 3))


@probe("embed_default_dimension")
def _(snt):
  embed = snt.Embed(vocab_size=100)
  return embed(tf.constant([1, 2])).shape, embed.embed_dim, embed.vocab_size


@probe("embed_existing_vocab_numpy")
def _(snt):
  embed = snt.Embed(existing_vocab=np.arange(12.).reshape([4, 3]))
  return embed(tf.constant([[3, 0]])), embed.embeddings.dtype


@probe("embed_ids_of_rank_three")
def _(snt):
  embed = snt.Embed(5, 2)
  return embed(tf.constant([[[1, 2], [3, 4]]])).shape


@probe("linear_of_rank_four")
def _(snt):
  return snt.Linear(2, w_init=snt.initializers.Ones())(_x(2, 3, 4, 5))


@probe("linear_int_output_size_numpy")
def _(snt):
  return snt.Linear(np.int64(2))(_x(2, 3)).shape


@probe("conv_kernel_and_stride_lists")
def _(snt):
  conv = snt.Conv2D(2, [3, 1], stride=[2, 1], rate=1, padding="VALID")
  return conv(_x(1, 7, 5, 2)).shape, conv.kernel_shape, conv.stride


@probe("conv_padding_lowercase")
def _(snt):
  return snt.Conv1D(2, 3, padding="valid")(_x(1, 6, 2)).shape


@probe("dropout_rate_zero_and_noise_shape")
def _(snt):
  return (snt.Dropout(0.)(_x(2, 3), is_training=True),
          snt.Dropout(0.5, noise_shape=[2, 1], seed=3)(
              tf.ones([2, 3]), is_training=True))


@probe("dropout_numpy_bool_is_training")
def _(snt):
  return snt.Dropout(0.5)(_x(2, 3), is_training=np.bool_(False))


@probe("batch_norm_python_int_is_training")
def _(snt):
  bn = snt.BatchNorm(True, True)
  return bn(_x(4, 3), is_training=1)


@probe("layer_norm_negative_axes_list")
def _(snt):
  return snt.LayerNorm([-2, -1], True, True)(_x(2, 3, 4))


@probe("group_norm_axis_list_with_batch", mistake=True)
def _(snt):
  return snt.GroupNorm(2, axis=[0, 1])(_x(2, 4))


@probe("reshape_with_tensor_shape")
def _(snt):
  return snt.Reshape(tf.TensorShape([6, 2]))(_x(2, 3, 4)).shape


@probe("regularizer_single_tensor_not_list", mistake=True)
def _(snt):
  return snt.regularizers.L2(1.)(tf.constant([[1., 2.], [3., 4.]]))


@probe("optimizer_apply_tuples_and_generators")
def _(snt):
  p = tf.Variable([1., 2.])
  snt.optimizers.SGD(0.5).apply((tf.constant([1., 1.]),), (p,))
  return p


@probe("optimizer_apply_numpy_update", mistake=True)
def _(snt):
  p = tf.Variable([1., 2.])
  snt.optimizers.SGD(0.5).apply([np.ones([2], np.float32)], [p])
  return p


@probe("optimizer_apply_tensor_parameter", mistake=True)
def _(snt):
  return snt.optimizers.SGD(0.5).apply([tf.ones([2])], [tf.ones([2])])


@probe("merge_leading_dims_zero", mistake=True)
def _(snt):
  return snt.merge_leading_dims(_x(2, 3), 0)


@probe("split_leading_dim_bad_size", mistake=True)
def _(snt):
  return snt.split_leading_dim(_x(6, 2), _x(4, 2, 2), 2)


@probe("scale_gradient_string_scale", mistake=True)
def _(snt):
  return snt.scale_gradient(_x(2), "a")


@probe("module_name_not_a_string", mistake=True)
def _(snt):
  return snt.Linear(2, name=3)


@probe("allow_empty_variables_on_unbuilt_linear")
def _(snt):
  return snt.allow_empty_variables(snt.Linear(2)).trainable_variables


@probe("flatten_rank_one", mistake=True)
def _(snt):
  return snt.Flatten()(_x(4))


@probe("deep_rnn_initial_state_of_functions_only")
def _(snt):
  deep = snt.DeepRNN([tf.nn.relu])
  return deep.initial_state(2), deep(_x(2, 3), deep.initial_state(2))


@probe("exponential_moving_average_reset_after_update")
def _(snt):
  ema = snt.ExponentialMovingAverage(0.5)
  ema(tf.constant(4.))
  ema.reset()
  return ema(tf.constant(2.)), ema.value


@probe("metric_sum_reset_after_update")
def _(snt):
  total = snt.Sum()
  total(tf.constant([1., 2.]))
  total.reset()
  return total(tf.constant([3., 4.]))


def probes():
  return registered(__name__)
