"""`Supervised`: train a model on (inputs, targets) with a loss.

    train = snt.scenarios.Supervised(num_steps=5_000, eval_every=500,
                                     save_every=1_000, save_dir="runs/digits")
    history = train(model, optimizer, loss_fn, train_data, eval_data=test_data)
"""

import warnings
from typing import Any

import numpy as np
import tensorflow as tf

from sonnet_like import export as export_lib
from sonnet_like.core import arguments
from sonnet_like.core import autograph
from sonnet_like.core import checks
from sonnet_like.scenarios.compiled import calling
from sonnet_like.scenarios import data as data_lib
from sonnet_like.scenarios import engine
from sonnet_like.scenarios.run_folder import history as history_lib
from sonnet_like.scenarios.compiled import loss_checks
from sonnet_like.scenarios import losses as losses_lib


ELEMENT_ERROR = (
    "Supervised: {argument} must hold (inputs, targets) or (inputs, targets, "
    "sample_weights) elements (inputs and targets may be tensors, tuples or "
    "dicts), got elements {got}. For a dataset of dicts, map it to a tuple: "
    "`dataset.map(lambda d: (d['x'], d['y']))`.")


@autograph.as_written
def unpack(element: Any) -> tuple[Any, Any, Any]:
  """`(inputs, targets, sample_weights)` of an element, Keras' convention.

  A tuple (or list) of one, two or three parts is `(x,)`, `(x, y)` or
  `(x, y, w)`; anything else (a tensor, a dict) is inputs alone.
  """
  if isinstance(element, (tuple, list)) and 1 <= len(element) <= 3:
    parts = tuple(element) + (None,) * (3 - len(element))
    return parts[0], parts[1], parts[2]
  return element, None, None


def _check_element(argument: str) -> Any:
  def check(spec):
    inputs, targets, weights = unpack(spec)
    if targets is None:
      raise TypeError(ELEMENT_ERROR.format(argument=argument,
                                           got=data_lib.describe(spec)))
    if weights is not None and (
        not isinstance(weights, tf.TensorSpec) or weights.shape.rank > 2 or (
            weights.shape.rank == 2 and weights.shape[1] != 1)):
      raise ValueError(f"Supervised: {argument}'s sample weights must be one "
                       f"value per example, shaped [batch] or [batch, 1], "
                       f"got {data_lib.describe(weights)}.")
    del inputs
  return check


@autograph.as_written
def _is_classification(outputs: Any, targets: Any) -> bool:
  return (isinstance(outputs, tf.Tensor) and isinstance(targets, tf.Tensor)
          and outputs.shape.rank == 2 and (outputs.shape[-1] or 0) > 1 and
          targets.shape.rank == 1 and targets.dtype.is_integer)


METRIC_FAILED_ERROR = (
    "Supervised: metrics[{name!r}] failed on outputs of shape {outputs} and "
    "targets of shape {targets}: {error}")


@autograph.as_written
def _metric_values(outputs: Any, targets: Any,
                   metrics: dict[str, Any]) -> dict[str, tf.Tensor]:
  """Per-example accuracy (for classifiers) and `metrics` (per-example
  functions) of a batch, by name."""
  values = {}
  if _is_classification(outputs, targets):
    values["accuracy"] = tf.equal(
        tf.argmax(outputs, -1, output_type=targets.dtype), targets)
  for name, fn in metrics.items():
    try:
      result = autograph.as_user_code(fn)(outputs, targets)
    except Exception as error:  # pylint: disable=broad-except
      raise ValueError(METRIC_FAILED_ERROR.format(
          name=name, outputs=_shapes(outputs), targets=_shapes(targets),
          error=checks.error_text(error))) from error
    values[name] = losses_lib.per_example(
        "Supervised", f"metrics[{name!r}]", result, outputs, targets)
  return values


@autograph.as_written
def _shapes(values: Any) -> Any:
  shapes = [tuple(v.shape) for v in tf.nest.flatten(values)]
  return shapes[0] if len(shapes) == 1 else shapes


UNBUILT_PREDICT_WARNING = (
    "Supervised: predict got {model}, which was never called, so it is "
    "built now on the first batch and predicts with its initial weights; "
    "train it (or call it once on a few examples) first if that is not "
    "what you meant.")


