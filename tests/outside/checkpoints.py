"""Probes: checkpoints written by dm-sonnet 2.0.2 restore into the library.

Code that runs Sonnet 2 unchanged also loads the checkpoints Sonnet wrote.
Each probe trains a module with dm-sonnet a little, saves a
`tf.train.Checkpoint`, restores it into the same module made with the
library under test (before its first call: a deferred restore), and returns
the outputs; with dm-sonnet itself this is the reference.
"""

import tempfile

import tensorflow as tf

from tests.outside import inputs
from tests.outside.framework import probe
from tests.outside.framework import registered


_x = inputs.sine


def _restored_output(snt, make, call, shape, steps=1):
  import sonnet  # pylint: disable=g-import-not-at-top
  tf.random.set_seed(5)
  source = make(sonnet)
  x = _x(shape)
  for _ in range(steps):
    call(source, x)
  target = make(snt)
  with tempfile.TemporaryDirectory() as path:
    saved = tf.train.Checkpoint(module=source).save(path + "/ckpt")
    status = tf.train.Checkpoint(module=target).restore(saved)
    out = call(target, x)
    status.assert_consumed()
  return out, sorted(v.name for v in tf.Module.variables.fget(target))


_CASES = {
    "Linear": (lambda s: s.Linear(3), lambda m, x: m(x), (2, 4)),
    "MLP": (lambda s: s.nets.MLP([4, 3]), lambda m, x: m(x), (2, 5)),
    "Conv2D": (lambda s: s.Conv2D(3, 3), lambda m, x: m(x), (2, 5, 5, 2)),
    "Conv2DTranspose": (lambda s: s.Conv2DTranspose(2, 3, stride=2),
                        lambda m, x: m(x), (2, 3, 3, 2)),
    "DepthwiseConv2D": (lambda s: s.DepthwiseConv2D(3, 2), lambda m, x: m(x),
                        (2, 5, 5, 2)),
    "BatchNorm": (lambda s: s.BatchNorm(True, True, decay_rate=0.5),
                  lambda m, x: (m(x, is_training=True),
                                m(x, is_training=False)), (4, 3)),
    "LayerNorm": (lambda s: s.LayerNorm(-1, True, True), lambda m, x: m(x),
                  (2, 4)),
    "GroupNorm": (lambda s: s.GroupNorm(2), lambda m, x: m(x), (2, 3, 4)),
    "Embed": (lambda s: s.Embed(6, 3),
              lambda m, x: m(tf.cast(tf.abs(x) * 5, tf.int32)), (2, 3)),
    "Bias": (lambda s: s.Bias(b_init=s.initializers.RandomNormal()),
             lambda m, x: m(x), (2, 3)),
    "LSTM": (lambda s: s.LSTM(3, projection_size=2),
             lambda m, x: m(x, m.initial_state(2)), (2, 4)),
    "GRU": (lambda s: s.GRU(3), lambda m, x: m(x, m.initial_state(2)), (2, 4)),
    "VanillaRNN": (lambda s: s.VanillaRNN(3),
                   lambda m, x: m(x, m.initial_state(2)), (2, 4)),
    "DeepRNN": (lambda s: s.DeepRNN([s.LSTM(3), s.GRU(2)]),
                lambda m, x: m(x, m.initial_state(2)), (2, 4)),
    "UnrolledLSTM": (lambda s: s.UnrolledLSTM(3),
                     lambda m, x: m(x, m.initial_state(2)), (3, 2, 4)),
    "Conv2DLSTM": (lambda s: s.Conv2DLSTM([4, 4, 2], 3, 3),
                   lambda m, x: m(x, m.initial_state(2)), (2, 4, 4, 2)),
    "TrainableState": (lambda s: s.TrainableState.for_core(s.GRU(3)),
                       lambda m, x: m(2), (2, 4)),
    "ExponentialMovingAverage": (lambda s: s.ExponentialMovingAverage(0.5),
                                 lambda m, x: m(x), (2, 3)),
    "Mean": (lambda s: s.Mean(), lambda m, x: m(x), (2, 3)),
    "Cifar10ConvNet": (lambda s: s.nets.Cifar10ConvNet(
        num_classes=3, output_channels=(4, 4), strides=(1, 2)),
                       lambda m, x: m(x, is_training=False,
                                      test_local_stats=True)["logits"],
                       (2, 8, 8, 3)),
    "ResNet": (lambda s: s.nets.ResNet([1, 1, 1, 1], 3,
                                       channels_per_group_list=(4, 4, 4, 4)),
               lambda m, x: m(x, is_training=True), (2, 16, 16, 3)),
    "VectorQuantizerEMA": (lambda s: s.nets.VectorQuantizerEMA(4, 5, 0.25,
                                                               0.9),
                           lambda m, x: m(x, is_training=False)["quantize"],
                           (2, 3, 4)),
    "CrossReplicaBatchNorm": (
        lambda s: s.distribute.CrossReplicaBatchNorm(
            True, True, s.ExponentialMovingAverage(0.5),
            s.ExponentialMovingAverage(0.5)),
        lambda m, x: (m(x, is_training=True), m(x, is_training=False)),
        (4, 3)),
}

for _name, (_make, _call, _shape) in _CASES.items():
  probe(f"restore_dm_sonnet_checkpoint[{_name}]")(
      lambda snt, make=_make, call=_call, shape=_shape: _restored_output(
          snt, make, call, shape))


def _optimizer_state(snt, make_opt):
  import sonnet  # pylint: disable=g-import-not-at-top
  params = [tf.Variable(tf.ones([3, 2]), name="w")]
  source = make_opt(sonnet)
  for i in range(3):
    source.apply([tf.fill([3, 2], float(i) - 1.)], params)
  target = make_opt(snt)
  target_params = [tf.Variable(tf.zeros([3, 2]), name="w")]
  with tempfile.TemporaryDirectory() as path:
    saved = tf.train.Checkpoint(opt=source, params=params).save(path + "/c")
    tf.train.Checkpoint(opt=target, params=target_params).restore(saved)
    target.apply([tf.ones([3, 2])], target_params)
  source.apply([tf.ones([3, 2])], params)
  return target_params, params


for _name, _make in {
    "SGD": lambda s: s.optimizers.SGD(0.1),
    "Momentum": lambda s: s.optimizers.Momentum(0.1, 0.9),
    "Adam": lambda s: s.optimizers.Adam(0.1),
    "RMSProp": lambda s: s.optimizers.RMSProp(0.1, momentum=0.5,
                                              centered=True),
}.items():
  probe(f"restore_dm_sonnet_optimizer_checkpoint[{_name}]")(
      lambda snt, make=_make: _optimizer_state(snt, make))


def probes():
  return registered(__name__)
