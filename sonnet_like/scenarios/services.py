"""What a scenario's subclasses use: fed data and the traced step's services.

`ScenarioServices` is the base of `Scenario` (`engine.py`): it holds the
fed data (`data.Feed`) and the traced step (`compiled/step.TracedStep`,
as `traced_step`) and offers them as the methods every subclass calls,
the built-in scenarios as a user's, in `__call__`, `build`, `next_inputs`
and `train_step` (`feed`, `example_batch`, `next_batch`,
`split_for_replicas`, `check_optimizer`, `forward`, `in_precision`,
`gradients`, `apply_update`, `minimize`, `build_optimizer`,
`ema_weights`), with the counters hooks read. The work is done by
`data.py`, the traced step and each optimizer's `Updater`. The subclass
contract and the Python loop are `Scenario`'s.
"""

import contextlib
import sys
from typing import Any, Callable, Sequence

import tensorflow as tf

from sonnet_like.core import autograph
from sonnet_like.scenarios.run_folder import checkpointing
from sonnet_like.scenarios import data as data_lib
from sonnet_like.scenarios.compiled import precision as precision_lib
from sonnet_like.scenarios import seed as seed_lib
from sonnet_like.scenarios import settings
from sonnet_like.scenarios.compiled import step as step_lib
from sonnet_like.scenarios.updates import kinds

NO_DATA_ERROR = ("{owner}: no data was fed; call self.feed(data, "
                 "batch_size=...) {where}.")


