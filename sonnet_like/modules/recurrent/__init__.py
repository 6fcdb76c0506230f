"""Recurrent cores, unrolled RNNs and the functions that unroll cores."""

# pylint: disable=line-too-long
from sonnet_like.modules.recurrent.conv_lstm import Conv1DLSTM
from sonnet_like.modules.recurrent.conv_lstm import Conv2DLSTM
from sonnet_like.modules.recurrent.conv_lstm import Conv3DLSTM
from sonnet_like.modules.recurrent.deep_rnn import deep_rnn_with_residual_connections
from sonnet_like.modules.recurrent.deep_rnn import deep_rnn_with_skip_connections
from sonnet_like.modules.recurrent.deep_rnn import DeepRNN
from sonnet_like.modules.recurrent.gru import GRU
from sonnet_like.modules.recurrent.lstm import LSTM
from sonnet_like.modules.recurrent.lstm import LSTMState
from sonnet_like.modules.recurrent.recurrent_dropout import lstm_with_recurrent_dropout
from sonnet_like.modules.recurrent.rnn_core import RNNCore
from sonnet_like.modules.recurrent.rnn_core import UnrolledRNN
from sonnet_like.modules.recurrent.trainable_state import TrainableState
from sonnet_like.modules.recurrent.unroll import dynamic_unroll
from sonnet_like.modules.recurrent.unroll import static_unroll
from sonnet_like.modules.recurrent.unrolled import UnrolledLSTM
from sonnet_like.modules.recurrent.vanilla_rnn import VanillaRNN
