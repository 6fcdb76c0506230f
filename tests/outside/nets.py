"""Probes: snt.nets as Sonnet 2 users call them."""

import tensorflow as tf

from tests.outside import inputs
from tests.outside.framework import probe
from tests.outside.framework import registered


def _images(shape=(2, 8, 8, 3)):
  return inputs.sine(shape)


@probe("mlp_defaults_and_attributes")
def _(snt):
  mlp = snt.nets.MLP([4, 3])
  out = mlp(tf.ones([2, 5]))
  return (out.shape, mlp.output_size if hasattr(mlp, "output_size") else None,
          [m.name for m in mlp.submodules], repr(mlp))


@probe("mlp_dropout_train_and_eval")
def _(snt):
  mlp = snt.nets.MLP([4, 3], dropout_rate=0.5, name="mlp")
  x = tf.ones([2, 5])
  evaluated = mlp(x, is_training=False)
  trained = mlp(x, is_training=True)
  return evaluated, trained.shape


@probe("mlp_reverse_with_options")
def _(snt):
  mlp = snt.nets.MLP([4, 3], activate_final=True, with_bias=False,
                     activation=tf.tanh, name="enc")
  y = mlp(tf.ones([2, 5]))
  dec = mlp.reverse(activate_final=False, name="dec")
  out = dec(y)
  return out.shape, dec.name, [m.name for m in dec.submodules], [
      v.name for v in dec.variables], repr(dec)


@probe("mlp_reverse_before_build", mistake=True)
def _(snt):
  return snt.nets.MLP([2, 3]).reverse()


@probe("mlp_empty_output_sizes")
def _(snt):
  mlp = snt.nets.MLP([])
  return mlp(tf.ones([2, 3]))


@probe("mlp_in_tf_function_unknown_batch")
def _(snt):
  mlp = snt.nets.MLP([4, 3])
  f = tf.function(mlp).get_concrete_function(tf.TensorSpec([None, 5]))
  return f.structured_outputs.shape, [v.name for v in mlp.variables]


@probe("cifar10_convnet_outputs")
def _(snt):
  net = snt.nets.Cifar10ConvNet(num_classes=4, output_channels=(4, 4),
                                strides=(1, 2))
  out = net(_images(), is_training=True)
  evaluated = net(_images(), is_training=False, test_local_stats=True)
  return (sorted(out), [a.shape for a in out["activations"]],
          out["logits"].shape, evaluated["logits"].shape,
          [v.name for v in net.variables])


@probe("cifar10_convnet_defaults_variable_count")
def _(snt):
  net = snt.nets.Cifar10ConvNet()
  net(_images((1, 32, 32, 3)), is_training=True)
  return len(net.variables), len(net.trainable_variables), net.name


@probe("resnet_outputs_and_variables")
def _(snt):
  net = snt.nets.ResNet([1, 1, 1, 1], 5, channels_per_group_list=(4, 4, 4, 4))
  logits = net(_images((2, 16, 16, 3)), is_training=True)
  return logits.shape, len(net.variables), sorted(
      v.name for v in net.trainable_variables)[:6]


@probe("resnet_v2_bn_config_and_eval")
def _(snt):
  net = snt.nets.ResNet([1, 1, 1, 1], 3, channels_per_group_list=(4, 4, 4, 4),
                        resnet_v2=True, bn_config={"decay_rate": 0.5})
  net(_images((2, 16, 16, 3)), is_training=True)
  return net(_images((2, 16, 16, 3)), is_training=False).shape


@probe("resnet50_construct")
def _(snt):
  net = snt.nets.ResNet50(10)
  return net.name, type(net).__mro__[1].__name__, repr(net)


@probe("vector_quantizer_outputs")
def _(snt):
  vq = snt.nets.VectorQuantizer(4, 6, 0.25, name="vq")
  x = inputs.sine([2, 3, 4])
  out = vq(x, is_training=True)
  return (sorted(out), {k: (v.shape, v.dtype) for k, v in out.items()},
          vq.quantize(tf.constant([0, 1])).shape,
          [v.name for v in vq.variables],
          {k: v for k, v in vars(vq).items() if not k.startswith("_")})


@probe("vector_quantizer_ema_training")
def _(snt):
  vq = snt.nets.VectorQuantizerEMA(4, 6, 0.25, decay=0.9, name="vq_ema")
  x = inputs.sine([2, 3, 4])
  first = vq(x, is_training=True)
  second = vq(x, is_training=False)
  return (sorted(first), [v.name for v in vq.variables],
          [m.name for m in vq.submodules], second["loss"].shape)


@probe("vector_quantizer_gradients_straight_through")
def _(snt):
  vq = snt.nets.VectorQuantizer(2, 3, 0.25)
  x = tf.constant([[0.1, 0.2], [0.3, -0.4]])
  with tf.GradientTape() as tape:
    tape.watch(x)
    out = vq(x, is_training=True)
    total = tf.reduce_sum(out["quantize"]) + out["loss"]
  grads = tape.gradient(total, [x] + list(vq.trainable_variables))
  return [g.shape for g in grads]


def probes():
  return registered(__name__)
