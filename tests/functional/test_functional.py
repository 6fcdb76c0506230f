"""snt.functional, side by side with dm-sonnet 2.0.2's.

Each scenario runs once with sonnet_like and once with dm-sonnet on the same
values; results are compared by variable name. Without dm-sonnet the
sonnet_like half still runs against hand-computed expectations.
"""

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt


def _libraries():
  libs = [pytest.param(snt, id="sonnet_like")]
  try:
    import sonnet  # pylint: disable=g-import-not-at-top
    libs.append(pytest.param(sonnet, id="dm-sonnet"))
  except ImportError:
    pass
  return libs


LIBS = _libraries()


def _reference():
  return pytest.importorskip("sonnet")


def _by_name(values: dict) -> dict:
  return {ref.deref().name: np.asarray(v) for ref, v in values.items()}


def _with_values(values: dict, named: dict) -> dict:
  """`values`' keys with the arrays `named` gives for their names."""
  return {ref: tf.constant(named[ref.deref().name]) for ref in values}


def _assert_same(a: dict, b: dict, **kw):
  assert sorted(a) == sorted(b)
  for name in a:
    np.testing.assert_allclose(a[name], b[name], rtol=1e-6, atol=1e-6,
                               err_msg=name, **kw)


# --- TensorVariable ---------------------------------------------------------


@pytest.mark.parametrize("lib", LIBS)
def test_variables_makes_tensor_variables(lib):
  with lib.functional.variables(), tf.name_scope("foo"):
    v = tf.Variable(tf.ones([2]), name="v")
    s = tf.Variable(1., trainable=False)
  assert isinstance(v, tf.Variable)
  assert type(v).__name__ == "TensorVariable"
  assert (v.name, v.trainable, s.name, s.trainable) == (
      "foo/v:0", True, "foo/Variable:0", False)
  assert repr(v) == "TensorVariable(shape=[2], dtype=float32, name='foo/v:0')"
  v.assign_add([1., 2.])
  np.testing.assert_array_equal(v.numpy(), [2., 3.])
  np.testing.assert_array_equal(v.tensor_value, [2., 3.])
  np.testing.assert_array_equal(v.initial_tensor_value, [1., 1.])
  v.assign_sub(tf.ones([2]))
  np.testing.assert_array_equal(tf.convert_to_tensor(v), [1., 2.])
  np.testing.assert_array_equal(v * 2., [2., 4.])


def test_tensor_variable_scatter_updates():
  with snt.functional.variables():
    v = tf.Variable(tf.zeros([3, 2]))
  # dm-sonnet 2.0.2's TensorVariable lacks these (sparse_read fails there):
  # sparse optimizer updates need them.
  np.testing.assert_array_equal(v.sparse_read([1]), [[0., 0.]])
  v.scatter_sub(tf.IndexedSlices(tf.ones([1, 2]), tf.constant([1])))
  v.scatter_add(tf.IndexedSlices(tf.fill([1, 2], 5.), tf.constant([2])))
  np.testing.assert_array_equal(v.numpy(), [[0., 0.], [-1., -1.], [5., 5.]])
  with pytest.raises(NotImplementedError, match="TensorVariable"):
    v.scatter_mul(tf.IndexedSlices(tf.ones([1, 2]), tf.constant([1])))


@pytest.mark.parametrize("lib", LIBS)
def test_metadata_reads_are_not_uses(lib):
  with lib.functional.variables():
    v = tf.Variable(1.)
    s = tf.Variable(1., trainable=False)

  def f():
    return [(c.shape, c.dtype, c.trainable, c.name, c.device) for c in (v, s)]

  params, state = lib.functional.transform_with_state(f).init()
  assert params == {} and state == {}


@pytest.mark.parametrize("lib", LIBS)
def test_reading_a_variable_without_value_raises(lib):
  def f(model):
    if not model:
      model.append(tf.Variable(1.))
    return model[0].read_value() + 1.

  f = lib.functional.transform_with_state(f)
  model = []
  f.init(model)
  with pytest.raises(ValueError, match="TensorVariable .* has no value"):
    f.init(model)


# --- transform --------------------------------------------------------------


@pytest.mark.parametrize("lib", LIBS)
def test_transform_linear(lib):
  mod = lib.Linear(1, w_init=tf.ones, name="lin")
  f = lib.functional.transform(mod)
  x = tf.ones([1, 1])
  params = f.init(x)
  assert sorted(_by_name(params)) == ["lin/b:0", "lin/w:0"]
  assert mod.w.tensor_value is None  # Made by init: values live in params.
  np.testing.assert_array_equal(f.apply(params, x), [[1.]])
  plus_one = {r: p + 1 for r, p in params.items()}
  np.testing.assert_array_equal(f.apply(plus_one, x), [[3.]])
  assert mod.w.tensor_value is None  # apply leaves the variables alone.


