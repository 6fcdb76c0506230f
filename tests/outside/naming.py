"""Probes: module names, name scopes and variable names."""

import tensorflow as tf

from tests.outside.framework import probe
from tests.outside.framework import registered


def _info(module):
  return (module.name, module.name_scope.name)


def _built_names(module, x):
  module(x)
  return [v.name for v in module.variables]


@probe("eager_two_default_linears")
def _(snt):
  a, b = snt.Linear(1), snt.Linear(1)
  return _info(a), _info(b), _built_names(a, tf.ones([1, 2])), _built_names(
      b, tf.ones([1, 2]))


@probe("eager_same_explicit_name")
def _(snt):
  a, b = snt.Linear(1, name="head"), snt.Linear(2, name="head")
  return _info(a), _info(b)


@probe("eager_in_a_loop")
def _(snt):
  return [_info(snt.Conv2D(2, 3)) for _ in range(3)]


def _outer(snt):
  class Outer(snt.Module):

    def __init__(self, name=None):
      super().__init__(name=name)
      self.first = snt.Linear(2)
      self.second = snt.Linear(2)
      self.mlp = snt.nets.MLP([2, 2])

    def __call__(self, x):
      return self.mlp(self.second(self.first(x)))

  return Outer


@probe("nested_modules_in_constructor")
def _(snt):
  outer_cls = _outer(snt)
  a, b = outer_cls(), outer_cls()
  a(tf.ones([1, 2]))
  return ([_info(m) for m in (a, a.first, a.second, a.mlp, b, b.first)],
          [v.name for v in a.variables],
          [_info(m) for m in a.submodules])


@probe("modules_made_inside_tf_function")
def _(snt):
  made = []
  outer_cls = _outer(snt)

  @tf.function
  def f(x):
    if not made:
      made.extend([snt.Linear(1), snt.Linear(1), outer_cls()])
    return made[0](x) + made[1](x), made[2](x)

  f(tf.ones([1, 2]))
  return ([_info(m) for m in made],
          [v.name for m in made for v in m.variables],
          [_info(m) for m in made[2].submodules])


@probe("modules_made_in_a_graph")
def _(snt):
  with tf.Graph().as_default():
    a, b = snt.Linear(1), snt.Linear(1)
    b(tf.ones([1, 2]))
    return _info(a), _info(b), [v.name for v in b.variables]


@probe("modules_in_tf_name_scope")
def _(snt):
  with tf.name_scope("scope"):
    a, b = snt.Linear(1), snt.Linear(1)
    with tf.name_scope("inner"):
      c = snt.nets.MLP([1])
  return _info(a), _info(b), _info(c), _built_names(c, tf.ones([1, 2]))


@probe("modules_in_module_name_scope")
def _(snt):
  parent = snt.Module(name="parent")
  with parent.name_scope:
    child = snt.Linear(1)
  return _info(parent), _info(child), _built_names(child, tf.ones([1, 1]))


def _lazy_class(snt):
  """A module that makes its two Linears, `a` and `b`, on its first call."""

  class Lazy(snt.Module):

    def __call__(self, x):
      if not hasattr(self, "a"):
        self.a = snt.Linear(2)
        self.b = snt.Linear(2)
      return self.b(self.a(x))

  return Lazy


@probe("submodule_made_on_first_call_eagerly")
def _(snt):
  lazy = _lazy_class(snt)()
  lazy(tf.ones([1, 3]))
  return (_info(lazy.a), _info(lazy.b), [v.name for v in lazy.variables])


@probe("submodule_made_on_first_call_in_tf_function")
def _(snt):
  lazy = _lazy_class(snt)(name="lazy")
  tf.function(lazy)(tf.ones([1, 3]))
  return (_info(lazy.a), _info(lazy.b), [v.name for v in lazy.variables])


@probe("tf_function_method_makes_submodule")
def _(snt):
  class Lazy(snt.Module):

    @tf.function
    def __call__(self, x):
      if not hasattr(self, "inner"):
        self.inner = snt.Linear(2)
      return self.inner(x)

  lazy = Lazy()
  lazy(tf.ones([1, 3]))
  return _info(lazy.inner), [v.name for v in lazy.variables]


