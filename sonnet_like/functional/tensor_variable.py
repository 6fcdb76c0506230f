"""`TensorVariable`: a `tf.Variable` whose value is a tensor held in Python.

Inside `snt.functional.variables()` every `tf.Variable(...)` call makes a
`TensorVariable` instead. Its value can be swapped from outside (that is how
`transform(f).apply(params, ...)` runs `f` with given parameters), and each
read or write is reported to whoever listens (that is how `init` learns which
variables `f` uses).
"""

import contextlib
import threading
from typing import Any, Callable, Iterator

import tensorflow as tf

from sonnet_like.core.tf_private import variables

NO_VALUE_ERROR = """\
Attempted to read a TensorVariable in a context where it has no value: \
{variable!r}.

The values of variables made under `snt.functional.variables()` live in the
dictionaries that transformed functions return and take. This error usually
means one of:

  1) A model built in one transformed function is read (e.g. `model.w`,
     `model.variables`) inside another transformed function. Metadata
     (`v.shape`, `v.dtype`, `v.name`) is fine; to use values, pass them in
     (the result of `f.init(...)`).
  2) A model variable is read outside any transformed function: look at the
     `params` (and `state`) dictionaries returned by `f.init(...)` instead."""


class _Listeners(threading.local):
  """The callbacks, per thread, told about every use of a TensorVariable."""

  def __init__(self):
    super().__init__()
    self.stack: list[Callable[["TensorVariable"], None]] = []


_LISTENERS = _Listeners()


@contextlib.contextmanager
def listening(callback: Callable[["TensorVariable"], None]) -> Iterator[None]:
  """Calls `callback(variable)` on each use of a TensorVariable in the block."""
  _LISTENERS.stack.append(callback)
  try:
    yield
  finally:
    _LISTENERS.stack.remove(callback)


def _used(variable: "TensorVariable") -> None:
  for callback in tuple(_LISTENERS.stack):
    callback(variable)


def _scatter_method(method_name: str,
                    op: Callable[..., tf.Tensor]) -> Callable[..., tf.Tensor]:
  """`tf.Variable.<method_name>(sparse_delta)`, written with `op`."""

  def method(self, sparse_delta, use_locking=False, name=None):
    del use_locking, name
    return self._scatter(op, sparse_delta)  # pylint: disable=protected-access

  method.__name__ = method.__qualname__ = method_name
  return method


def _scatter_nd_method(method_name: str,
                       op: Callable[..., tf.Tensor]
                       ) -> Callable[..., tf.Tensor]:
  """`tf.Variable.<method_name>(indices, updates)`, written with `op`."""

  def method(self, indices, updates, name=None):
    del name
    return self._write(  # pylint: disable=protected-access
        updates, lambda old, u: op(old, indices, u))

  method.__name__ = method.__qualname__ = method_name
  return method


