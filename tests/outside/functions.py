"""Probes: Sonnet 2's functions, initializers, regularizers and pads."""

import io
import logging

import numpy as np
import tensorflow as tf

from tests.outside.framework import probe
from tests.outside.framework import registered


def _values(shape, dtype=tf.float32):
  return tf.cast(tf.reshape(tf.range(int(np.prod(shape))), shape), dtype)


@probe("format_variables_table")
def _(snt):
  m = snt.nets.MLP([3, 2], name="mlp")
  m(tf.ones([1, 4]))
  bn = snt.BatchNorm(True, True, name="bn")
  bn(tf.ones([2, 3]), is_training=True)
  return (snt.format_variables(m.variables + bn.variables),
          snt.format_variables(m.variables, tablefmt="plain"))


@probe("format_variables_dtypes_and_scalars")
def _(snt):
  variables = [tf.Variable(1, name="step"), tf.Variable(tf.ones([2], tf.float16),
                                                        name="h"),
               tf.Variable(tf.zeros([2, 2], tf.float64), trainable=False,
                           name="d"), tf.Variable(tf.ones([], tf.bfloat16),
                                                  name="b")]
  return snt.format_variables(variables)


@probe("log_variables_lines")
def _(snt):
  from absl import logging as absl_logging  # pylint: disable=g-import-not-at-top
  m = snt.Linear(2, name="lin")
  m(tf.ones([1, 3]))
  stream = io.StringIO()
  handler = logging.StreamHandler(stream)
  logger = absl_logging.get_absl_logger()
  level = absl_logging.get_verbosity()
  logger.addHandler(handler)
  absl_logging.set_verbosity(absl_logging.INFO)
  try:
    snt.log_variables(m.variables)
  finally:
    logger.removeHandler(handler)
    absl_logging.set_verbosity(level)
  return stream.getvalue()


@probe("scale_gradient_value_and_gradient")
def _(snt):
  x = tf.constant([1., -2., 3.])
  with tf.GradientTape(persistent=True) as tape:
    tape.watch(x)
    y = snt.scale_gradient(x, 0.25)
    z = snt.scale_gradient(x * 2., tf.constant(-1.))
    zero = snt.scale_gradient(x, 0.)
  return (y, tape.gradient(y, x), tape.gradient(z, x), zero,
          tape.gradient(zero, x))


@probe("scale_gradient_nested_and_in_tf_function")
def _(snt):
  x = tf.constant([1., 2.])

  @tf.function
  def f(x):
    with tf.GradientTape() as tape:
      tape.watch(x)
      y = snt.scale_gradient(x * x, 3.)
    return y, tape.gradient(y, x)

  return f(x)


@probe("scale_gradient_float16")
def _(snt):
  x = tf.constant([1., 2.], tf.float16)
  with tf.GradientTape() as tape:
    tape.watch(x)
    y = snt.scale_gradient(x, 0.5)
  return y, tape.gradient(y, x)


@probe("leaky_clip_by_value")
def _(snt):
  x = tf.constant([-3., -0.5, 0., 0.5, 3.])
  with tf.GradientTape() as tape:
    tape.watch(x)
    y = snt.leaky_clip_by_value(x, -1., 1.)
  return y, tape.gradient(y, x), snt.leaky_clip_by_value(
      tf.constant([5.], tf.float64), 0., 1.)


@probe("merge_and_split_leading_dims")
def _(snt):
  x = _values([2, 3, 4])
  merged = snt.merge_leading_dims(x, 2)
  return (merged, snt.split_leading_dim(merged, x, 2),
          snt.merge_leading_dims(x, 3), snt.merge_leading_dims(x, 5),
          snt.merge_leading_dims("text", 2),
          snt.split_leading_dim("text", x, 2))


@probe("merge_leading_dims_unknown_batch")
def _(snt):
  f = tf.function(lambda x: snt.merge_leading_dims(x, 2))
  concrete = f.get_concrete_function(tf.TensorSpec([None, 3, 4]))
  return concrete.structured_outputs.shape, f(_values([2, 3, 4]))