def _unbuilt(model: Any) -> bool:
  """A module without variables yet (its first call has not happened)."""
  if not isinstance(model, tf.Module):
    return False
  try:
    return not model.variables
  except ValueError:  # A sonnet_like module asked before it is built.
    return True


@autograph.as_written
def _weighted(values: tf.Tensor, weights: Any) -> tf.Tensor:
  if weights is None:
    return values
  weights = tf.reshape(tf.cast(weights, values.dtype), [-1])
  return values * weights


class Supervised(engine.Scenario):
  """Trains `model` to map inputs to targets by minimising a loss.

  Data are `(inputs, targets)` or `(inputs, targets, sample_weights)`, as
  arrays or a `tf.data.Dataset` of batches; inputs, targets and the model's
  outputs may be tensors, tuples or dicts. Each step's loss is the sum of
  the (weighted) per-example losses over the global batch divided by its size
  (Keras' "sum over batch size"), so training on N replicas matches one
  device on the same global batch. A model whose `__call__` (or, for a
  function, whose signature) takes `is_training` gets `True` in training and
  `False` in evaluation.

  Before the first step the loss is tried once, eagerly, on the first batch
  and the model's outputs: one-hot targets under a sparse loss, too few
  output units for the labels, logits under `from_logits=False` and a loss's
  own errors are one error naming the fix; `eval_data` is run through the
  model then too.

  Evaluation reports "loss" (mean per example) and, for a single tensor of
  `[batch, classes]` outputs with integer targets, "accuracy", plus any
  `metrics` given.

      >>> import numpy as np, sonnet_like as snt, tensorflow as tf, keras
      >>> x = np.random.default_rng(0).normal(size=(64, 3)).astype("float32")
      >>> y = (x.sum(axis=1) > 0).astype("int32")
      >>> model = snt.Linear(2, name="classifier")
      >>> train = snt.scenarios.Supervised(num_steps=100, batch_size=16,
      ...                                  steps_per_call=10, progress=False)
      >>> loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
      >>> history = train(model, keras.optimizers.SGD(0.5), loss, (x, y),
      ...                 eval_data=(x, y))
      >>> history.eval["accuracy"][-1] > 0.9
      True

  To train on another objective, subclass it and override `compute_loss`
  (the loss of one batch) or `train_step` (the whole step); see `Scenario`.

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
    arguments.check_positive_int("Supervised", "batch_size", batch_size)
    arguments.check_positive_int("Supervised", "eval_batch_size",
                                 eval_batch_size)
    replicas = self.strategy.num_replicas_in_sync
    if batch_size % replicas:
      raise ValueError(f"Supervised: batch_size must be a multiple of the "
                       f"{replicas} replicas, got {batch_size}.")
    self.batch_size, self.shuffle = batch_size, shuffle
    self.eval_batch_size = eval_batch_size
    self._eval_functions: dict[Any, Any] = {}
    self._first_batch: Any = None
    self._eval_data: tf.data.Dataset | None = None

  def __call__(self, model: Any, optimizer: Any, loss_fn: Any,
               train_data: data_lib.Data, eval_data: data_lib.Data = None,
               metrics: dict[str, Any] | None = None
               ) -> history_lib.History:
    """Trains (or resumes training) and returns the `History`.

    Args:
      model: A callable: a module (`snt.Module`, `tf.Module`) or a function
        of the inputs (and optionally `is_training`).
      optimizer: A Keras optimizer (`apply_gradients`) or a sonnet_like
        optimizer (`apply(updates, parameters)`). Under a strategy, create it
        in `strategy.scope()`.
      loss_fn: `loss_fn(outputs, targets)` -> per-example losses or their
        mean; or a Keras loss object, function or name (called Keras' way,
        `(y_true, y_pred)`).
      train_data: `(inputs, targets)` or `(inputs, targets, sample_weights)`
        as arrays or a `tf.data.Dataset` of such batches.
      eval_data: Same, evaluated every `eval_every` steps and at the end.
      metrics: Extra eval metrics by name: `fn(outputs, targets)` returning
        per-example values, a Keras metric function or name, or a Keras
        `Metric` object. All but `Metric` objects are also logged on the
        training batches (their means), as "accuracy" is for classifiers.
    """
    if not callable(model):
      raise TypeError(f"Supervised: model must be callable, got {model!r}.")
    self.check_optimizer(optimizer)
    self.loss = losses_lib.as_per_example("Supervised", "loss_fn", loss_fn)
    self.metrics = self._resolve_metrics(metrics)
    for name, metric in self.metrics.items():
      if not losses_lib.is_keras_metric(metric):
        losses_lib.as_per_example("Supervised", f"metrics[{name!r}]", metric,
                                  kind="metric")
    # Logged on training batches too, but for Keras `Metric` objects, whose
    # state is updated outside the trace.
    self._train_metrics = {
        name: losses_lib.as_per_example("Supervised", f"metrics[{name!r}]",
                                        metric, kind="metric")
        for name, metric in self.metrics.items()
        if not losses_lib.is_keras_metric(metric)}
    self.model = calling.as_model(model)
    self.optimizer, self.loss_fn = optimizer, loss_fn
    self.feed(train_data, batch_size=self.batch_size, shuffle=self.shuffle,
              argument="train_data", check=_check_element("train_data"))
    # Tried on the loss in build(), once per run, before anything is traced;
    # not for a subclass's own step or loss, which may not use loss_fn.
    own_loss = (type(self).train_step is Supervised.train_step and
                type(self).compute_loss is Supervised.compute_loss)
    self._first_batch = loss_checks.first_batch(
        train_data, self.element_spec, self.batch_size) if own_loss else None
    self._eval_data = None
    if eval_data is not None:  # Checked now, not after the first interval.
      self._eval_data = data_lib.eval_dataset(
          "Supervised", "eval_data", eval_data, self.eval_batch_size,
          _check_element("eval_data"))
    return self.run()

  # ---- Engine interface. ----

  def models(self):
    return {"model": self.model}

  def trackables(self):
    return {"model": self.model, "optimizer": self.optimizer}

  def _probe_rows(self) -> int:
    """Rows of the zeros that build the model: the data's batch size where
    known, so that a shape error shows the user's shape, not a probe's."""
    rows = tf.nest.flatten(self.element_spec)[0].shape
    if rows.rank and rows[0] is not None:
      return rows[0]
    first = None if self._first_batch is None else tf.nest.flatten(
        self._first_batch)[0]
    return first.shape[0] if first is not None and first.shape.rank else 2

  def build(self):
    inputs = unpack(self.example_batch(self._probe_rows()))[0]
    in_training, _ = calling.build_models(
        [self.model], lambda: calling.bound_model(self.model, inputs, True))
    # The model as `train_step` calls it, found once: `self.forward(model,
    # inputs, is_training=True)` without looking again at every trace.
    self._model_in_training = self.in_precision(self.model, in_training)
    self.build_optimizer(self.optimizer, self.model.trainable_variables)
    if self._first_batch is not None:  # Every variable change is undone.
      inputs, targets, _ = unpack(self._first_batch)
      calling.build_models([self.model], lambda: loss_checks.check_loss(
          "Supervised", self.loss_fn,
          calling.call_model(self.model, inputs, True), targets))
    if self._eval_data is not None:  # Refused now, not at the first eval.
      calling.build_models([self.model], lambda: loss_checks.check_eval_inputs(
          "Supervised", lambda x: calling.call_model(self.model, x, True),
          unpack(self._eval_data.element_spec)[0],
          unpack(self.element_spec)[0]))

  @autograph.as_written
  def compute_loss(self, inputs: Any, targets: Any, outputs: Any,
                   sample_weights: Any = None) -> tf.Tensor:
    """Traced, per replica: this replica's share of the batch loss.

    The sum of the (weighted) per-example losses divided by the global batch
    size, so that gradients summed over replicas are those of the global
    mean. Override it for another objective (a VAE's KL term, a loss on
    several outputs); `inputs` are there for objectives that need them.
    """
    del inputs
    values = losses_lib.per_example("Supervised", "loss_fn",
                                    autograph.as_user_code(self.loss)(
                                        outputs, targets), outputs,
                                    targets)
    values = _weighted(values, sample_weights)
    count = values.shape[0] or tf.cast(tf.shape(values)[0], values.dtype)
    replicas = self.strategy.num_replicas_in_sync
    return tf.reduce_sum(values) / (count * replicas)

  @autograph.as_written  # What it calls a user gives is rewritten.
  def train_step(self, data):
    """One step on this replica's share of the global batch.

    Override it for a custom step: run the model with `self.forward`, take
    gradients with `self.gradients(tape, loss, variables)` and apply them
    with `self.apply_update(self.optimizer, grads, variables, loss=loss)`
    (or `self.minimize(tape, loss, variables, self.optimizer)`, as here),
    which keep the precision, loss scaling, NaN guard, clipping,
    accumulation, the learning-rate schedule and distribution.
    `self.optimizer.apply_gradients(...)` keeps them too, without the loss
    in the check.
    """
    inputs, targets, weights = unpack(data)
    with tf.GradientTape() as tape:
      # self.forward, bound at build.
      outputs = autograph.as_user_code(self._model_in_training)(inputs)
      loss = autograph.as_user_code(self.compute_loss)(inputs, targets,
                                                       outputs, weights)
    self.minimize(tape, loss, self.model.trainable_variables, self.optimizer)
    replicas = self.strategy.num_replicas_in_sync
    logs = {"loss": loss if replicas == 1 else loss * replicas}
    for name, values in _metric_values(outputs, targets,
                                       self._train_metrics).items():
      logs[name] = tf.reduce_mean(tf.cast(values, tf.float32))
    return logs

  def evaluate_now(self):
    if self._eval_data is None:
      return None
    return self.evaluate(self.model, self._eval_data, self.loss_fn,
                         self.metrics)

  # ---- Evaluation and prediction on the same conventions. ----

  def _resolve_metrics(self, metrics: dict[str, Any] | None) -> dict:
    if metrics is not None and not isinstance(metrics, dict):
      raise TypeError(f"Supervised: metrics must be a dict of name -> metric, "
                      f"got {metrics!r}.")
    return {name: losses_lib.by_name("Supervised", f"metrics[{name!r}]",
                                     metric, "metric")
            if isinstance(metric, str) else metric
            for name, metric in (metrics or {}).items()}

  def eval_step(self, model: Any, loss: Any, metrics: dict[str, Any],
                data: Any) -> tuple[dict[str, tf.Tensor], Any, Any]:
    """Traced: sums of the loss, accuracy and metric values over a batch.

    Returns:
      The sums (and "count", the batch size), the outputs and the targets
      (for Keras `Metric` objects, updated outside the trace).
    """
    inputs, targets, weights = unpack(data)
    outputs = calling.call_model(model, inputs, False)
    values = {}
    if loss is not None:
      values["loss"] = _weighted(losses_lib.per_example(
          "Supervised", "loss_fn", loss(outputs, targets), outputs, targets),
                                 weights)
    values.update(_metric_values(outputs, targets, metrics))
    sums = {k: tf.reduce_sum(tf.cast(v, tf.float64)) for k, v in values.items()}
    sums["count"] = tf.cast(tf.shape(tf.nest.flatten(targets)[0])[0],
                            tf.float64)
    return sums, outputs, targets

  def _eval_function(self, model: Any, loss_fn: Any,
                     metrics: dict[str, Any]) -> Any:
    """The compiled `eval_step`, one per model, loss and metric functions."""
    key = (id(model), id(loss_fn), tuple(sorted((k, id(v))
                                                for k, v in metrics.items())))
    if key not in self._eval_functions:
      loss = None if loss_fn is None else losses_lib.as_per_example(
          "Supervised", "loss_fn", loss_fn)
      functions = {k: losses_lib.as_per_example(
          "Supervised", f"metrics[{k!r}]", m, kind="metric")
                   for k, m in metrics.items()}
      self._eval_functions[key] = (tf.function(
          lambda data: self.eval_step(model, loss, functions, data),
          reduce_retracing=True), (model, loss_fn, metrics))  # Keeps ids.
    return self._eval_functions[key][0]

  def evaluate(self, model: Any, data: data_lib.Data, loss_fn: Any = None,
               metrics: dict[str, Any] | None = None) -> dict[str, float]:
    """Mean loss, accuracy (for classifiers) and `metrics` over `data`.

    With `ema`, the models' averaged weights are used (`ema_weights()`).
    """
    with self.ema_weights():
      return self._evaluate(model, data, loss_fn, metrics)

  def _evaluate(self, model: Any, data: data_lib.Data, loss_fn: Any,
                metrics: dict[str, Any] | None) -> dict[str, float]:
    data = data_lib.eval_dataset("Supervised", "data", data,
                                 self.eval_batch_size, _check_element("data"))
    metrics = self._resolve_metrics(metrics)
    stateful = {k: m for k, m in metrics.items()
                if losses_lib.is_keras_metric(m)}
    function = self._eval_function(
        model, loss_fn, {k: m for k, m in metrics.items() if k not in stateful})
    # Traced once for every batch size (a short last batch, other data).
    function.get_concrete_function(data_lib.any_batch(data.element_spec))
    for metric in stateful.values():
      metric.reset_state()
    totals: dict[str, float] = {}
    for batch in data:
      sums, outputs, targets = function(batch)
      for name, value in sums.items():
        totals[name] = totals.get(name, 0.0) + float(value)
      for metric in stateful.values():
        metric.update_state(targets, outputs)
    count = totals.pop("count", 0.0)
    if count == 0:
      raise ValueError("Supervised: evaluate got no examples.")
    results = {name: total / count for name, total in totals.items()}
    results.update({name: float(metric.result())
                    for name, metric in stateful.items()})
    return results

  def predict(self, model: Any, data: Any) -> Any:
    """`model(x)` over arrays or a dataset, as NumPy (with the outputs'
    structure: a tuple or dict of arrays for a model with several outputs).

    `data` is inputs (arrays or a dataset of input batches), or anything
    `evaluate` takes, whose targets are ignored. With `ema`, the models'
    averaged weights are used (`ema_weights()`).
    """
    with self.ema_weights():
      return self._predict(model, data)

  def _predict(self, model: Any, data: Any) -> Any:
    dataset = data if isinstance(data, tf.data.Dataset) else (
        data_lib.eval_dataset("Supervised", "data", data,
                              self.eval_batch_size))

    key = ("predict", id(model))
    if key not in self._eval_functions:  # One per model: no new trace.
      self._eval_functions[key] = (tf.function(
          lambda inputs: calling.call_model(model, inputs, False),
          reduce_retracing=True), model)
    forward = self._eval_functions[key][0]
    if _unbuilt(model):  # Eagerly: a trace may not know every size.
      warnings.warn(UNBUILT_PREDICT_WARNING.format(
          model=checks.describe(model)), stacklevel=3)
      first = unpack(next(iter(dataset)))[0]
      calling.build_models([model], lambda: calling.call_model(model, first,
                                                               True))
    forward.get_concrete_function(data_lib.any_batch(
        unpack(dataset.element_spec)[0]))
    outputs = []
    for batch in dataset:
      inputs = unpack(batch)[0]
      outputs.append(tf.nest.map_structure(lambda t: t.numpy(),
                                           forward(inputs)))
    if not outputs:
      raise ValueError("Supervised: predict got no examples.")
    return tf.nest.map_structure(lambda *parts: np.concatenate(parts),
                                 *outputs)

  # ---- Export (end of run with export_dir=...). ----

  def export(self, directory: str) -> str:
    """Writes the model for serving (`snt.export.save_module`); the path.

    Its inputs are the training data's inputs, by name ("inputs" for one
    tensor, a dict's keys), at any batch size; its outputs are "outputs"
    and, for a classifier (integer targets, outputs `[batch, classes]`),
    "probabilities" (softmax of the outputs, taken as logits) and
    "classes" (their arg-max).
    """
    inputs, targets, _ = unpack(self.element_spec)
    example = unpack(self.example_batch(1))[0]
    outputs = calling.call_model(self.model, example, False)
    classifier = _is_classification(
        outputs, tf.zeros([1] + targets.shape.as_list()[1:], targets.dtype)
        if isinstance(targets, tf.TensorSpec) else None)
    return export_lib.save_module(self.model, directory, inputs,
                                  classifier=classifier)