@probe("current_scope_in_methods_and_properties")
def _(snt):
  class Scoped(snt.Module):

    def method(self):
      return tf.get_current_name_scope()

    @property
    def prop(self):
      return tf.get_current_name_scope()

    @snt.no_name_scope
    def unscoped(self):
      return tf.get_current_name_scope()

    def _private(self):
      return tf.get_current_name_scope()

    def __call__(self):
      return tf.get_current_name_scope()

  m = Scoped(name="scoped")
  return m.method(), m.prop, m.unscoped(), m._private(), m()  # pylint: disable=protected-access


@probe("scope_in_constructor")
def _(snt):
  class Ctor(snt.Module):

    def __init__(self):
      super().__init__()
      self.scope = tf.get_current_name_scope()
      self.v = tf.Variable(1., name="v")

  c = Ctor()
  return c.scope, c.v.name, tf.get_current_name_scope()


@probe("no_name_scope_constructor")
def _(snt):
  class Unscoped(snt.Module):

    @snt.no_name_scope
    def __init__(self):
      super().__init__()
      self.scope = tf.get_current_name_scope()
      self.inner = snt.Linear(1)

  u = Unscoped()
  return u.scope, _info(u.inner)


def traced_module(snt, name):
  """A module whose `__call__` is a `tf.function` with an op named "out"."""

  class Traced(snt.Module):

    @tf.function
    def __call__(self, x):
      return tf.identity(x * 2., name="out")

  return Traced(name=name)


@probe("tf_function_call_op_names")
def _(snt):
  m = traced_module(snt, "traced")
  concrete = m.__call__.get_concrete_function(tf.TensorSpec([1]))
  return sorted(op.name for op in concrete.graph.get_operations())


@probe("tf_function_of_module_op_names")
def _(snt):
  linear = snt.Linear(2, name="lin")
  linear(tf.ones([1, 3]))
  concrete = tf.function(linear).get_concrete_function(
      tf.TensorSpec([None, 3]))
  return sorted(op.name for op in concrete.graph.get_operations()
                if op.type in ("MatMul", "AddV2", "BiasAdd", "Add"))


@probe("default_names_of_every_module")
def _(snt):
  made = [snt.Linear(1), snt.Conv1D(1, 1), snt.Conv2D(1, 1), snt.Conv3D(1, 1),
          snt.Conv1DTranspose(1, 1), snt.Conv2DTranspose(1, 1),
          snt.Conv3DTranspose(1, 1), snt.DepthwiseConv2D(1),
          snt.BatchNorm(True, True), snt.LayerNorm(-1, True, True),
          snt.InstanceNorm(True, True), snt.GroupNorm(1), snt.Dropout(0.5),
          snt.Reshape([1]), snt.Flatten(), snt.Sequential([]),
          snt.BatchApply(snt.Linear(1)), snt.Bias(), snt.Embed(3, 2),
          snt.ExponentialMovingAverage(0.9), snt.Sum(), snt.Mean(),
          snt.LSTM(1), snt.GRU(1), snt.VanillaRNN(1), snt.UnrolledLSTM(1),
          snt.Conv1DLSTM([2, 1], 1, 1), snt.Conv2DLSTM([2, 2, 1], 1, 1),
          snt.Conv3DLSTM([2, 2, 2, 1], 1, 1), snt.DeepRNN([]),
          snt.TrainableState(tf.zeros([1])), snt.Deferred(lambda: 1),
          snt.nets.MLP([1]), snt.nets.Cifar10ConvNet(),
          snt.nets.ResNet([1, 1, 1, 1], 2), snt.nets.ResNet50(2),
          snt.nets.VectorQuantizer(2, 2, 0.25),
          snt.nets.VectorQuantizerEMA(2, 2, 0.25, 0.9),
          snt.optimizers.SGD(0.1), snt.optimizers.Adam(),
          snt.optimizers.Momentum(0.1, 0.9), snt.optimizers.RMSProp(0.1),
          snt.distribute.CrossReplicaBatchNorm(
              True, True, snt.ExponentialMovingAverage(0.9),
              snt.ExponentialMovingAverage(0.9))]
  return [(type(m).__name__, _info(m)) for m in made]


