"""`Supervised`: train a model on (inputs, targets) with a loss.

    train = snt.scenarios.Supervised(num_steps=5_000, eval_every=500,
                                     save_every=1_000, save_dir="runs/digits")
    history = train(model, optimizer, loss_fn, train_data, eval_data=test_data)
"""

import inspect
from typing import Any, Callable

import numpy as np
import tensorflow as tf

from sonnet_like import export as export_lib
from sonnet_like.modules import metrics as metrics_lib
from sonnet_like.scenarios import data as data_lib
from sonnet_like.scenarios import engine
from sonnet_like.scenarios import history as history_lib
from sonnet_like.scenarios import step as step_lib

LossFn = Callable[[tf.Tensor, tf.Tensor], tf.Tensor]
MetricFn = Callable[[tf.Tensor, tf.Tensor], tf.Tensor]


def _is_training_parameter(model: Any) -> inspect.Parameter | None:
  try:
    return inspect.signature(model.__call__).parameters.get("is_training")
  except (TypeError, ValueError):
    return None


def call_model(model: Any, inputs: Any, training: bool) -> Any:
  """`model(inputs, is_training=training)` where the model takes it.

  An optional `is_training` (Sonnet's MLP: only with dropout) is passed
  unless the model refuses it with an error that names it.
  """
  parameter = _is_training_parameter(model)
  if parameter is None:
    return model(inputs)
  if parameter.default is inspect.Parameter.empty:
    return model(inputs, is_training=training)
  try:
    return model(inputs, is_training=training)
  except ValueError as error:
    if "is_training" not in str(error):
      raise
    return model(inputs)


def _per_example(loss_fn: LossFn, outputs, targets) -> tf.Tensor:
  """`loss_fn(outputs, targets)` as a vector of per-example losses."""
  losses = tf.convert_to_tensor(loss_fn(outputs, targets))
  if losses.shape.rank == 0:
    return losses[tf.newaxis]
  if losses.shape.rank != 1:
    losses = tf.reshape(losses, [tf.shape(losses)[0], -1])
    losses = tf.reduce_mean(losses, axis=1)
  return losses


def _is_classification(outputs: tf.Tensor, targets: tf.Tensor) -> bool:
  return (outputs.shape.rank == 2 and (outputs.shape[-1] or 0) > 1 and
          targets.shape.rank == 1 and targets.dtype.is_integer)


