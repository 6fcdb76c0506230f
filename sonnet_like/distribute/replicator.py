"""Replicator, TpuReplicator: data-parallel strategies, replica-local state.

A `Replicator` is a `tf.distribute.MirroredStrategy` whose variables are, by
default, *replica local*: every device keeps its own copy, a replica reads and
writes only its copy, and a read outside `strategy.run` sees the first
replica's copy. That is what lets a module update its own state (BatchNorm's
moving averages, a metric, an optimizer's step counter) inside
`strategy.run`, where a mirrored variable would demand an aggregation. The
copies stay equal as long as every replica applies the same update, e.g.
all-reduced gradients or `CrossReplicaBatchNorm`'s global statistics.

`create_variables_eagerly` makes a function's variables be created eagerly,
even when their module is first called while a `tf.function` is traced.
"""

import contextlib
import functools
import threading
from typing import Any, Callable, Iterator, TypeVar

import tensorflow as tf

from sonnet_like.core import initializers

T = TypeVar("T")


def replica_local_creator(next_creator: Callable[..., tf.Variable],
                          **kwargs: Any) -> tf.Variable:
  """Variable creator: variables without explicit settings are replica local.

  A variable left at `synchronization=AUTO` becomes `ON_READ`; if it also left
  `aggregation` at `NONE`, reads outside replica context return the first
  replica's copy (`ONLY_FIRST_REPLICA`). `trainable` left unset means True
  (TensorFlow's default for `ON_READ` would be False). Explicit settings are
  kept.

  Args:
    next_creator: The next creator in the stack.
    **kwargs: The arguments of `tf.Variable`.

  Returns:
    The variable made by `next_creator`.
  """
  if kwargs.get("synchronization") == tf.VariableSynchronization.AUTO:
    kwargs["synchronization"] = tf.VariableSynchronization.ON_READ
    if kwargs.get("aggregation") in (None, tf.VariableAggregation.NONE):
      kwargs["aggregation"] = tf.VariableAggregation.ONLY_FIRST_REPLICA
    if kwargs.get("trainable") is None:
      kwargs["trainable"] = True
  return next_creator(**kwargs)


class Replicator(tf.distribute.MirroredStrategy):
  """Replicates parameters and compute over the local devices.

  Use it like any `MirroredStrategy`: build modules and optimizers under
  `scope()`, run the step with `run`, all-reduce the gradients inside it.
  Variables created under the scope, or inside `run`, are replica local (see
  `replica_local_creator`), so modules may update their own state per
  replica.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> replicator = snt.distribute.Replicator(
      ...     cross_device_ops=tf.distribute.ReductionToOneDevice())
      >>> with replicator.scope():
      ...   model = snt.Linear(2, name="doc_replicated")
      >>> def forward(x):
      ...   y = model(x)
      ...   return tf.distribute.get_replica_context().all_reduce("mean", y)
      >>> y = replicator.run(forward, args=(tf.ones([4, 3]),))
      >>> model.w.synchronization == tf.VariableSynchronization.ON_READ
      True

  Arguments are those of `tf.distribute.MirroredStrategy` (`devices`,
  `cross_device_ops`).
  """

  @contextlib.contextmanager
  def scope(self) -> Iterator[None]:  # pytype: disable=signature-mismatch
    """The strategy's scope, creating replica-local variables."""
    with super().scope(), tf.variable_creator_scope(replica_local_creator):
      yield


class TpuReplicator(tf.distribute.TPUStrategy):
  """Replicates parameters and compute over TPU cores.

  The TPU counterpart of `Replicator`: a `tf.distribute.TPUStrategy` whose
  variables are replica local by default (see `replica_local_creator`).
  `run` must be called inside a `tf.function`. Arguments are those of
  `tf.distribute.TPUStrategy`.
  """

  @contextlib.contextmanager
  def scope(self) -> Iterator[None]:  # pytype: disable=signature-mismatch
    """The strategy's scope, creating replica-local variables."""
    with super().scope(), tf.variable_creator_scope(replica_local_creator):
      yield