@pytest.mark.parametrize("lib", LIBS)
def test_existing_values_preserved(lib):
  with lib.functional.variables():
    v = tf.Variable(2.)
  f = lib.functional.transform(lambda: v * 3.)
  params = f.init()
  np.testing.assert_array_equal(params[v.ref()], 2.)
  np.testing.assert_array_equal(f.apply({v.ref(): tf.constant(5.)}), 15.)
  np.testing.assert_array_equal(v.tensor_value, 2.)


@pytest.mark.parametrize("lib", LIBS)
def test_apply_cannot_create_variables(lib):
  calls = []

  def f():
    calls.append(1)
    if len(calls) > 1:
      tf.Variable(1.)
    return tf.constant(1.)

  f = lib.functional.transform(f)
  params = f.init()
  with pytest.raises(ValueError,
                     match="Apply function cannot create new variables"):
    f.apply(params)


@pytest.mark.parametrize("lib", LIBS)
def test_transform_refuses_state(lib):
  with lib.functional.variables():
    ema = lib.ExponentialMovingAverage(decay=0.5)
  with pytest.raises(ValueError, match="Stateful networks must use"):
    lib.functional.transform(ema).init(1.)


@pytest.mark.parametrize("lib", LIBS)
def test_transform_with_state_ema(lib):
  with lib.functional.variables():
    ema = lib.ExponentialMovingAverage(decay=0.5, name="ema")
  f = lib.functional.transform_with_state(ema)
  params, state = f.init(3.0)
  assert params == {}
  assert sorted(_by_name(state)) == ["ema/average:0", "ema/counter:0",
                                     "ema/hidden:0"]
  y, state = f.apply(params, state, 3.0)
  assert float(y) == 3.0
  y, state = f.apply(params, state, 6.0)
  assert float(y) == 5.0


def test_mlp_and_batch_norm_match_dm_sonnet():
  sonnet = _reference()
  x = tf.constant(np.random.default_rng(0).normal(size=[4, 3]), tf.float32)
  results = {}
  named = None
  for lib in (snt, sonnet):
    with lib.functional.variables():
      mlp = lib.nets.MLP([5, 2], name="mlp")
      bn = lib.BatchNorm(True, True, name="bn")
    f = lib.functional.transform_with_state(
        lambda x, mlp=mlp, bn=bn: bn(mlp(x), is_training=True))
    params, state = f.init(x)
    if named is None:
      named = _by_name(params)
    params = _with_values(params, named)
    y, state = f.apply(params, state, x)
    y2, state = f.apply(params, state, x)
    results[lib] = (sorted(_by_name(params)), y.numpy(), y2.numpy(),
                    _by_name(state))
  ours, theirs = results[snt], results[sonnet]
  assert ours[0] == theirs[0]
  np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-5, atol=1e-5)
  _assert_same({k: v for k, v in ours[3].items() if "counter" not in k},
               {k: v for k, v in theirs[3].items() if "counter" not in k})


# --- grad, value_and_grad, jit, device_get/put ------------------------------


@pytest.mark.parametrize("lib", LIBS)
def test_grad_and_value_and_grad(lib):
  f = lambda x, y: (x * y, "aux")  # pylint: disable=unnecessary-lambda-assignment
  x, y = tf.constant(2.), tf.constant(3.)
  (value, aux), (gx, gy) = lib.functional.value_and_grad(
      f, argnums=(0, 1), has_aux=True)(x, y)
  assert (float(value), aux, float(gx), float(gy)) == (6., "aux", 3., 2.)
  g, aux = lib.functional.grad(f, argnums=1, has_aux=True)(x, y)
  assert (float(g), aux) == (2., "aux")
  assert float(lib.functional.grad(lambda x: x ** 3)(x)) == 12.
  assert lib.functional.grad(f).__name__ == "<lambda>"


@pytest.mark.parametrize("lib", LIBS)
def test_grad_of_python_number_raises_like_sonnet(lib):
  with pytest.raises(ValueError, match="not tf.Tensor"):
    lib.functional.grad(lambda x: x * 2.)(2.)


@pytest.mark.parametrize("lib", LIBS)
def test_grad_through_transform(lib):
  mod = lib.Linear(1, w_init=tf.ones, name="lin")
  f = lib.functional.transform(lambda x: tf.reduce_sum(mod(x)))
  x = tf.constant([[2.]])
  params = f.init(x)
  grads = lib.functional.grad(f.apply)(params, x)
  assert _by_name(grads) == {"lin/w:0": [[2.]], "lin/b:0": [1.]}


