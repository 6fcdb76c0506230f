"""Probes: public attributes and repr of modules built with non-default
arguments (the descriptor rows mostly use defaults)."""

import tensorflow as tf

from tests.outside import rows
from tests.outside.framework import probe
from tests.outside.framework import registered

_CONSTRUCTED = {
    "Linear": lambda snt: snt.Linear(3, with_bias=False,
                                     w_init=snt.initializers.Ones()),
    "Conv1D": lambda snt: snt.Conv1D(2, [3], stride=[2], rate=1,
                                     padding="VALID", with_bias=False,
                                     data_format="NCW"),
    "Conv2D_pad_functions": lambda snt: snt.Conv2D(
        2, (3, 1), padding=[snt.pad.same, snt.pad.full], name="c"),
    "Conv2D_causal": lambda snt: snt.Conv2D(2, 3, rate=2,
                                            padding=snt.pad.causal),
    "Conv3D": lambda snt: snt.Conv3D(4, (1, 2, 3), stride=(1, 1, 2),
                                     data_format="NCDHW"),
    "Conv2DTranspose": lambda snt: snt.Conv2DTranspose(
        2, 3, output_shape=[5, 5], stride=2, padding="VALID"),
    "Conv1DTranspose": lambda snt: snt.Conv1DTranspose(2, 4, stride=3,
                                                       with_bias=False),
    "DepthwiseConv2D": lambda snt: snt.DepthwiseConv2D(
        3, channel_multiplier=2, stride=2, padding="VALID"),
    "BatchNorm": lambda snt: snt.BatchNorm(False, True, decay_rate=0.9,
                                           eps=1e-3, data_format="NCHW"),
    "LayerNorm": lambda snt: snt.LayerNorm(slice(1, None), True, False,
                                           eps=1e-3),
    "InstanceNorm": lambda snt: snt.InstanceNorm(False, True,
                                                 data_format="NCHW"),
    "GroupNorm": lambda snt: snt.GroupNorm(4, axis=slice(1, None),
                                           create_offset=False),
    "Dropout": lambda snt: snt.Dropout(0.3, noise_shape=[2, 1], seed=1),
    "Reshape": lambda snt: snt.Reshape([2, -1], preserve_dims=2),
    "Flatten": lambda snt: snt.Flatten(3, name="flat"),
    "BatchApply": lambda snt: snt.BatchApply(snt.Linear(2), num_dims=3),
    "Bias": lambda snt: snt.Bias(output_size=[2, 3], bias_dims=[1]),
    "Embed": lambda snt: snt.Embed(vocab_size=5, embed_dim=2,
                                   densify_gradients=True, trainable=False,
                                   dtype=tf.float64),
    "Embed_existing_vocab": lambda snt: snt.Embed(
        existing_vocab=tf.ones([3, 2])),
    "ExponentialMovingAverage": lambda snt: snt.ExponentialMovingAverage(
        0.99, name="ema"),
    "LSTM": lambda snt: snt.LSTM(3, projection_size=2, forget_bias=0.5,
                                 dtype=tf.float64),
    "GRU": lambda snt: snt.GRU(3, w_i_init=snt.initializers.Ones()),
    "VanillaRNN": lambda snt: snt.VanillaRNN(3, activation=tf.nn.relu),
    "Conv2DLSTM": lambda snt: snt.Conv2DLSTM([4, 4, 2], 3, (3, 1),
                                             data_format="NCHW"),
    "UnrolledLSTM": lambda snt: snt.UnrolledLSTM(4, forget_bias=0.2),
    "TrainableState": lambda snt: snt.TrainableState(
        {"a": tf.zeros([2])}, mask={"a": False}),
    "DeepRNN": lambda snt: snt.DeepRNN([snt.LSTM(2), tf.nn.relu],
                                       name="deep"),
    "Sequential": lambda snt: snt.Sequential([snt.Linear(2)], name="seq"),
    "Deferred": lambda snt: snt.Deferred(lambda: snt.Linear(2),
                                         call_methods=("__call__",)),
    "MLP": lambda snt: snt.nets.MLP([2, 3], activate_final=True,
                                    dropout_rate=0.1, activation=tf.tanh),
    "Cifar10ConvNet": lambda snt: snt.nets.Cifar10ConvNet(
        num_classes=4, output_channels=(4, 8), strides=(2, 1),
        data_format="NCHW"),
    "ResNet": lambda snt: snt.nets.ResNet([1, 1, 1, 1], 4, resnet_v2=True),
    "VectorQuantizer": lambda snt: snt.nets.VectorQuantizer(
        4, 6, 0.25, dtype=tf.float64),
    "VectorQuantizerEMA": lambda snt: snt.nets.VectorQuantizerEMA(
        4, 6, 0.25, 0.95, epsilon=1e-3),
    "CrossReplicaBatchNorm": lambda snt: snt.distribute.CrossReplicaBatchNorm(
        False, False, snt.ExponentialMovingAverage(0.9),
        snt.ExponentialMovingAverage(0.9), eps=1e-4, data_format="NCHW"),
    "BaseBatchNorm": lambda snt: snt.BaseBatchNorm(
        True, True, snt.ExponentialMovingAverage(0.5),
        snt.ExponentialMovingAverage(0.5), eps=1e-2),
}

for _name, _make in _CONSTRUCTED.items():
  probe(f"surface[{_name}]")(
      lambda snt, make=_make: (lambda m: (rows.attributes(m), repr(m), str(m),
                                          m.name, m.name_scope.name))(
                                              make(snt)))


def probes():
  return registered(__name__)