@probe("recurrent_helper_names")
def _(snt):
  train, test = snt.lstm_with_recurrent_dropout(2, dropout=0.5)
  skip = snt.deep_rnn_with_skip_connections([snt.LSTM(2), snt.GRU(2)])
  residual = snt.deep_rnn_with_residual_connections([snt.LSTM(2)])
  state = snt.TrainableState.for_core(snt.LSTM(3))
  return [(type(m).__name__, _info(m)) for m in
          (train, test, skip, residual, state)]


@probe("mlp_layer_and_variable_names")
def _(snt):
  mlp = snt.nets.MLP([3, 2], name="net")
  mlp(tf.ones([1, 4]))
  rev = mlp.reverse()
  rev(tf.ones([1, 2]))
  return ([_info(m) for m in mlp.submodules], [v.name for v in mlp.variables],
          _info(rev), [_info(m) for m in rev.submodules],
          [v.name for v in rev.variables])


@probe("resnet_submodule_names")
def _(snt):
  net = snt.nets.ResNet([1, 1, 1, 1], 3, channels_per_group_list=(4, 4, 4, 4))
  return sorted(_info(m) for m in net.submodules)


@probe("sequential_of_default_names")
def _(snt):
  seq = snt.Sequential([snt.Linear(2), tf.nn.relu, snt.Linear(2)])
  seq(tf.ones([1, 2]))
  return [_info(m) for m in seq.submodules], [v.name for v in seq.variables]


@probe("deep_rnn_variable_names")
def _(snt):
  core = snt.DeepRNN([snt.LSTM(2), snt.LSTM(2)], name="deep")
  core(tf.ones([1, 3]), core.initial_state(1))
  return [v.name for v in core.variables]


@probe("batch_apply_and_deferred_names")
def _(snt):
  apply = snt.BatchApply(snt.Linear(2))
  apply(tf.ones([2, 3, 4]))
  deferred = snt.Deferred(lambda: snt.Linear(2))
  deferred(tf.ones([1, 3]))
  return ([v.name for v in apply.variables], _info(deferred.target),
          [v.name for v in deferred.variables])


@probe("unicode_module_name", mistake=True)
def _(snt):
  return _info(snt.Linear(1, name="n\u00e4me"))


@probe("empty_module_name", mistake=True)
def _(snt):
  return _info(snt.Linear(1, name=""))


@probe("module_name_with_slash", mistake=True)
def _(snt):
  return _info(snt.Linear(1, name="a/b"))



@probe("tf_function_call_with_input_signature")
def _(snt):
  class Traced(snt.Module):

    @tf.function(input_signature=[tf.TensorSpec([None, 2])])
    def __call__(self, x):
      return tf.identity(x + 1., name="out")

  m = Traced(name="traced")
  concrete = m.__call__.get_concrete_function()
  return (m(tf.ones([3, 2])), [t.name for t in concrete.inputs],
          sorted(op.name for op in concrete.graph.get_operations()))


@probe("saved_model_signature_of_tf_function_call")
def _(snt):
  import tempfile  # pylint: disable=g-import-not-at-top

  class Traced(snt.Module):

    @tf.function(input_signature=[tf.TensorSpec([None, 2], name="features")])
    def __call__(self, x):
      return {"y": x * 2.}

  m = Traced(name="traced")
  with tempfile.TemporaryDirectory() as path:
    tf.saved_model.save(m, path, signatures=m.__call__)
    loaded = tf.saved_model.load(path)
    signature = loaded.signatures["serving_default"]
    return (sorted(signature.structured_input_signature[1]),
            signature(features=tf.ones([1, 2])))


def probes():
  return registered(__name__)