def create_variables_eagerly(f: Callable[..., T]) -> Callable[..., T]:
  """Wraps `f` so that the variables it creates are created eagerly.

  A module first called while a `tf.function` is traced creates its variables
  inside the trace. Under `f = create_variables_eagerly(f)`, a variable whose
  initial value comes from an `snt.initializers` initializer, is a constant,
  or is an eager tensor is instead created eagerly (outside the trace), with
  an initial value computed eagerly. This skips the checks TensorFlow needs
  for variables made in a graph, which is slow for large models on many
  devices. Other variables (e.g. initialised from the function's inputs) are
  created as usual. An initializer that works only eagerly (e.g. it reads
  values with NumPy) is run eagerly.

  Initializers called by `f` for other purposes still give graph tensors: a
  random initializer used inside `f` to draw noise draws it on every call.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> model = snt.Linear(3, name="doc_eager_linear")
      >>> @tf.function
      ... @snt.distribute.create_variables_eagerly
      ... def forward(x):
      ...   return model(x)
      >>> forward(tf.ones([1, 2])).shape
      TensorShape([1, 3])
      >>> with tf.init_scope():  # An eager variable: it has a value here.
      ...   model.w.numpy().shape
      (2, 3)

  Args:
    f: Any function, typically the body of a `tf.function` or the function
      passed to `strategy.run`.

  Returns:
    A function with `f`'s arguments and result.
  """

  @functools.wraps(f)
  def wrapper(*args, **kwargs):
    with _eager_initializers(), tf.variable_creator_scope(_eager_creator):
      return f(*args, **kwargs)

  return wrapper


class _EagerValues:
  """Initial values to compute eagerly, shared by the threads of replicas.

  While any `create_variables_eagerly` call runs, every `snt.initializers`
  class computes in the graph as usual but also records, for the tensor it
  returns, how to compute an equivalent value eagerly. A variable creator
  that receives such a tensor as initial value uses the eager one instead.
  An initializer that fails in the graph (e.g. it reads values with NumPy)
  returns its eager value directly.
  """

  def __init__(self):
    self._lock = threading.Lock()
    self._depth = 0
    self._originals = {}
    self._recipes = {}

  def enter(self) -> None:
    with self._lock:
      if self._depth == 0:
        for cls in _initializer_classes():
          original = cls.__dict__["__call__"]
          self._originals[cls] = original
          cls.__call__ = self._recording(original)
      self._depth += 1

  def exit(self) -> None:
    with self._lock:
      self._depth -= 1
      if self._depth == 0:
        for cls, original in self._originals.items():
          cls.__call__ = original
        self._originals.clear()
        self._recipes.clear()

  def pop(self, value: Any) -> Callable[[], Any] | None:
    """The eager recipe recorded for `value`, if any."""
    if not isinstance(value, tf.Tensor) or tf.executing_eagerly():
      return None
    with self._lock:
      return self._recipes.pop(value.ref(), None)

  def _recording(self, original):

    @functools.wraps(original)
    def call(initializer, shape, dtype):
      if tf.executing_eagerly():
        return original(initializer, shape, dtype)
      try:
        value = original(initializer, shape, dtype)
      except Exception as graph_error:  # pylint: disable=broad-except
        try:  # E.g. it reads values with NumPy: it works only eagerly.
          with tf.init_scope():
            return original(initializer, shape, dtype)
        except Exception:  # pylint: disable=broad-except
          raise graph_error  # pylint: disable=raise-missing-from
      if isinstance(value, tf.Tensor):
        with self._lock:
          self._recipes[value.ref()] = functools.partial(
              original, initializer, shape, dtype)
      return value

    return call


_EAGER_VALUES = _EagerValues()


@contextlib.contextmanager
def _eager_initializers() -> Iterator[None]:
  _EAGER_VALUES.enter()
  try:
    yield
  finally:
    _EAGER_VALUES.exit()


def _initializer_classes() -> list[type]:
  """Every subclass of `Initializer` that defines its own `__call__`."""
  found, pending = [], [initializers.Initializer]
  while pending:
    cls = pending.pop()
    for sub in cls.__subclasses__():
      if sub not in found:
        found.append(sub)
        pending.append(sub)
  return [cls for cls in found if "__call__" in cls.__dict__]


def _eager_value(initial_value: Any) -> Any:
  """An eager equivalent of `initial_value`, or None if there is none."""
  if not isinstance(initial_value, tf.Tensor):
    return None  # Callables and Python values: the variable handles them.
  recipe = _EAGER_VALUES.pop(initial_value)
  if recipe is not None:
    try:
      with tf.init_scope():
        return recipe()
    except Exception:  # pylint: disable=broad-except
      return None  # E.g. a shape known only in the graph: stay in the graph.
  if not tf.is_symbolic_tensor(initial_value):  # Already eager.
    return initial_value
  return tf.get_static_value(initial_value)


def _eager_creator(next_creator: Callable[..., tf.Variable],
                   **kwargs: Any) -> tf.Variable:
  """Creates the variable eagerly when its initial value can be computed so."""
  if tf.executing_eagerly():
    return next_creator(**kwargs)
  value = _eager_value(kwargs.get("initial_value"))
  if value is None:
    return next_creator(**kwargs)
  kwargs["initial_value"] = value
  with tf.init_scope():
    return next_creator(**kwargs)
