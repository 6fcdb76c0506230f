"""Probes: Sonnet 2's optimizers as users drive them."""

import numpy as np
import tensorflow as tf

from tests.outside.framework import probe
from tests.outside.framework import registered

_MAKERS = {
    "SGD": lambda snt: snt.optimizers.SGD(0.1),
    "Momentum": lambda snt: snt.optimizers.Momentum(0.1, 0.9),
    "Adam": lambda snt: snt.optimizers.Adam(0.1),
    "RMSProp": lambda snt: snt.optimizers.RMSProp(0.1),
}


def _public(opt):
  found = {}
  for key, value in vars(opt).items():
    if not key.startswith("_"):
      found[key] = value
  return found


def _params():
  return [tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2), name="w"),
          tf.Variable(np.ones([2], np.float32), name="b")]


def _grads(step=0):
  return [tf.constant(np.sin(np.arange(6) + step).reshape(3, 2), tf.float32),
          tf.constant(np.cos(np.arange(2) + step), tf.float32)]


def _for_each(name_prefix, fn, mistake=False, phrase=None):
  for cls, make in _MAKERS.items():
    probe(f"{name_prefix}[{cls}]", mistake, phrase)(
        lambda snt, make=make: fn(snt, make(snt)))


def _attributes_after_apply(snt, opt):
  params = _params()
  opt.apply(_grads(), params)
  return _public(opt), opt.name, repr(opt)


def _steps_in_tf_function(snt, opt):
  params = _params()

  @tf.function
  def step(g0, g1):
    opt.apply([g0, g1], params)

  for i in range(3):
    step(*_grads(i))
  return params


def _learning_rate_variable(snt, opt):
  opt.learning_rate = tf.Variable(0.1, trainable=False, name="lr")
  params = _params()
  opt.apply(_grads(), params)
  opt.learning_rate.assign(0.01)
  opt.apply(_grads(1), params)
  return params


def _float16_and_float64_parameters(snt, opt):
  params = [tf.Variable(tf.ones([2], tf.float16), name="h"),
            tf.Variable(tf.ones([2], tf.float64), name="d")]
  opt.apply([tf.constant([0.5, -1.], tf.float16),
             tf.constant([0.5, -1.], tf.float64)], params)
  return params


def _none_update(snt, opt):
  params = _params()
  opt.apply([None, _grads()[1]], params)
  opt.apply([_grads()[0], None], params)
  return params


def _sparse_update(snt, opt):
  table = tf.Variable(tf.ones([4, 2]), name="table")
  with tf.GradientTape() as tape:
    loss = tf.reduce_sum(tf.gather(table, [1, 3, 1]) ** 2)
  grad = tape.gradient(loss, table)
  opt.apply([grad], [table])
  return table, type(grad).__name__


def _slot_names_and_order(snt, opt):
  params = _params()
  opt.apply(_grads(), params)
  return [(v.name, v.shape, v.dtype.name) for v in
          tf.Module.variables.fget(opt)]


def _checkpoint_restore_before_apply(snt, opt):
  import tempfile  # pylint: disable=g-import-not-at-top
  params = _params()
  opt.apply(_grads(), params)
  opt.apply(_grads(1), params)
  fresh_params = _params()
  fresh = type(opt)(**{k: v for k, v in _public(opt).items()
                       if k in ("learning_rate", "momentum", "beta1", "beta2",
                                "epsilon", "decay", "centered",
                                "use_nesterov")})
  with tempfile.TemporaryDirectory() as path:
    saved = tf.train.Checkpoint(opt=opt, params=params).save(path + "/c")
    tf.train.Checkpoint(opt=fresh, params=fresh_params).restore(saved)
    fresh.apply(_grads(2), fresh_params)
  opt.apply(_grads(2), params)
  return fresh_params, params


def _keras_style_minimize_loop(snt, opt):
  tf.random.set_seed(2)
  model = snt.Linear(1, name="lin")
  x = tf.reshape(tf.range(8.), [4, 2]) / 8.
  y = tf.reduce_sum(x, axis=1, keepdims=True)
  losses = []
  for _ in range(4):
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean((model(x) - y) ** 2)
    opt.apply(tape.gradient(loss, model.trainable_variables),
              model.trainable_variables)
    losses.append(loss)
  return losses


_for_each("optimizer_attributes_after_apply", _attributes_after_apply)
_for_each("optimizer_steps_in_tf_function", _steps_in_tf_function)
_for_each("optimizer_learning_rate_variable", _learning_rate_variable)
_for_each("optimizer_float16_and_float64", _float16_and_float64_parameters)
_for_each("optimizer_none_updates", _none_update)
_for_each("optimizer_sparse_update", _sparse_update)
_for_each("optimizer_slot_names", _slot_names_and_order)
_for_each("optimizer_checkpoint_restore", _checkpoint_restore_before_apply)
_for_each("optimizer_training_loop", _keras_style_minimize_loop)


@probe("optimizer_defaults")
def _(snt):
  o = snt.optimizers
  return [_public(o.Adam()), _public(o.RMSProp(0.1)),
          _public(o.Momentum(0.1, 0.9)), _public(o.SGD(0.1))]


@probe("optimizer_attributes_before_apply")
def _(snt):
  o = snt.optimizers
  return [(_public(m), m.name) for m in
          (o.Adam(0.1), o.RMSProp(0.1, centered=True, momentum=0.5),
           o.Momentum(0.1, 0.9, use_nesterov=True), o.SGD(0.1))]


@probe("rmsprop_centered_momentum_steps")
def _(snt):
  opt = snt.optimizers.RMSProp(0.05, decay=0.8, momentum=0.5, epsilon=1e-5,
                               centered=True)
  params = _params()
  for i in range(3):
    opt.apply(_grads(i), params)
  return params, [v.name for v in opt.variables]


@probe("momentum_nesterov_steps")
def _(snt):
  opt = snt.optimizers.Momentum(0.05, 0.8, use_nesterov=True)
  params = _params()
  for i in range(3):
    opt.apply(_grads(i), params)
  return params


@probe("adam_custom_hyperparameters_steps")
def _(snt):
  opt = snt.optimizers.Adam(0.01, beta1=0.5, beta2=0.9, epsilon=1e-3)
  params = _params()
  for i in range(3):
    opt.apply(_grads(i), params)
  return params, opt.step


@probe("optimizer_learning_rate_tensor_and_int")
def _(snt):
  params = _params()
  snt.optimizers.SGD(tf.constant(0.5)).apply(_grads(), params)
  snt.optimizers.SGD(1).apply(_grads(), params)
  return params


@probe("optimizer_in_replicator")
def _(snt):
  replicator = snt.distribute.Replicator(["/cpu:0"])
  with replicator.scope():
    model = snt.Linear(2, w_init=snt.initializers.Ones(), name="lin")
    opt = snt.optimizers.Adam(0.1)

  @tf.function
  def step(x):
    def replica_step(x):
      with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x))
      grads = tape.gradient(loss, model.trainable_variables)
      opt.apply(grads, model.trainable_variables)
      return loss
    return replicator.run(replica_step, args=(x,))

  losses = [step(tf.ones([2, 3])) for _ in range(2)]
  return losses, model.w


def probes():
  return registered(__name__)
