"""Probes: Sonnet 2's subclassing patterns and the Module contract."""

import copy
import pickle

import numpy as np
import tensorflow as tf

from tests.outside.framework import probe
from tests.outside.framework import registered


@probe("lazy_variable_in_call_docstring_pattern")
def _(snt):
  class MultiplyModule(snt.Module):

    def __call__(self, x):
      if not hasattr(self, "w"):
        self.w = tf.Variable(2., name="w")
      return x * self.w

  mod = MultiplyModule()
  return mod(1.), mod.w.name, [v.name for v in mod.trainable_variables]


@probe("once_initialize_pattern")
def _(snt):
  class Scale(snt.Module):

    def __init__(self, name=None):
      super().__init__(name=name)
      self.builds = 0

    @snt.once
    def _initialize(self, x):
      self.builds += 1
      self.s = tf.Variable(tf.ones([x.shape[-1]]), name="s")

    def __call__(self, x):
      self._initialize(x)
      return x * self.s

  m = Scale()
  m(tf.ones([2, 3]))
  m(tf.ones([4, 3]))
  return m.builds, m.s.name, [v.name for v in m.variables]


@probe("once_initialize_first_called_in_tf_function")
def _(snt):
  class Scale(snt.Module):

    @snt.once
    def _initialize(self, x):
      self.s = tf.Variable(tf.ones([x.shape[-1]]), name="s")

    def __call__(self, x):
      self._initialize(x)
      return x * self.s

  m = Scale()
  f = tf.function(m)
  return f(tf.ones([2, 3])), f(tf.ones([5, 3])), m.s.name


@probe("once_per_instance")
def _(snt):
  calls = []

  class Counter:

    @snt.once
    def f(self):
      calls.append(id(self))

  a, b = Counter(), Counter()
  a.f(), a.f(), b.f(), a.f(), b.f()
  return len(calls), len(set(calls))


@probe("once_retries_after_an_error")
def _(snt):
  calls = []

  @snt.once
  def f():
    calls.append(1)
    if len(calls) == 1:
      raise RuntimeError("first")

  try:
    f()
  except RuntimeError:
    pass
  f(), f()
  return len(calls)


@probe("once_on_a_callable_object")
def _(snt):
  class Callable:

    def __init__(self):
      self.n = 0

    def __call__(self):
      self.n += 1

  target = Callable()
  wrapped = snt.once(target)
  wrapped(), wrapped()
  return target.n


@probe("once_wrapper_attributes")
def _(snt):
  def build():
    """Doc."""

  wrapped = snt.once(build)
  return (wrapped.__name__, wrapped.__qualname__, wrapped.__doc__,
          wrapped.__wrapped__ is build, wrapped.__snt_once_wrapped__ is build)


@probe("tf_function_method_retraces_per_shape")
def _(snt):
  class Traced(snt.Module):

    def __init__(self):
      super().__init__()
      self.traces = 0

    @tf.function
    def __call__(self, x):
      self.traces += 1
      return tf.reduce_sum(x)

  m = Traced()
  m(tf.ones([2])), m(tf.ones([2])), m(tf.ones([3]))
  return m.traces


@probe("tf_function_on_other_method")
def _(snt):
  class Model(snt.Module):

    def __init__(self):
      super().__init__(name="model")
      self.linear = snt.Linear(2, w_init=snt.initializers.Ones())

    @tf.function
    def encode(self, x):
      return self.linear(x), tf.get_current_name_scope()

  m = Model()
  out, scope = m.encode(tf.ones([1, 3]))
  return out, scope, [v.name for v in m.variables]


@probe("custom_call_with_kwargs")
def _(snt):
  class Affine(snt.Module):

    def __init__(self, scale=2., name=None):
      super().__init__(name=name)
      self.scale = scale

    def __call__(self, x, *, shift=0., training=False):
      return x * self.scale + shift + (1. if training else 0.)

  m = Affine(3.)
  return m(tf.ones([2]), shift=1., training=True), repr(m), m.name


@probe("module_without_init")
def _(snt):
  class Plain(snt.Module):

    def __call__(self, x):
      return x + 1

  m = Plain()
  return m(1), m.name, repr(m), m.name_scope.name


@probe("module_base_repr_and_name")
def _(snt):
  return repr(snt.Module()), repr(snt.Module(name="abc")), snt.Module().name


@probe("variables_error_of_unbuilt_module")
def _(snt):
  m = snt.Linear(3)
  try:
    m.trainable_variables
  except ValueError as e:
    return str(e).splitlines()[0]


@probe("allow_empty_variables_instance_and_class")
def _(snt):
  @snt.allow_empty_variables
  class Stateless(snt.Module):
    pass

  plain = snt.Module(name="plain")
  return (Stateless().variables, Stateless().trainable_variables,
          snt.allow_empty_variables(plain) is plain, plain.variables)