class ScenarioServices:
  """The services of a scenario to its subclasses (see the module docstring).

  Args:
    loop: The loop settings (the strategy, the seed).
    guard: The NaN guard's settings.
    precision: The precision the traced step computes in.
    updates: Accumulation, EMA and learning-rate schedule.
  """

  def __init__(self, loop: settings.LoopSettings,
               guard: settings.GuardSettings,
               precision: precision_lib.Precision,
               updates: settings.UpdateSettings | None = None):
    self.loop, self.guard, self.precision = loop, guard, precision
    self.updates = updates or settings.UpdateSettings()
    self.traced_step = step_lib.TracedStep(type(self).__name__, precision,
                                           guard)
    self._feed: data_lib.Feed | None = None

  # ---- Data the engine feeds (`data.Feed`). ----

  def feed(self, data: data_lib.Data, *, batch_size: int,
           shuffle: bool = True, argument: str = "train_data",
           check: Callable[[Any], None] | None = None) -> None:
    """Declares the training data; call it in `__call__`, before `run()`.

    The engine turns `data` (arrays, nests of arrays, or a `tf.data.Dataset`
    of batches) into an endless, seeded pipeline, checks its first element
    (`check(element_spec)` adds the scenario's own rule) before anything is
    traced, checkpoints the iterator (resume continues mid-epoch) and hands
    each replica its share of every batch through `next_inputs`.

    Args:
      data: The data, as the user gave it.
      batch_size: Global batch size for arrays (a dataset is used as
        batched).
      shuffle: Reshuffle arrays every epoch (from `seed`).
      argument: The argument's name, for errors.
      check: Raises an error naming the scenario and `argument` if the
        element structure is not what the scenario takes.
    """
    # tf.data seeds its shuffle from the global seed too: `seed` alone.
    with seed_lib.global_seed(self.loop.seed):
      self._feed = data_lib.Feed(
          type(self).__name__, argument, data, batch_size, self.loop.seed,
          shuffle, check, stacked_seeds=self.runner.data_seeds)

  def say(self, message: str) -> None:
    """Prints `message` on stderr, once per run (by the chief)."""
    if self.is_chief:
      print(message, file=sys.stderr, flush=True)

  @property
  def fed_data(self) -> data_lib.Feed | None:
    """What `feed` was given (its pipeline, batch size, iterator), or None."""
    return self._feed

  @property
  def element_spec(self) -> Any:
    """The structure of the fed data's batches (`tf.TensorSpec` leaves)."""
    if self._feed is None:
      raise ValueError(NO_DATA_ERROR.format(owner=type(self).__name__,
                                            where="first"))
    return self._feed.element_spec

  def example_batch(self, size: int = 2) -> Any:
    """A batch of zeros shaped like the fed data, to create variables."""
    return data_lib.zeros_like_batch(self.element_spec, size)

  @autograph.as_written
  def next_batch(self) -> Any:
    """Traced, cross-replica: the next global batch of the data fed, whole.

    For a `next_inputs` override that draws per-example noise from
    `self.rng` for the whole global batch (so a multi-replica run draws what
    one device would) and then cuts both with `split_for_replicas`.
    """
    if self._feed is None:
      raise ValueError(NO_DATA_ERROR.format(owner=type(self).__name__,
                                            where="in __call__"))
    return next(self._feed.iterator)

  @autograph.as_written
  def split_for_replicas(self, values: Any) -> Any:
    """Traced, cross-replica: one equal share of each global batch per replica.

    `values` is a nest of tensors whose first axis is the global batch; a
    tuple comes back as a tuple (of per-replica values), so `next_inputs`
    can return it as `train_step`'s arguments. With one replica it is
    `values` itself.
    """
    return data_lib.split_for_replicas(self.strategy, values)

  # ---- Services for steps and hooks (`traced_step` owns the traced ones). ----

  @autograph.as_written
  def forward(self, model: Any, inputs: Any,
              is_training: bool | None = None) -> Any:
    """`model(inputs)` in the scenario's precision; use in `train_step`.

    Under a mixed precision, while the training step is traced, the call
    computes in float16/bfloat16: floating inputs and the trainable
    variables that `snt.Module`s read are cast, floating outputs come back
    in float32 (one `snt.mixed_precision.call_in`). A model that cannot be
    cast (a Keras model, a plain function) or that still computes in
    float32 runs as written, with a warning naming it. Elsewhere, and under
    "float32", it is a plain call. `is_training` is passed where the model
    takes it (None: not passed).
    """
    return self.traced_step.forward(model, inputs, is_training)

  def check_optimizer(self, optimizer: Any,
                      argument: str = "optimizer") -> None:
    """Refuses, in `__call__`, what is not a Keras or Sonnet-style
    optimizer, and a Keras `LossScaleOptimizer` (use
    `precision="mixed_float16"`); `argument` names it in the error."""
    kinds.check_optimizer(type(self).__name__, optimizer, argument)

  def in_precision(self, model: Any,
                   call: Callable[[Any], Any] | None = None
                   ) -> Callable[[Any], Any]:
    """`call` (by default `model`) as `forward` runs it, bound once (in
    `build`) for a step that calls it: in the precision while the step is
    traced; under "float32", `call` itself."""
    return self.traced_step.in_precision(model, call)

  @autograph.as_written
  def gradients(self, tape: tf.GradientTape, loss: tf.Tensor,
                variables: Sequence[tf.Variable]) -> list[Any]:
    """The gradients of `loss` for `apply_update`; use in `train_step`.

    `tape.gradient(loss, variables)`, except under "mixed_float16", where
    they are gradients of the loss times the loss scale (the backward pass
    runs in float16, where small gradients would flush to zero);
    `apply_update` unscales them. Pass them to it unchanged.
    """
    scales = self.traced_step.shared.scales
    if scales is None:
      return tape.gradient(loss, variables)
    return scales.gradients(tape, loss, variables)

  @autograph.as_written
  def apply_update(self, optimizer: Any, grads: Any, variables: Any,
                   loss: tf.Tensor | None = None) -> tf.Tensor:
    """Applies gradients through `optimizer`'s updater; use in train_step.

    The update gets every feature of the scenario: the NaN guard (with
    `loss` in the check), clipping, the loss scale, accumulation and the
    learning-rate schedule. While the step is traced,
    `optimizer.apply_gradients(...)` (Keras) or `optimizer.apply(...)`
    (Sonnet-style) of an optimizer in `trackables()` does the same, without
    the loss. Under a multi-replica strategy the gradients are summed over
    replicas here, so compute them from a loss scaled by the global batch
    size.

    Returns:
      A scalar bool tensor: whether the update was finite.
    """
    return self._updater(optimizer).apply(grads, variables, loss)

  @autograph.as_written
  def minimize(self, tape: tf.GradientTape, loss: tf.Tensor,
               variables: Sequence[tf.Variable], optimizer: Any) -> tf.Tensor:
    """`apply_update(optimizer, gradients(tape, loss, variables),
    variables, loss)`: one loss's whole update (Keras' `minimize`)."""
    variables = list(variables)
    return self._updater(optimizer).apply(
        self.gradients(tape, loss, variables), variables, loss)

  @autograph.as_written
  def _updater(self, optimizer: Any) -> Any:
    """`optimizer`'s `Updater` (made by `build_optimizer`, or now)."""
    found = self.traced_step.updaters.get(id(optimizer))
    return found if found is not None else self.traced_step.updater(optimizer)

  def build_optimizer(self, optimizer: Any,
                      variables: Sequence[tf.Variable]) -> None:
    """Creates `optimizer`'s slots for `variables` now; use in `build()`.

    Needed under a multi-replica strategy, where slots cannot be created
    inside the compiled step; it changes no value. A Keras
    `LossScaleOptimizer` is refused (use `precision="mixed_float16"`).
    """
    self.traced_step.build_optimizer(optimizer, variables)

  def ema_of(self, name: str) -> Any:
    """The weight average of the model named `name` in `models()` (a
    `WeightEMA`), or None without `ema` for it."""
    return self.traced_step.averages.averages.get(name)

  def ema_weights(self) -> contextlib.AbstractContextManager:
    """Inside the block the models with an `ema` hold their averaged
    weights; their own weights, bit for bit, after it. Evaluation,
    `Supervised.evaluate`/`predict` and the export use it; without `ema`
    it changes nothing."""
    return self.traced_step.averages.swapped_in()

  @property
  def strategy(self) -> tf.distribute.Strategy:
    return self.loop.strategy or tf.distribute.get_strategy()

  @property
  def is_chief(self) -> bool:
    return checkpointing.is_chief(self.strategy)

  @property
  def step(self) -> int:
    """Steps completed so far."""
    counter = self.traced_step.step
    return int(counter.numpy()) if counter is not None else 0

  @property
  def step_variable(self) -> tf.Variable:
    """The step counter as a variable, for traced code.

    An int64 variable holding the steps completed before the running one;
    `run` creates it.
    """
    return self.traced_step.step

  @property
  def skipped_steps(self) -> int:
    counter = self.traced_step.skipped
    return int(counter.numpy()) if counter is not None else 0

  @property
  def loss_scale(self) -> float | list[float] | None:
    """The current loss scale under "mixed_float16" (a population's: each
    member's), else None."""
    return self._loss_scale_state("scale", float)

  @property
  def overflowed_updates(self) -> int | list[int]:
    """Updates skipped because their scaled gradients overflowed (a
    population's: each member's)."""
    return self._loss_scale_state("overflows", int) or 0

  def _loss_scale_state(self, name: str, kind: type) -> Any:
    scale = self.traced_step.loss_scale
    if scale is None:
      return None
    value = self.runner.read(scale, name)
    return kind(value) if value.ndim == 0 else [kind(x) for x in value]

  def model_variables(self) -> list[tf.Variable]:
    return [v for m in self.models().values() for v in m.variables]
