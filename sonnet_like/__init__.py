"""sonnet_like: neural-network modules and training scenarios for TensorFlow 2.

`import sonnet_like as snt` runs Sonnet 2 code unchanged.
"""

# pylint: disable=g-bad-import-order
# --- core ---
from sonnet_like.core import initializers
from sonnet_like.core.base import allow_empty_variables
from sonnet_like.core.base import Module
from sonnet_like.core.base import no_name_scope
from sonnet_like.core.once import once
# --- core layers ---
from sonnet_like.modules.linear import Linear
# --- conv ---
from sonnet_like.modules import pad
from sonnet_like.modules.conv import Conv1D
from sonnet_like.modules.conv import Conv2D
from sonnet_like.modules.conv import Conv3D
from sonnet_like.modules.conv_transpose import Conv1DTranspose
from sonnet_like.modules.conv_transpose import Conv2DTranspose
from sonnet_like.modules.conv_transpose import Conv3DTranspose
from sonnet_like.modules.depthwise_conv import DepthwiseConv2D
# --- normalization, dropout, containers, reshape, moving averages ---
from sonnet_like.modules.axis_norm import InstanceNorm
from sonnet_like.modules.axis_norm import LayerNorm
from sonnet_like.modules.batch_norm import BaseBatchNorm
from sonnet_like.modules.batch_norm import BatchNorm
from sonnet_like.modules.dropout import Dropout
from sonnet_like.modules.group_norm import GroupNorm
from sonnet_like.modules.moving_averages import ExponentialMovingAverage
from sonnet_like.modules.reshape import flatten
from sonnet_like.modules.reshape import Flatten
from sonnet_like.modules.reshape import reshape
from sonnet_like.modules.reshape import Reshape
from sonnet_like.modules.sequential import Sequential
# --- nets ---
from sonnet_like import nets
# --- optimizers ---
from sonnet_like import optimizers
from sonnet_like.modules import regularizers
from sonnet_like.modules.metrics import Mean
from sonnet_like.modules.metrics import Metric
from sonnet_like.modules.metrics import Sum
from sonnet_like.optimizers.base import Optimizer
# --- recurrent ---
from sonnet_like.modules.recurrent import Conv1DLSTM
from sonnet_like.modules.recurrent import Conv2DLSTM
from sonnet_like.modules.recurrent import Conv3DLSTM
from sonnet_like.modules.recurrent import deep_rnn_with_residual_connections
from sonnet_like.modules.recurrent import deep_rnn_with_skip_connections
from sonnet_like.modules.recurrent import DeepRNN
from sonnet_like.modules.recurrent import dynamic_unroll
from sonnet_like.modules.recurrent import GRU
from sonnet_like.modules.recurrent import LSTM
from sonnet_like.modules.recurrent import lstm_with_recurrent_dropout
from sonnet_like.modules.recurrent import LSTMState
from sonnet_like.modules.recurrent import RNNCore
from sonnet_like.modules.recurrent import static_unroll
from sonnet_like.modules.recurrent import TrainableState
from sonnet_like.modules.recurrent import UnrolledLSTM
from sonnet_like.modules.recurrent import UnrolledRNN
from sonnet_like.modules.recurrent import VanillaRNN
# --- attention ---
from sonnet_like.modules.attention import KVCache
from sonnet_like.modules.attention import MultiHeadAttention
from sonnet_like.modules.attention import RotaryEmbedding
from sonnet_like.modules.remat import remat
from sonnet_like.modules.rms_norm import RMSNorm
# --- other modules ---
from sonnet_like.modules.batch_apply import BatchApply
from sonnet_like.modules.bias import Bias
from sonnet_like.modules.build import build
from sonnet_like.modules.deferred import Deferred
from sonnet_like.modules.embed import Embed
from sonnet_like.modules.leading_dims import merge_leading_dims
from sonnet_like.modules.leading_dims import split_leading_dim
from sonnet_like.modules.leaky_clip_by_value import leaky_clip_by_value
from sonnet_like.modules.scale_gradient import scale_gradient
from sonnet_like.modules.variable_tools import format_variables
from sonnet_like.modules.variable_tools import log_variables
from sonnet_like.core import mixed_precision
from sonnet_like.core.custom_getter import custom_variable_getter
# --- distribute ---
from sonnet_like import distribute
# --- functional ---
from sonnet_like import functional
# --- export ---
from sonnet_like import export
# --- scenarios ---
from sonnet_like import envs
from sonnet_like import scenarios

# The version of this package (setup.py reads it from this line).
__sonnet_like_version__ = "0.1.0"
# The Sonnet API this package follows.
_SONNET_API_VERSION = "2.0.2"
# `snt.__version__`, read by Sonnet 2 programs: the Sonnet API version, so a
# check for Sonnet 2 takes its Sonnet-2 branch, with this package's version
# as a PEP 440 local label, e.g. "2.0.2+sonnetlike.0.1.0".
__version__ = f"{_SONNET_API_VERSION}+sonnetlike.{__sonnet_like_version__}"

__all__ = [
    # --- core ---
    "Module",
    "allow_empty_variables",
    "initializers",
    "no_name_scope",
    "once",
    # --- core layers ---
    "Linear",
    # --- conv ---
    "Conv1D",
    "Conv1DTranspose",
    "Conv2D",
    "Conv2DTranspose",
    "Conv3D",
    "Conv3DTranspose",
    "DepthwiseConv2D",
    "pad",
    # --- normalization, dropout, containers, reshape, moving averages ---
    "BaseBatchNorm",
    "BatchNorm",
    "Dropout",
    "ExponentialMovingAverage",
    "Flatten",
    "GroupNorm",
    "InstanceNorm",
    "LayerNorm",
    "Reshape",
    "Sequential",
    "flatten",
    "reshape",
    # --- nets ---
    "nets",
    # --- optimizers ---
    "Mean",
    "Metric",
    "Optimizer",
    "Sum",
    "optimizers",
    "regularizers",
    # --- recurrent ---
    "Conv1DLSTM",
    "Conv2DLSTM",
    "Conv3DLSTM",
    "DeepRNN",
    "GRU",
    "LSTM",
    "LSTMState",
    "RNNCore",
    "TrainableState",
    "UnrolledLSTM",
    "UnrolledRNN",
    "VanillaRNN",
    "deep_rnn_with_residual_connections",
    "deep_rnn_with_skip_connections",
    "dynamic_unroll",
    "lstm_with_recurrent_dropout",
    "static_unroll",
    # --- attention ---
    "KVCache",
    "MultiHeadAttention",
    "RMSNorm",
    "RotaryEmbedding",
    "remat",
    # --- other modules ---
    "BatchApply",
    "Bias",
    "Deferred",
    "Embed",
    "build",
    "custom_variable_getter",
    "format_variables",
    "leaky_clip_by_value",
    "log_variables",
    "merge_leading_dims",
    "mixed_precision",
    "scale_gradient",
    "split_leading_dim",
    # --- distribute ---
    "distribute",
    # --- functional ---
    "functional",
    # --- export ---
    "export",
    # --- scenarios ---
    "envs",
    "scenarios",
]