@probe("module_variables_ordering")
def _(snt):
  class Holder(snt.Module):

    def __init__(self):
      super().__init__(name="holder")
      self.z = tf.Variable(1., name="z")
      self.a = tf.Variable(2., trainable=False, name="a")
      self.m = {"b": tf.Variable(3., name="b"), "a": tf.Variable(4., name="c")}
      self.layers = [snt.Linear(1, name="l2"), snt.Linear(1, name="l1")]

    def __call__(self, x):
      return [l(x) for l in self.layers]

  h = Holder()
  h(tf.ones([1, 1]))
  return ([v.name for v in h.variables],
          [v.name for v in h.trainable_variables],
          [v.name for v in h.non_trainable_variables],
          [m.name for m in h.submodules])


@probe("submodules_breadth_first")
def _(snt):
  class Inner(snt.Module):

    def __init__(self, name):
      super().__init__(name=name)
      self.leaf = snt.Linear(1, name=name + "_leaf")

  class Outer(snt.Module):

    def __init__(self):
      super().__init__(name="outer")
      self.b = Inner("b")
      self.a = Inner("a")
      self.c = [Inner("c0"), {"k": Inner("c1")}]

  return [m.name for m in Outer().submodules]


@probe("with_name_scope_and_module_methods")
def _(snt):
  m = snt.Linear(2, name="lin")
  with m.name_scope:
    v = tf.Variable(1., name="extra")
    inner = tf.get_current_name_scope()
  return v.name, inner, m.name_scope.name, tf.get_current_name_scope()


@probe("tf_module_flatten_and_with_name_scope")
def _(snt):
  m = snt.nets.MLP([2], name="mlp")
  m(tf.ones([1, 2]))
  flat = m._flatten(predicate=lambda v: isinstance(v, tf.Variable))  # pylint: disable=protected-access
  return sorted(v.name for v in flat), type(m).with_name_scope.__name__


@probe("deepcopy_of_built_module")
def _(snt):
  m = snt.Linear(2, name="lin")
  m(tf.ones([1, 3]))
  clone = copy.deepcopy(m)
  clone.w.assign_add(tf.ones_like(clone.w))
  return (clone.name, [v.name for v in clone.variables],
          bool(tf.reduce_all(clone.w == m.w)), repr(clone))


@probe("deepcopy_of_unbuilt_module_then_build")
def _(snt):
  m = snt.nets.MLP([3, 2], name="mlp")
  clone = copy.deepcopy(m)
  clone(tf.ones([1, 4]))
  return clone.name, [v.name for v in clone.variables]


@probe("pickle_unbuilt_module")
def _(snt):
  m = snt.Linear(2, name="lin")
  try:
    restored = pickle.loads(pickle.dumps(m))
  except Exception as e:  # pylint: disable=broad-except
    return "raises", type(e).__name__
  return restored.name, repr(restored)


@probe("checkpoint_round_trip_same_library")
def _(snt):
  import tempfile  # pylint: disable=g-import-not-at-top
  tf.random.set_seed(1)
  a = snt.nets.MLP([3, 2], name="mlp")
  a(tf.ones([1, 4]))
  b = snt.nets.MLP([3, 2], name="mlp")
  with tempfile.TemporaryDirectory() as path:
    saved = tf.train.Checkpoint(model=a).save(path + "/ckpt")
    status = tf.train.Checkpoint(model=b).restore(saved)
    out = b(tf.ones([1, 4]))
    status.assert_consumed()
    return bool(np.allclose(out, a(tf.ones([1, 4])))), sorted(
        n for n, _ in tf.train.list_variables(saved))


@probe("saved_model_of_module")
def _(snt):
  import tempfile  # pylint: disable=g-import-not-at-top
  m = snt.nets.MLP([3, 2], name="mlp")
  m(tf.ones([1, 4]))
  m.call = tf.function(m, input_signature=[tf.TensorSpec([None, 4])])
  with tempfile.TemporaryDirectory() as path:
    tf.saved_model.save(m, path)
    loaded = tf.saved_model.load(path)
    return loaded.call(tf.ones([2, 4])), m(tf.ones([2, 4]))


@probe("metric_subclass")
def _(snt):
  class Max(snt.Metric):

    def __init__(self, name=None):
      super().__init__(name=name)
      self.max = None

    @snt.once
    def initialize(self, value):
      self.max = tf.Variable(tf.fill(value.shape, -np.inf), trainable=False,
                             name="max")

    def update(self, value):
      self.initialize(value)
      self.max.assign(tf.maximum(self.max, value))

    @property
    def value(self):
      return tf.convert_to_tensor(self.max)

    def reset(self):
      self.max.assign(tf.fill(self.max.shape, -np.inf))

  m = Max()
  m.update(tf.constant([1., 5.]))
  out = m(tf.constant([3., 2.]))
  return out, m.name, [v.name for v in m.variables], repr(m)


@probe("optimizer_subclass")
def _(snt):
  class SignSGD(snt.Optimizer):

    def __init__(self, learning_rate, name=None):
      super().__init__(name=name)
      self.learning_rate = learning_rate

    def apply(self, updates, parameters):
      for u, p in zip(updates, parameters):
        if u is not None:
          p.assign_sub(self.learning_rate * tf.sign(u))

  opt = SignSGD(0.5)
  p = tf.Variable([1., 2.])
  opt.apply([tf.constant([-3., 4.])], [p])
  return p, opt.name, repr(opt)