@probe("reshape_and_flatten_functions")
def _(snt):
  x = _values([2, 3, 4])
  return (snt.reshape(x, output_shape=(-1, 2)),
          snt.reshape(x, output_shape=(4, 3), preserve_dims=1),
          snt.flatten(x), snt.flatten(x, name="flat"),
          snt.reshape(x, (12,), name="r"))


@probe("reshape_module_attributes_and_reverse")
def _(snt):
  m = snt.Reshape((-1, 2), preserve_dims=1)
  out = m(_values([2, 3, 4]))
  back = m.reversed()
  return out, back(out), repr(back), back.name


@probe("flatten_unknown_batch_in_tf_function")
def _(snt):
  m = snt.Flatten()
  f = tf.function(m).get_concrete_function(tf.TensorSpec([None, 3, 4]))
  return f.structured_outputs.shape


@probe("build_module_and_function")
def _(snt):
  linear = snt.Linear(3)
  spec = snt.build(linear, tf.TensorSpec([None, 2]))
  nested = snt.build(lambda d: {"a": d["x"] * 2, "b": tf.cast(d["y"],
                                                            tf.int64)},
                     {"x": tf.TensorSpec([4]), "y": tf.TensorSpec([2])})
  from_shape = snt.build(snt.Linear(2), [None, 5])
  return spec, nested, from_shape, [v.name for v in linear.variables]


@probe("pad_functions")
def _(snt):
  results = {}
  for name in ("valid", "same", "full", "causal", "reverse_causal"):
    fn = getattr(snt.pad, name)
    results[name] = [fn(k) for k in (1, 2, 3, 4, 5)]
  return results


@probe("pad_create")
def _(snt):
  return (snt.pad.create(snt.pad.same, 3, 1, 2, 1),
          snt.pad.create([snt.pad.causal, snt.pad.full], [3, 2], [2, 1], 2,
                         -1),
          snt.pad.create(snt.pad.valid, 5, 2, n=1, channel_index=1),
          snt.pad.create(snt.pad.reverse_causal, [4], [1], 1, 1))


@probe("custom_variable_getter_casts")
def _(snt):
  m = snt.Linear(2, w_init=snt.initializers.Constant(0.5), name="lin")
  m(tf.ones([1, 3]))

  def half(v):
    return tf.cast(v, tf.float16)

  with snt.custom_variable_getter(half):
    w = m.w
    out = tf.matmul(tf.ones([1, 3], tf.float16), m.w) + m.b
  return w, out, m.w


@probe("custom_variable_getter_in_tf_function")
def _(snt):
  m = snt.Linear(2, w_init=snt.initializers.Constant(0.5), name="lin")
  m(tf.ones([1, 3]))

  @tf.function
  def f(x):
    with snt.custom_variable_getter(lambda v: v * 2.):
      return m(x)

  return f(tf.ones([1, 3])), m(tf.ones([1, 3]))


@probe("once_function_and_method")
def _(snt):
  seen = []

  @snt.once
  def f():
    seen.append("f")

  f(), f()

  class A:

    @snt.once
    def g(self):
      seen.append("g")

  a = A()
  a.g(), a.g(), A().g()
  return seen


@probe("initializer_attributes")
def _(snt):
  i = snt.initializers
  made = [i.Zeros(), i.Ones(), i.Constant(2.), i.RandomUniform(),
          i.RandomNormal(), i.TruncatedNormal(), i.Identity(), i.Orthogonal(),
          i.VarianceScaling(), i.RandomUniform(-2, 3, seed=1),
          i.RandomNormal(1., 2., 4), i.TruncatedNormal(0.5, 0.1, 2),
          i.Identity(2.), i.Orthogonal(3., 5),
          i.VarianceScaling(2., "fan_out", "normal", 7)]
  return [(type(m).__name__, {k: v for k, v in vars(m).items()
                              if not k.startswith("_")}) for m in made]


@probe("deterministic_initializers_in_dtypes")
def _(snt):
  i = snt.initializers
  out = []
  for init in (i.Zeros(), i.Ones(), i.Constant(3), i.Identity(2.)):
    for dtype in (tf.float16, tf.bfloat16, tf.float64, tf.int32):
      try:
        out.append(init([3, 3], dtype))
      except Exception as e:  # pylint: disable=broad-except
        out.append(type(e).__name__)
  return out