@pytest.mark.parametrize("lib", LIBS)
def test_jit(lib):
  traces = []

  def f(x, y):
    traces.append(1)
    return x * y

  jitted = lib.functional.jit(f)
  assert float(jitted(2., 3.)) == 6.
  assert float(jitted(tf.constant(4.), tf.constant(5.))) == 20.
  assert float(jitted(tf.constant(1.), tf.constant(5.))) == 5.
  assert len(traces) == 2  # One trace for Python numbers, one for tensors.
  assert "CPU:0" in jitted(tf.ones([]), tf.ones([])).device


@pytest.mark.parametrize("lib", LIBS)
def test_jit_of_apply(lib):
  mod = lib.Linear(2, name="lin")
  f = lib.functional.transform(mod)
  x = tf.ones([1, 3])
  params = f.init(x)
  np.testing.assert_allclose(lib.functional.jit(f.apply)(params, x),
                             f.apply(params, x), rtol=1e-6)


@pytest.mark.parametrize("lib", LIBS)
def test_device_get_and_put(lib):
  got = lib.functional.device_get({"a": tf.ones([2]), "b": [tf.zeros([])]})
  assert isinstance(got["a"], np.ndarray) and isinstance(got["b"][0],
                                                         np.float32)
  put = lib.functional.device_put([1., np.ones([2])], "/device:CPU:0")
  assert all(isinstance(t, tf.Tensor) and t.device.endswith("CPU:0")
             for t in put)


# --- optimizers -------------------------------------------------------------


_OPTIMIZERS = [("sgd", dict(learning_rate=0.1)),
               ("adam", dict(learning_rate=0.1)),
               ("momentum", dict(learning_rate=0.1, momentum=0.9)),
               ("rmsprop", dict(learning_rate=0.1, centered=True))]


def _train(lib, name, kwargs, named_params=None, steps=3):
  """Three steps of a functional optimizer on a small Linear."""
  mod = lib.Linear(2, name="lin")
  loss = lib.functional.transform(lambda x: tf.reduce_sum(mod(x) ** 2))
  x = tf.constant([[1., -2., 0.5]])
  params = loss.init(x)
  if named_params is not None:
    params = _with_values(params, named_params)
  opt = getattr(lib.functional, name)(**kwargs)
  opt_state = opt.init(params)
  initial_state = _by_name(opt_state)
  for _ in range(steps):
    grads = lib.functional.grad(loss.apply)(params, x)
    params, opt_state = opt.apply(opt_state, grads, params)
  return _by_name(params), initial_state, _by_name(opt_state)


@pytest.mark.parametrize("name,kwargs", _OPTIMIZERS,
                         ids=[n for n, _ in _OPTIMIZERS])
def test_functional_optimizers_reduce_loss(name, kwargs):
  mod = snt.Linear(2, name="lin")
  loss = snt.functional.transform(lambda x: tf.reduce_sum(mod(x) ** 2))
  x = tf.constant([[1., -2., 0.5]])
  params = loss.init(x)
  before = float(loss.apply(params, x))
  opt = getattr(snt.functional, name)(**kwargs)
  opt_state = opt.init(params)
  for _ in range(3):
    grads = snt.functional.grad(loss.apply)(params, x)
    params, opt_state = opt.apply(opt_state, grads, params)
  assert float(loss.apply(params, x)) < before
  assert mod.w.tensor_value is None  # Nothing leaked into the module.


@pytest.mark.parametrize("name,kwargs", _OPTIMIZERS,
                         ids=[n for n, _ in _OPTIMIZERS])
def test_functional_optimizers_match_dm_sonnet(name, kwargs):
  sonnet = _reference()
  start = {"lin/w:0": np.array([[.1, -.2], [.3, .4], [-.5, .6]], np.float32),
           "lin/b:0": np.zeros([2], np.float32)}
  ours = _train(snt, name, kwargs, start)
  theirs = _train(sonnet, name, kwargs, start)
  _assert_same(ours[0], theirs[0])
  for mine, reference in zip(ours[1:], theirs[1:]):
    # Step counters: dm-sonnet's variable creator drops `dtype` (its Adam
    # counter comes out int32); ours keeps the module's int64.
    _assert_same(mine, reference)


def test_optimizer_wraps_constructor():
  factory = snt.functional.optimizer(snt.optimizers.SGD)
  assert factory.__wrapped__ is snt.optimizers.SGD.__init__
  with pytest.raises(ValueError, match="learning_rate"):
    snt.functional.sgd(learning_rate=-1.)
