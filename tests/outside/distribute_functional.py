"""Probes: snt.distribute and snt.functional."""

import tensorflow as tf

from tests.outside import inputs
from tests.outside.framework import probe
from tests.outside.framework import registered


_x = inputs.sine


@probe("replicator_variables_and_run")
def _(snt):
  replicator = snt.distribute.Replicator(["/cpu:0"])
  with replicator.scope():
    mod = snt.Linear(2, w_init=snt.initializers.Ones(), name="lin")
  out = replicator.run(mod, args=(_x([2, 3]),))
  return (out, [type(v).__name__ for v in mod.variables],
          [v.name for v in mod.variables], replicator.num_replicas_in_sync)


@probe("replicator_create_variables_eagerly")
def _(snt):
  replicator = snt.distribute.Replicator(["/cpu:0"])
  with replicator.scope():
    mod = snt.Linear(2, name="lin")

  @tf.function
  def step(x):
    return replicator.run(snt.distribute.create_variables_eagerly(mod),
                          args=(x,))

  out = step(_x([2, 3]))
  return out.shape, [v.name for v in mod.variables]


@probe("cross_replica_batch_norm_in_replicator")
def _(snt):
  replicator = snt.distribute.Replicator(["/cpu:0"])
  with replicator.scope():
    bn = snt.distribute.CrossReplicaBatchNorm(
        True, True, snt.ExponentialMovingAverage(0.9),
        snt.ExponentialMovingAverage(0.9))

  @tf.function
  def step(x):
    return replicator.run(lambda x: bn(x, is_training=True), args=(x,))

  out = step(_x([4, 3]))
  return out, [v.name for v in bn.variables]


@probe("functional_transform_mlp")
def _(snt):
  with snt.functional.variables():
    net = snt.nets.MLP([3, 2], name="mlp")
  f = snt.functional.transform(net)
  params = f.init(_x([1, 4]))
  names = sorted(ref.deref().name for ref in params)
  out = f.apply(params, _x([2, 4]))
  bumped = {k: v + 1. for k, v in params.items()}
  return names, out, f.apply(bumped, _x([2, 4]))


@probe("functional_transform_with_state_batch_norm")
def _(snt):
  with snt.functional.variables():
    bn = snt.BatchNorm(True, True, decay_rate=0.5, name="bn")
  f = snt.functional.transform_with_state(
      lambda x, t: bn(x, is_training=t))
  params, state = f.init(_x([4, 3]), True)
  out, state = f.apply(params, state, _x([4, 3]), True)
  evaluated, _ = f.apply(params, state, _x([4, 3]), False)
  return (sorted(r.deref().name for r in params),
          sorted(r.deref().name for r in state), out, evaluated)


@probe("functional_grad_value_and_grad")
def _(snt):
  def loss(a, b):
    return tf.reduce_sum(a * a * b), a + b

  x, y = tf.constant([1., 2.]), tf.constant([3., 4.])
  return (snt.functional.grad(lambda a, b: loss(a, b)[0])(x, y),
          snt.functional.grad(loss, argnums=(0, 1), has_aux=True)(x, y),
          snt.functional.value_and_grad(lambda a, b: loss(a, b)[0],
                                        argnums=1)(x, y))


@probe("functional_jit_and_devices")
def _(snt):
  f = snt.functional.jit(lambda x: x * 2.)
  moved = snt.functional.device_put(tf.ones([2]))
  return f(tf.ones([2])), snt.functional.device_get(moved)


@probe("functional_optimizers_steps")
def _(snt):
  out = {}
  for name, make in {"sgd": lambda: snt.functional.sgd(0.1),
                     "adam": lambda: snt.functional.adam(0.1),
                     "momentum": lambda: snt.functional.momentum(0.1, 0.9),
                     "rmsprop": lambda: snt.functional.rmsprop(0.1)}.items():
    with snt.functional.variables():
      lin = snt.Linear(1, w_init=snt.initializers.Ones(), name="lin")
    f = snt.functional.transform(lambda x: tf.reduce_sum(lin(x) ** 2))
    params = f.init(_x([2, 3]))
    opt = make()
    opt_state = opt.init(params)
    grad_fn = snt.functional.grad(f.apply)
    for _ in range(2):
      grads = grad_fn(params, _x([2, 3]))
      params, opt_state = opt.apply(opt_state, grads, params)
    out[name] = f.apply(params, _x([2, 3]))
  return out


def probes():
  return registered(__name__)