@probe("random_initializers_in_dtypes_and_shapes")
def _(snt):
  i = snt.initializers
  out = []
  for init in (i.RandomUniform(seed=1), i.RandomNormal(seed=1),
               i.TruncatedNormal(seed=1), i.VarianceScaling(seed=1),
               i.Orthogonal(seed=1)):
    for dtype in (tf.float16, tf.bfloat16, tf.float64):
      for shape in ([4, 3], [2, 3, 4], [3, 3, 2, 5]):
        try:
          value = init(shape, dtype)
          out.append((value.shape, value.dtype))
        except Exception as e:  # pylint: disable=broad-except
          out.append(type(e).__name__)
  return out


@probe("variance_scaling_statistics")
def _(snt):
  out = []
  for mode in ("fan_in", "fan_out", "fan_avg"):
    for distribution in ("truncated_normal", "normal", "uniform"):
      init = snt.initializers.VarianceScaling(2., mode, distribution, seed=3)
      value = init([40, 30, 3], tf.float64)
      out.append(round(float(tf.math.reduce_std(value)), 1))
  return out, snt.initializers.VarianceScaling(seed=2)([], tf.float32)


@probe("random_uniform_integer_dtype")
def _(snt):
  return snt.initializers.RandomUniform(0, 10, seed=2)([3, 3], tf.int32)


@probe("orthogonal_is_orthogonal")
def _(snt):
  w = snt.initializers.Orthogonal(seed=1)([3, 5], tf.float64)
  return tf.matmul(w, w, transpose_b=True)


@probe("identity_initializer_rectangular_and_conv")
def _(snt):
  i = snt.initializers.Identity(gain=2.)
  return i([2, 3], tf.float32), i([3, 2], tf.float32), i([1, 1, 2, 2],
                                                        tf.float32)


@probe("regularizers")
def _(snt):
  r = snt.regularizers
  xs = [_values([2, 3]), _values([3]) - 1.]
  return (r.L1(0.5)(xs), r.L2(0.5)(xs), r.OffDiagonalOrthogonal(2.)(xs[:1]),
          r.L1(0.)(xs), r.L2(1.)([]), r.L1(1.)([]),
          r.OffDiagonalOrthogonal(1.)([]))


@probe("regularizer_attributes_and_repr")
def _(snt):
  r = snt.regularizers
  made = [r.L1(0.5), r.L2(2), r.OffDiagonalOrthogonal(1.)]
  return [(type(m).__name__, m.scale, repr(m)) for m in made]


@probe("regularizers_float64_and_int_scale")
def _(snt):
  r = snt.regularizers
  x = [tf.constant([[1., 2.], [3., 4.]], tf.float64)]
  return r.L1(1)(x), r.L2(2)(x), r.OffDiagonalOrthogonal(1)(x)


@probe("mixed_precision_modes_on_linear")
def _(snt):
  m = _half_linear(snt, [tf.float32, tf.float16])(
      2, w_init=snt.initializers.Ones())
  try:
    with snt.mixed_precision.scope(tf.float16):
      first = m(tf.ones([1, 3]))
      second = m(tf.ones([1, 3]))
    third = m(tf.ones([1, 3]))
  finally:
    snt.mixed_precision.disable()
  return first, second, third, [v.dtype for v in m.variables]


@probe("mixed_precision_enable_disable")
def _(snt):
  m = _half_linear(snt, [tf.float32, tf.bfloat16])(
      2, w_init=snt.initializers.Ones())
  outs = [m(tf.ones([1, 3]))]
  snt.mixed_precision.enable(tf.bfloat16)
  try:
    outs.append(m(tf.ones([1, 3])))
  finally:
    snt.mixed_precision.disable()
  outs.append(m(tf.ones([1, 3])))
  return outs


@probe("mixed_precision_unsupported_dtype_passes_through")
def _(snt):
  class Only32(snt.Linear):
    __call__ = snt.mixed_precision.modes([tf.float32])(snt.Linear.__call__)

  m = Only32(2, w_init=snt.initializers.Ones())
  try:
    with snt.mixed_precision.scope(tf.float16):
      return m(tf.ones([1, 3]))
  finally:
    snt.mixed_precision.disable()


def probes():
  return registered(__name__)