class Supervised(engine.Scenario):
  """Trains `model` to map inputs to targets by minimising `loss_fn`.

  `loss_fn(outputs, targets)` returns per-example losses (shape `[batch]`)
  or their mean. Each step's loss is the sum over the global batch divided by
  its size, so training on N replicas matches one device on the same global
  batch. A model whose `__call__` takes `is_training` gets `True` in training
  and `False` in evaluation.

  Evaluation reports "loss" (mean per example) and, for integer targets and
  `[batch, classes]` outputs, "accuracy", plus any `metrics` given.

      >>> import numpy as np, sonnet_like as snt, tensorflow as tf, keras
      >>> x = np.random.default_rng(0).normal(size=(64, 3)).astype("float32")
      >>> y = (x.sum(axis=1) > 0).astype("int32")
      >>> model = snt.Linear(2, name="classifier")
      >>> loss = lambda logits, labels: (
      ...     tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits))
      >>> train = snt.scenarios.Supervised(num_steps=100, batch_size=16,
      ...                                  steps_per_call=10, progress=False)
      >>> history = train(model, keras.optimizers.SGD(0.5), loss, (x, y),
      ...                 eval_data=(x, y))
      >>> history.eval["accuracy"][-1] > 0.9
      True

  Args:
    num_steps: Total training steps.
    batch_size: Global batch size for array data (a dataset is used as
      batched).
    shuffle: Shuffle array data every epoch (from `seed`).
    eval_batch_size: Batch size for evaluation and prediction of arrays.
    **kwargs: Loop settings of `Scenario` (steps_per_call, eval_every,
      save_every, save_dir, strategy, jit_compile, on_nonfinite, clip_norm,
      seed, hooks, progress, ...).
  """

  def __init__(self, num_steps: int, *, batch_size: int = 32,
               shuffle: bool = True, eval_batch_size: int = 256, **kwargs):
    super().__init__(num_steps, **kwargs)
    engine._check_positive("Supervised", "batch_size", batch_size, False)  # pylint: disable=protected-access
    engine._check_positive("Supervised", "eval_batch_size", eval_batch_size,  # pylint: disable=protected-access
                           False)
    replicas = self.strategy.num_replicas_in_sync
    if batch_size % replicas:
      raise ValueError(f"Supervised: batch_size must be a multiple of the "
                       f"{replicas} replicas, got {batch_size}.")
    self.batch_size, self.shuffle = batch_size, shuffle
    self.eval_batch_size = eval_batch_size
    self._eval_functions: dict[int, Any] = {}

  def __call__(self, model: Any, optimizer: Any, loss_fn: LossFn,
               train_data: data_lib.Data, eval_data: data_lib.Data = None,
               metrics: dict[str, MetricFn] | None = None
               ) -> history_lib.History:
    """Trains (or resumes training) and returns the `History`.

    Args:
      model: A callable module (`snt.Module`, `tf.Module`).
      optimizer: A Keras optimizer (`apply_gradients`) or a sonnet_like
        optimizer (`apply(updates, parameters)`). Under a strategy, create it
        in `strategy.scope()`.
      loss_fn: `loss_fn(outputs, targets)` -> per-example losses or a mean.
      train_data: A `tf.data.Dataset` of (inputs, targets) batches, or arrays
        (x, y).
      eval_data: Same, evaluated every `eval_every` steps and at the end.
      metrics: Extra eval metrics, `name -> fn(outputs, targets)` returning
        per-example values.
    """
    if not callable(model):
      raise TypeError(f"Supervised: model must be callable, got {model!r}.")
    if not callable(loss_fn):
      raise TypeError(f"Supervised: loss_fn must be callable, got "
                      f"{loss_fn!r}.")
    if not (hasattr(optimizer, "apply_gradients") or
            hasattr(optimizer, "apply")):
      raise TypeError(step_lib.NOT_AN_OPTIMIZER_ERROR.format(
          owner="Supervised", value=optimizer))
    data_lib.check("Supervised", "train_data", train_data)
    if eval_data is not None:
      data_lib.check("Supervised", "eval_data", eval_data)
    self.model, self.optimizer, self.loss_fn = model, optimizer, loss_fn
    self.metrics = dict(metrics or {})
    self._train_dataset = data_lib.training_dataset(
        train_data, self.batch_size, self.seed, self.shuffle)
    self._eval_data = eval_data
    return self.run()

  # ---- Engine interface. ----

  def models(self):
    return {"model": self.model}

  def trackables(self):
    return {"model": self.model, "optimizer": self.optimizer,
            "data": self._iterator}

  def build(self):
    self._iterator = iter(self._train_dataset)
    spec = self._train_dataset.element_spec[0]
    example = tf.nest.map_structure(
        lambda s: tf.zeros([1] + s.shape.as_list()[1:], s.dtype), spec)
    self._call(example, training=False)
    step_lib.build_optimizer(self.optimizer, self.model.trainable_variables)

  def next_inputs(self):
    return data_lib.split_for_replicas(self.strategy, next(self._iterator))

  def _call(self, inputs, training: bool):
    return call_model(self.model, inputs, training)

  def train_step(self, inputs, targets):
    """One supervised step on this replica's share of the global batch.

    Override it for custom losses or several outputs; call
    `self.apply_update(optimizer, grads, variables, loss=loss)` to keep the
    NaN guard, clipping and distribution handling.
    """
    replicas = self.strategy.num_replicas_in_sync
    with tf.GradientTape() as tape:
      outputs = self._call(inputs, training=True)
      losses = _per_example(self.loss_fn, outputs, targets)
      local_sum = tf.reduce_sum(losses)
      count = losses.shape[0] or tf.cast(tf.shape(losses)[0], local_sum.dtype)
      loss = local_sum / (count * replicas)
    variables = self.model.trainable_variables
    grads = tape.gradient(loss, variables)
    self.apply_update(self.optimizer, grads, variables, loss=loss)
    # With one replica the logged loss is the checked one (no second check).
    return {"loss": loss if replicas == 1 else local_sum / count}

  def evaluate_now(self):
    if self._eval_data is None:
      return None
    return self.evaluate(self.model, self._eval_data, self.loss_fn,
                         self.metrics)

  # ---- Helpers on the same model conventions. ----

  def _eval_function(self, model, loss_fn, metrics):
    key = (id(model), id(loss_fn), tuple(sorted(metrics.items())))
    function = self._eval_functions.get(key)
    if function is not None:
      return function
    @tf.function(reduce_retracing=True)
    def run(inputs, targets):
      """Sums over a batch of the loss, accuracy and metrics, and its size."""
      outputs = call_model(model, inputs, False)
      values = {}
      if loss_fn is not None:
        values["loss"] = _per_example(loss_fn, outputs, targets)
      if _is_classification(outputs, targets):
        values["accuracy"] = tf.equal(
            tf.argmax(outputs, -1, output_type=targets.dtype), targets)
      for name, fn in metrics.items():
        values[name] = fn(outputs, targets)
      sums = {k: tf.reduce_sum(tf.cast(v, tf.float64))
              for k, v in values.items()}
      sums["count"] = tf.cast(tf.shape(targets)[0], tf.float64)
      return sums

    self._eval_functions[key] = run
    return run

  def evaluate(self, model: Any, data: data_lib.Data,
               loss_fn: LossFn | None = None,
               metrics: dict[str, MetricFn] | None = None) -> dict[str, float]:
    """Mean loss, accuracy (for classifiers) and `metrics` over `data`."""
    data_lib.check("Supervised", "data", data)
    metrics = dict(metrics or {})
    dataset = data_lib.eval_dataset(data, self.eval_batch_size)
    function = self._eval_function(model, loss_fn, metrics)
    totals: dict[str, metrics_lib.Sum] = {}
    for inputs, targets in dataset:
      for name, value in function(inputs, targets).items():
        if name not in totals:
          totals[name] = metrics_lib.Sum(name=f"eval_{name}")
        totals[name].update(value)
    count = totals.pop("count", None)
    if count is None or float(count.value) == 0:
      raise ValueError("Supervised: evaluate got no examples.")
    return {name: float(total.value / count.value)
            for name, total in totals.items()}

  def predict(self, model: Any, data: Any) -> np.ndarray:
    """`model(x)` over arrays or a dataset of inputs, as one NumPy array."""
    if isinstance(data, tf.data.Dataset):
      dataset = data
    else:
      dataset = data_lib.eval_dataset((data, None), self.eval_batch_size)

    @tf.function(reduce_retracing=True)
    def forward(inputs):
      return call_model(model, inputs, False)

    outputs = []
    for batch in dataset:
      if isinstance(batch, tuple):
        batch = batch[0]
      outputs.append(forward(batch).numpy())
    return np.concatenate(outputs)

  # ---- Export (end of run with export_dir=...). ----

  def export(self, directory: str) -> str:
    """Writes the model for serving (`snt.export.save_module`); the path.

    Its inputs are the training data's inputs, by name ("inputs" for one
    tensor, a dict's keys), at any batch size; its outputs are "outputs"
    and, for a classifier (integer targets, outputs `[batch, classes]`),
    "probabilities" (softmax of the outputs, taken as logits) and
    "classes" (their arg-max).
    """
    inputs, targets = self._train_dataset.element_spec
    example = tf.nest.map_structure(
        lambda s: tf.zeros([1] + s.shape.as_list()[1:], s.dtype), inputs)
    outputs = call_model(self.model, example, False)
    classifier = (isinstance(outputs, tf.Tensor) and
                  isinstance(targets, tf.TensorSpec) and
                  _is_classification(outputs, targets))
    return export_lib.save_module(self.model, directory, inputs,
                                  classifier=classifier)