class TensorVariable(variables.ResourcelessVariable):
  """A `tf.Variable` backed by a `tf.Tensor` (`tensor_value`).

  Reading it returns `tensor_value`; assigning replaces `tensor_value` (no
  state changes on any device). `initial_tensor_value` is the first value it
  held. Both are None for a variable created by `transform(f).init`, outside
  the transformed function.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> with snt.functional.variables():
      ...   v = tf.Variable(1.0, name="v")
      >>> v
      TensorVariable(shape=[], dtype=float32, name='v:0')
      >>> _ = v.assign_add(2.0)
      >>> float(v.tensor_value), float(v.initial_tensor_value)
      (3.0, 1.0)
  """

  def __init__(self, value: tf.Tensor, trainable: bool = True,
               name: str | None = None):
    # tf.Variable.__init__ is deliberately not called (see the wall,
    # `core/tf_private/variables.py`): it would make a resource on a
    # device. Only the metadata below and the value exist.
    self.initial_tensor_value = value
    self.tensor_value = value
    self._tv_trainable = bool(trainable)
    self._tv_name = name
    self._tv_shape = value.shape
    self._tv_dtype = value.dtype
    self._tv_device = value.device

  # Metadata: reading it is not a use of the value.
  shape = property(lambda self: self._tv_shape)
  dtype = property(lambda self: self._tv_dtype)
  trainable = property(lambda self: self._tv_trainable)
  name = property(lambda self: self._tv_name)
  device = property(lambda self: self._tv_device)

  def get_shape(self) -> tf.TensorShape:
    return self._tv_shape

  def set_shape(self, shape) -> None:
    self._tv_shape = self._tv_shape.merge_with(shape)

  # Reads.

  def _read(self) -> tf.Tensor:
    _used(self)
    if self.tensor_value is None:
      raise ValueError(NO_VALUE_ERROR.format(variable=self))
    return self.tensor_value

  def value(self) -> tf.Tensor:
    return self._read()

  def read_value(self) -> tf.Tensor:
    return self._read()

  def numpy(self):
    return self._read().numpy()

  def initialized_value(self) -> tf.Tensor:
    _used(self)
    return self.initial_tensor_value

  def sparse_read(self, indices, name=None) -> tf.Tensor:
    return tf.gather(self._read(), indices, name=name)

  def gather_nd(self, indices, name=None) -> tf.Tensor:
    return tf.gather_nd(self._read(), indices, name=name)

  # Writes.

  def _write(self, value: Any,
             combine: Callable[[tf.Tensor, tf.Tensor], tf.Tensor] | None,
             read_value: bool = True) -> tf.Tensor | None:
    _used(self)
    if value is not None:
      value = tf.convert_to_tensor(value, dtype=self._tv_dtype)
    if combine is not None:
      value = combine(self._read(), value)
    if self.initial_tensor_value is None:
      self.initial_tensor_value = value
    self.tensor_value = value
    return value if read_value else None

  def assign(self, value, use_locking=None, name=None, read_value=True):
    del use_locking, name
    return self._write(value, None, read_value)

  def assign_add(self, delta, use_locking=None, name=None, read_value=True):
    del use_locking, name
    return self._write(delta, tf.add, read_value)

  def assign_sub(self, delta, use_locking=None, name=None, read_value=True):
    del use_locking, name
    return self._write(delta, tf.subtract, read_value)

  def _scatter(self, op, sparse_delta: tf.IndexedSlices) -> tf.Tensor:
    indices = tf.expand_dims(sparse_delta.indices, -1)
    return self._write(
        sparse_delta.values,
        lambda old, values: op(old, indices, values))

  scatter_add = _scatter_method("scatter_add", tf.tensor_scatter_nd_add)
  scatter_sub = _scatter_method("scatter_sub", tf.tensor_scatter_nd_sub)
  scatter_update = _scatter_method("scatter_update",
                                   tf.tensor_scatter_nd_update)
  scatter_max = _scatter_method("scatter_max", tf.tensor_scatter_nd_max)
  scatter_min = _scatter_method("scatter_min", tf.tensor_scatter_nd_min)
  scatter_nd_add = _scatter_nd_method("scatter_nd_add",
                                      tf.tensor_scatter_nd_add)
  scatter_nd_sub = _scatter_nd_method("scatter_nd_sub",
                                      tf.tensor_scatter_nd_sub)
  scatter_nd_update = _scatter_nd_method("scatter_nd_update",
                                         tf.tensor_scatter_nd_update)

  def _unsupported(self, *args, **kwargs):
    del args, kwargs
    _used(self)
    raise NotImplementedError(
        f"{self!r} holds a tensor, not a device resource: this operation is "
        "not available on it.")

  batch_scatter_update = scatter_mul = scatter_div = _unsupported
  load = to_proto = count_up_to = eval = _unsupported

  def __repr__(self) -> str:
    shape = (self._tv_shape.as_list() if self._tv_shape.rank is not None
             else None)
    return (f"TensorVariable(shape={shape}, dtype={self._tv_dtype.name}, "
            f"name={self._tv_name!r})")

  __str__ = __repr__


def _to_tensor(variable: TensorVariable, dtype=None, name=None,
               as_ref=False) -> tf.Tensor:
  del as_ref
  _used(variable)
  value = variable.tensor_value
  if value is None:
    # Only the shape and dtype are known (e.g. while tracing metadata).
    value = tf.zeros(variable.shape, variable.dtype)
  if dtype is not None and dtype != value.dtype:
    value = tf.cast(value, dtype, name=name)
  return value


tf.register_tensor_conversion_function(TensorVariable, _to_tensor)


def _current_scope() -> str:
  scope = tf.get_current_name_scope()
  return f"{scope}/" if scope else ""


@contextlib.contextmanager
def variables() -> Iterator[None]:
  """A scope in which `tf.Variable(...)` creates `TensorVariable`s.

  Build the modules you will transform inside it:

      >>> import sonnet_like as snt, tensorflow as tf
      >>> with snt.functional.variables():
      ...   v = tf.Variable(tf.ones([]), name="v")
      >>> v.tensor_value
      <tf.Tensor: shape=(), dtype=float32, numpy=1.0>

  Yields:
    Nothing; leave the block to create ordinary variables again.
  """

  with tf.variable_creator_scope(creator_of(TensorVariable)):
    yield


def creator_of(cls: type, made: list | None = None) -> Callable[..., Any]:
  """A variable creator making a `cls` (a `TensorVariable` class) of each
  `tf.Variable(...)` call, appended to `made` if given."""

  def creator(next_creator, **kwargs):
    del next_creator
    initial = kwargs.get("initial_value")
    if callable(initial):
      initial = initial()
    dtype = kwargs.get("dtype")
    value = tf.convert_to_tensor(
        initial, dtype=None if dtype is None else tf.as_dtype(dtype))
    trainable = kwargs.get("trainable")
    name = kwargs.get("name") or "Variable"
    variable = cls(value, trainable=True if trainable is None else trainable,
                   name=f"{_current_scope()}{name}:0")
    if made is not None:
      made.append(variable)
    return variable

  return creator


@contextlib.contextmanager
def new_variables() -> Iterator[list[tf.Variable]]:
  """Collects every variable created in the block, of any kind."""
  created = []

  def creator(next_creator, **kwargs):
    variable = next_creator(**kwargs)
    created.append(variable)
    return variable

  with tf.variable_creator_scope(creator):
    yield created