@probe("optimizer_subclass_without_apply")
def _(snt):
  # Sonnet 2's metaclass wraps `apply`, so only Optimizer itself is abstract.
  class NoApply(snt.Optimizer):
    pass

  return NoApply().name, NoApply().apply([], [])


@probe("rnn_core_subclass_unrolled")
def _(snt):
  class Accumulate(snt.RNNCore):

    def __call__(self, inputs, prev_state):
      state = prev_state + inputs
      return state * 2., state

    def initial_state(self, batch_size, **kwargs):
      return tf.zeros([batch_size, 2])

  core = Accumulate()
  seq = tf.reshape(tf.range(12.), [3, 2, 2])
  return (snt.dynamic_unroll(core, seq, core.initial_state(2)),
          snt.static_unroll(core, seq, core.initial_state(2)))


@probe("unrolled_rnn_subclass")
def _(snt):
  class Cumsum(snt.UnrolledRNN):

    def __call__(self, input_sequence, initial_state):
      out = tf.cumsum(input_sequence, axis=0) + initial_state
      return out, out[-1]

    def initial_state(self, batch_size):
      return tf.zeros([batch_size, 2])

  core = Cumsum()
  return core(tf.ones([3, 1, 2]), core.initial_state(1))


@probe("initializer_subclass_in_linear")
def _(snt):
  class Arange(snt.initializers.Initializer):

    def __call__(self, shape, dtype):
      size = int(np.prod(shape))
      return tf.reshape(tf.cast(tf.range(size), dtype), shape)

  m = snt.Linear(2, w_init=Arange(), b_init=Arange())
  return m(tf.ones([1, 3])), m.w


@probe("regularizer_subclass")
def _(snt):
  class Count(snt.regularizers.Regularizer):

    def __call__(self, tensors):
      return tf.add_n([tf.cast(tf.size(t), tf.float32) for t in tensors])

  return Count()([tf.ones([2, 3]), tf.ones([4])])


@probe("module_with_properties_using_variables")
def _(snt):
  class WithProp(snt.Module):

    def __init__(self):
      super().__init__(name="p")
      self.v = tf.Variable(3., name="v")

    @property
    def doubled(self):
      return self.v * 2., tf.get_current_name_scope()

    @doubled.setter
    def doubled(self, value):
      self.v.assign(value / 2.)

  m = WithProp()
  before = m.doubled
  m.doubled = 10.
  return before, m.doubled


@probe("keras_layer_wraps_sonnet_module")
def _(snt):
  linear = snt.Linear(2, w_init=snt.initializers.Ones(), name="lin")
  model = tf.keras.Sequential([tf.keras.layers.Lambda(linear)])
  return model(tf.ones([1, 3]))


@probe("tf_module_methods_wrapped_by_tf_module_decorator")
def _(snt):
  class Decorated(snt.Module):

    @tf.Module.with_name_scope
    def f(self):
      return tf.get_current_name_scope()

  return Decorated(name="dec").f()


@probe("gradient_tape_through_module")
def _(snt):
  m = snt.nets.MLP([3, 1], w_init=snt.initializers.Constant(0.5), name="mlp")
  x = tf.reshape(tf.range(8.), [2, 4])
  with tf.GradientTape() as tape:
    loss = tf.reduce_sum(m(x))
  grads = tape.gradient(loss, m.trainable_variables)
  return loss, grads


@probe("training_loop_with_sgd")
def _(snt):
  tf.random.set_seed(3)
  model = snt.nets.MLP([8, 1], name="mlp")
  opt = snt.optimizers.SGD(0.05)
  x = tf.random.normal([16, 3], seed=1)
  y = tf.reduce_sum(x, axis=1, keepdims=True)

  @tf.function
  def step():
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean((model(x) - y) ** 2)
    grads = tape.gradient(loss, model.trainable_variables)
    opt.apply(grads, model.trainable_variables)
    return loss

  return [step() for _ in range(5)]


@probe("training_loop_with_adam_eager")
def _(snt):
  tf.random.set_seed(3)
  model = snt.Sequential([snt.Linear(4), tf.nn.relu, snt.Linear(1)])
  opt = snt.optimizers.Adam(0.01)
  x = tf.random.normal([16, 3], seed=1)
  losses = []
  for _ in range(3):
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean(model(x) ** 2)
    opt.apply(tape.gradient(loss, model.trainable_variables),
              model.trainable_variables)
    losses.append(loss)
  return losses, [v.name for v in opt.variables]



@probe("abstract_methods_of_module_subclasses")
def _(snt):
  import abc  # pylint: disable=g-import-not-at-top

  class Base(snt.Module):

    @abc.abstractmethod
    def f(self):
      """Abstract."""

  class Child(Base):
    pass

  outcomes = []
  for cls in (Base, Child):
    try:
      cls()
      outcomes.append("made")
    except TypeError:
      outcomes.append("abstract")
  return outcomes, Child().f()


def probes():
  return registered(__name__)