def _half_linear(snt, dtypes=None):
  dtypes = dtypes or [tf.float32, tf.float16, tf.bfloat16]

  class HalfLinear(snt.Linear):
    __call__ = snt.mixed_precision.modes(dtypes)(snt.Linear.__call__)

  return HalfLinear


def _outputs_in_scope(snt, dtype, calls):
  try:
    with snt.mixed_precision.scope(dtype):
      return [call() for call in calls]
  finally:
    snt.mixed_precision.disable()


@probe("mixed_precision_several_instances")
def _(snt):
  cls = _half_linear(snt)
  a = cls(2, w_init=snt.initializers.Ones(), name="a")
  b = cls(2, w_init=snt.initializers.Ones(), name="b")
  x = tf.ones([1, 3])
  outs = _outputs_in_scope(snt, tf.float16, [lambda: a(x), lambda: a(x),
                                             lambda: b(x), lambda: b(x)])
  return [(o.dtype, o) for o in outs]


@probe("mixed_precision_nested_modules")
def _(snt):
  cls = _half_linear(snt)

  class Net(snt.Module):

    def __init__(self):
      super().__init__(name="net")
      self.first = cls(3, w_init=snt.initializers.Constant(0.5))
      self.second = cls(2, w_init=snt.initializers.Constant(0.5))

    @snt.mixed_precision.modes([tf.float32, tf.float16])
    def __call__(self, x):
      return self.second(tf.nn.relu(self.first(x))), x.dtype

  net = Net()
  x = tf.ones([1, 4])
  outs = _outputs_in_scope(snt, tf.float16, [lambda: net(x), lambda: net(x),
                                             lambda: net(x)])
  return [(o.dtype, o, seen) for o, seen in outs]


@probe("mixed_precision_bfloat16_inputs")
def _(snt):
  cls = _half_linear(snt)
  m = cls(2, w_init=snt.initializers.Ones())
  m(tf.ones([1, 3]))
  x = tf.ones([1, 3], tf.bfloat16)
  outs = _outputs_in_scope(snt, tf.bfloat16, [lambda: m(x), lambda: m(x)])
  return [(o.dtype, o) for o in outs]


@probe("mixed_precision_module_made_in_tf_function")
def _(snt):
  cls = _half_linear(snt)
  made = []

  @tf.function
  def f(x):
    if not made:
      made.append(cls(2, w_init=snt.initializers.Ones()))
    return made[0](x)

  outs = _outputs_in_scope(snt, tf.float16, [lambda: f(tf.ones([1, 3])),
                                             lambda: f(tf.ones([1, 3]))])
  return [(o.dtype, o) for o in outs], [v.dtype for v in made[0].variables]


@probe("mixed_precision_scope_nesting_and_mode_outside")
def _(snt):
  cls = _half_linear(snt)
  m = cls(2, w_init=snt.initializers.Ones())
  x = tf.ones([1, 3])
  seen = []
  try:
    with snt.mixed_precision.scope(tf.float16):
      seen.append(m(x).dtype)
      with snt.mixed_precision.scope(tf.bfloat16):
        seen.append(m(x).dtype)
      seen.append(m(x).dtype)
    seen.append(m(x).dtype)
    snt.mixed_precision.enable(tf.float16)
    seen.append(m(x).dtype)
    snt.mixed_precision.disable()
    seen.append(m(x).dtype)
  finally:
    snt.mixed_precision.disable()
  return seen


@probe("mixed_precision_on_a_function")
def _(snt):
  @snt.mixed_precision.modes([tf.float16])
  def double(x):
    return x * 2., x.dtype

  outs = _outputs_in_scope(snt, tf.float16, [lambda: double(tf.ones([2])),
                                             lambda: double(tf.ones([2]))])
  return [(o.dtype, o, dtype) for o, dtype in outs]


@probe("mixed_precision_gradients_in_half")
def _(snt):
  cls = _half_linear(snt)
  m = cls(2, w_init=snt.initializers.Ones())
  x = tf.ones([1, 3])
  m(x)
  try:
    with snt.mixed_precision.scope(tf.float16):
      with tf.GradientTape() as tape:
        loss = tf.reduce_sum(m(x))
      grads = tape.gradient(loss, m.trainable_variables)
  finally:
    snt.mixed_precision.disable()
  return loss, grads
