"""How one optimizer's gradients become an update: its `Updater`.

A scenario makes one `Updater` per optimizer (when `build_optimizer` or
the first update meets it). It decides once which kind of optimizer it
drives (`kinds.is_keras`) and owns everything between a gradient and a
changed weight: the slots (`build`), the learning-rate schedule, gradient
accumulation, and the guarded apply: the all-reduce across replicas,
unscaling, clipping, the NaN/Inf verdict and the conditional update. What
a scenario's updaters share (the step counter, the loss scale, the
gradient sums, the step's verdicts, the per-call rollback) is the traced
step's, handed over as `Shared`.

While a scenario's step is traced, the optimizers' own `apply_gradients`
(Keras) and `apply` go through their updaters (`routes`), so a
`train_step` that calls `optimizer.apply_gradients(...)` itself keeps
every feature, as a Keras optimizer keeps its own.
"""

import contextlib
import dataclasses
import functools
import threading
import warnings
from typing import Any, Callable, Sequence

import tensorflow as tf

from sonnet_like.core import autograph
from sonnet_like.scenarios import schedules
from sonnet_like.scenarios.updates import kinds
from sonnet_like.scenarios.updates import learning_rate as learning_rate_lib
from sonnet_like.scenarios.updates import policy as policy_lib

NO_GRADIENT_ERROR = (
    "{owner}: no variable received a gradient; check that the loss depends "
    "on the variables passed to the update.")

NO_VARIABLES_ERROR = (
    "{owner}: apply(grads) was called without the variables in the "
    "scenario's step; pass them, apply(grads, variables), so the update goes "
    "through the scenario's clipping, NaN guard and schedule.")

OTHER_VARIABLES_ERROR = (
    "{owner}: the Keras optimizer {optimizer!r} was built for other variables "
    "(another model's: a Keras optimizer keeps the slots of one set of "
    "variables), so it cannot update {names}; give this model an optimizer "
    "of its own.")

UNUSED_VARIABLES = (
    "{owner}: no gradient reached {names}; they are not trained. Remove them "
    "from the variables passed to apply_update, make the loss use them, or "
    "pass unused_variables='ignore' (or 'raise' to make this an error).")


@dataclasses.dataclass
class Verdicts:
  """Whether one traced step's updates were finite.

  The traced step opens them (`graph`: the step's graph) and reads them
  after `train_step`; each update adds its own. A verdict made in the
  step's graph is kept as a tensor (`flags`); one made in a nested graph
  (a loop or branch of the step) cannot leave it and is counted in
  `count` instead.
  """
  graph: Any = None
  flags: list[tf.Tensor] = dataclasses.field(default_factory=list)
  count: tf.Variable | None = None
  counted: bool = False
  covered_loss: bool = False  # Whether a verdict of the step had a loss.


@dataclasses.dataclass
class Shared:
  """What the updaters of one scenario share (the traced step's).

  Attributes:
    owner: The scenario's name, for errors.
    clip_norm: Clip each update's gradients to this global norm.
    schedule: The learning-rate factor of the step, or None.
    step: The step counter (the schedule's argument).
    loss_scale: The dynamic loss scale under "mixed_float16".
    scales: Which scale each gradient of this step carries.
    accumulator: The gradient sums of `accumulate_steps` > 1.
    verdicts: This step's verdicts.
    rollback: The per-call check (`updated(optimizer, variables)`).
    unused: The unused-variable policy.
    policy: What the runner of the step decides about its updates
      (`policy.py`; a solo run's by default).
  """
  owner: str
  clip_norm: float | None = None
  schedule: schedules.Schedule | None = None
  step: tf.Variable | None = None
  loss_scale: Any = None
  scales: Any = None
  accumulator: Any = None
  verdicts: Verdicts = dataclasses.field(default_factory=Verdicts)
  rollback: Any = None
  unused: "UnusedVariables | None" = None
  policy: policy_lib.UpdatePolicy = policy_lib.SOLO


class Updater:
  """Turns gradients into one optimizer's update (see the module docstring).

  Args:
    optimizer: A Keras or Sonnet-style optimizer.
    shared: What the scenario's updaters share.
  """

  def __init__(self, optimizer: Any, shared: Shared):
    kinds.check_optimizer(shared.owner, optimizer)
    self.optimizer, self.shared = optimizer, shared
    self.is_keras = kinds.is_keras(optimizer)
    # The class's own method: the instance's is routed here in a step.
    self._raw = getattr(type(optimizer),
                        "apply_gradients" if self.is_keras else "apply")
    self.scaled_rate = None
    if shared.schedule is not None:
      with tf.init_scope():  # Reads the base rate eagerly, also in a trace.
        self.scaled_rate = learning_rate_lib.ScaledLearningRate(
            shared.owner, optimizer, shared.schedule)

  def build(self, variables: Sequence[tf.Variable]) -> None:
    """Creates the slots for `variables` now, eagerly, changing no value
    (and their gradient sums under accumulation).

    Keras optimizers have `build`. A Sonnet-style optimizer creates its
    slots on its first `apply`: inside the compiled step, that would make
    `tf.function` trace the step twice, and a multi-replica strategy
    refuses it. So `apply` runs once here with zero updates, then every
    variable it touched is put back: parameters and old optimizer variables
    to their values, new slots to zero (every Sonnet optimizer's initial
    slot value).
    """
    variables = list(variables)
    if self.is_keras:
      if hasattr(self.optimizer, "build") and not getattr(
          self.optimizer, "built", True):
        self.optimizer.build(variables)
      elif getattr(self.optimizer, "built", False):
        self._check_known(variables)
    else:
      before = _optimizer_variables(self.optimizer)
      saved = [(v, tf.identity(v)) for v in variables + before]
      known = {v.ref() for v in before}
      self._raw(self.optimizer, [tf.zeros(v.shape, v.dtype) for v in variables],
                variables)
      for variable, value in saved:
        variable.assign(value)
      for variable in _optimizer_variables(self.optimizer):
        if variable.ref() not in known:
          variable.assign(tf.zeros(variable.shape, variable.dtype))
    if self.shared.accumulator is not None:
      self.shared.accumulator.create(self, variables)

  def _check_known(self, variables: list[tf.Variable]) -> None:
    """Refuses a built Keras optimizer that does not know `variables`
    (Keras' own error would come from inside the compiled step): one
    update of zeros is tried eagerly, and every value is put back."""
    if tf.distribute.get_strategy().num_replicas_in_sync > 1:
      return  # The try would need replica context; Keras says it there.
    saved = [(v, tf.identity(v))
             for v in variables + _optimizer_variables(self.optimizer)]
    try:
      self.apply_now([tf.zeros(v.shape, v.dtype) for v in variables],
                     variables)
    except (ValueError, KeyError) as error:
      raise ValueError(OTHER_VARIABLES_ERROR.format(
          owner=self.shared.owner, optimizer=self.optimizer,
          names=[v.name for v in variables][:3])) from error
    finally:
      for variable, value in saved:
        variable.assign(value)

  # ---- Traced, in a step. ----

  @autograph.as_written
  def apply(self, grads: Sequence[Any], variables: Sequence[Any],
            loss: tf.Tensor | None = None) -> tf.Tensor:
    """The guarded update, per replica: whether it was finite (a scalar
    bool tensor), also added to the step's verdicts.

    Gradients are summed over replicas, unscaled under loss scaling,
    checked with `loss`, clipped and applied only if finite (with
    `accumulate_steps`, added to the sums instead). None gradients are
    dropped with their variables, after the unused-variable policy.
    """
    shared = self.shared
    grads, variables = list(grads), list(variables)
    if shared.unused is not None:
      shared.unused.check(grads, variables)
    scale = (None if shared.scales is None
             else shared.scales.scale_of(grads, shared.owner))
    if shared.rollback is not None:
      shared.rollback.updated(self.optimizer, variables)
    pairs = [(g, v) for g, v in zip(grads, variables) if g is not None]
    if not pairs:
      raise ValueError(NO_GRADIENT_ERROR.format(owner=shared.owner))
    grads = [tf.convert_to_tensor(g) for g, _ in pairs]
    variables = [v for _, v in pairs]
    if shared.accumulator is not None:  # Applied by the compiled step.
      grads, ok, verdict = self._checked(grads, loss, scale, clip=False,
                                         deferred=False)
      shared.accumulator.add(self, grads, variables, ok)
    else:
      with self.scheduled(shared.step):
        verdict = self._guarded(grads, variables, loss, scale)
    self._record(verdict, loss)
    return verdict

  @autograph.as_written
  def apply_now(self, grads: Sequence[tf.Tensor],
                variables: Sequence[tf.Variable]) -> None:
    """Applies `grads` as they are, with the optimizer's own method."""
    _applying.depth = getattr(_applying, "depth", 0) + 1
    try:
      method = autograph.as_user_code(self._raw)  # The user's optimizer.
      if self.is_keras:
        method(self.optimizer, zip(grads, variables))
      else:
        method(self.optimizer, list(grads), list(variables))
    finally:
      _applying.depth -= 1

  @autograph.as_written
  def apply_accumulated(self, grads: Sequence[tf.Tensor],
                        variables: Sequence[tf.Variable],
                        step: tf.Tensor) -> None:
    """Per replica: the mean of the accumulated gradients, clipped and
    applied at the learning rate of `step`."""
    if self.shared.clip_norm is not None:
      grads, _ = clip_by_global_norm(grads, self.shared.clip_norm)
    replicas = tf.distribute.get_strategy().num_replicas_in_sync
    if replicas > 1 and self.is_keras:
      grads = [g / replicas for g in grads]  # Keras sums them again.
    with self.scheduled(step):
      self.apply_now(grads, variables)

  def scheduled(self, step: Any) -> contextlib.AbstractContextManager:
    """The block in which updates use the schedule's rate of `step`;
    without a schedule nothing is set."""
    if self.scaled_rate is None:
      return contextlib.nullcontext()
    return self.scaled_rate.applied(step)

  @autograph.as_written
  def rate(self, step: Any) -> tf.Tensor | None:
    """The rate this optimizer applies at `step`, as float32 (for the
    logs; a Keras schedule's at the optimizer's `iterations`), or None if
    it has none to read."""
    if self.scaled_rate is not None:
      return (tf.cast(self.scaled_rate.base_now(), tf.float32) *
              schedules.factor_at(self.scaled_rate.schedule, step))
    rate = getattr(self.optimizer, "learning_rate", None)
    if rate is not None and callable(rate):
      iterations = getattr(self.optimizer, "iterations", None)
      rate = None if iterations is None else rate(iterations)
    if rate is None:
      return None
    try:
      return tf.cast(tf.convert_to_tensor(rate), tf.float32)
    except (TypeError, ValueError):
      return None

  @autograph.as_written
  def _record(self, ok: tf.Tensor, loss: tf.Tensor | None) -> None:
    """Adds an update's verdict to the step's (if a step is traced)."""
    verdicts = self.shared.verdicts
    if verdicts.graph is None:
      return
    verdicts.covered_loss = verdicts.covered_loss or loss is not None
    if tf.compat.v1.get_default_graph() is verdicts.graph:
      verdicts.flags.append(ok)
      return
    verdicts.counted = True
    verdicts.count.assign_add(1.0 - tf.cast(ok, tf.float32))

  # The guarded update, a chain of small steps: all-reduce, unscale, clip,
  # check (the loss scale's overflow its own business), then apply: only if
  # finite, or whatever the verdict where a later check decides.

  @autograph.as_written
  def _checked(self, grads: list[tf.Tensor], loss: tf.Tensor | None,
               scale: tf.Tensor | None, clip: bool, deferred: bool
               ) -> tuple[list[tf.Tensor], tf.Tensor, tf.Tensor]:
    """All-reduced, unscaled and (with `clip`) clipped gradients, whether
    they and the loss are finite, and the update's verdict (also True for
    an overflow the loss scale handled)."""
    losses = [] if loss is None else [loss]
    grads, losses = self._all_reduced(grads, losses)
    if scale is not None:
      grads = [g * tf.cast(1.0 / scale, g.dtype) for g in grads]
    norm = None
    if clip and self.shared.clip_norm is not None:
      grads, norm = clip_by_global_norm(grads, self.shared.clip_norm)
    if scale is None:
      # The global norm doubles as the check: no reduction of its own.
      # Deferred: the gradients are checked through the state they leave.
      checked = ([norm] if norm is not None else [] if deferred
                 else list(grads))
      ok = all_finite(checked + losses)
      return grads, ok, ok
    # The loss is checked apart: an overflow is the scale's business
    # (skip, halve), a non-finite loss the NaN guard's.
    grads_finite = all_finite(grads if norm is None else [norm])
    loss_finite = all_finite(losses)
    ok = tf.logical_and(grads_finite, loss_finite)
    overflow = self.shared.loss_scale.update(grads_finite, loss_finite)
    return grads, ok, tf.logical_or(ok, tf.logical_and(overflow, scale > 1.0))

  @autograph.as_written
  def _all_reduced(self, grads: list[tf.Tensor], losses: list[tf.Tensor]
                   ) -> tuple[list[tf.Tensor], list[tf.Tensor]]:
    """The gradients and losses summed over the replicas (or over the
    runner's shares of the batch, `policy.summed`)."""
    if tf.distribute.get_strategy().num_replicas_in_sync > 1:
      context = tf.distribute.get_replica_context()
      grads = context.all_reduce(tf.distribute.ReduceOp.SUM, grads)
      return grads, [context.all_reduce(tf.distribute.ReduceOp.SUM, x)
                     for x in losses]
    both = self.shared.policy.summed(list(grads) + losses)
    return both[:len(grads)], both[len(grads):]

  @autograph.as_written
  def _for_optimizer(self, grads: list[tf.Tensor], ok: tf.Tensor,
                     synchronised: bool) -> list[tf.Tensor]:
    """The gradients as the optimizer takes them: zeroed if not `ok` where
    it synchronises (it cannot sit inside a `tf.cond`), each replica's
    share for Keras (which sums them over the replicas again)."""
    if synchronised:
      grads = [tf.where(ok, g, tf.zeros_like(g)) for g in grads]
    replicas = tf.distribute.get_strategy().num_replicas_in_sync
    if replicas > 1 and self.is_keras:
      grads = [g / replicas for g in grads]
    return grads

  @autograph.as_written
  def _guarded(self, grads: list[tf.Tensor], variables: list[Any],
               loss: tf.Tensor | None, scale: tf.Tensor | None) -> tf.Tensor:
    """Checks, clips and applies (only if finite); the verdict.

    Applied whatever its values where a later check decides: under the
    per-call check (a rollback: only the loss and the clipping norm are
    checked here, the gradients through the state they leave at the end of
    the compiled call), in a strategy's replica context (a
    MirroredStrategy, one replica too: the optimizer synchronises with a
    merge_call, so a non-finite update is zeroed instead), and where the
    runner drops a failed step itself (`policy.leaves_failed`).
    """
    deferred = self.shared.rollback is not None
    grads, ok, verdict = self._checked(grads, loss, scale, clip=True,
                                       deferred=deferred)
    synchronised = (tf.distribute.has_strategy()
                    and not tf.distribute.in_cross_replica_context())
    grads = self._for_optimizer(grads, ok, synchronised and not deferred)
    policy = self.shared.policy
    if deferred or synchronised or policy.leaves_failed(scale):
      self.apply_now(grads, variables)
      return verdict

    def apply():
      self.apply_now(grads, variables)
      return tf.constant(True)

    policy.cond(ok, apply, lambda: tf.constant(False))
    return verdict


class UnusedVariables:
  """The policy for variables given to an update that got no gradient:
  "warn" once per set of names, "raise", or "ignore"."""

  def __init__(self, owner: str, policy: str):
    self.owner, self.policy = owner, policy
    self._warned: set[tuple[str, ...]] = set()

  @autograph.as_written
  def check(self, grads: Sequence[Any], variables: Sequence[Any]) -> None:
    unused = [v.name for g, v in zip(grads, variables) if g is None]
    if not unused or self.policy == "ignore":
      return
    message = UNUSED_VARIABLES.format(owner=self.owner, names=unused)
    if self.policy == "raise":
      raise ValueError(message)
    if tuple(unused) not in self._warned:
      self._warned.add(tuple(unused))
      warnings.warn(message, stacklevel=3)  # Whoever called apply_update.


@autograph.as_written
def all_finite(tensors: Sequence[tf.Tensor]) -> tf.Tensor:
  """A scalar bool: every element of every (floating) tensor is finite.

  Checked on the sum of all elements, one reduction per non-scalar tensor:
  NaN and Inf propagate into it. A finite sum that overflows float32 (beyond
  ~3e38) also counts as non-finite, which only happens once training has
  diverged. Kept to as few graph ops as possible: it runs every step.
  """
  def total(t):
    if t.dtype in (tf.float16, tf.bfloat16):  # Their sums overflow early.
      t = tf.cast(t, tf.float32)
    return t if t.shape.rank == 0 else tf.reduce_sum(t)

  sums = [total(t) for t in tensors if t is not None and t.dtype.is_floating]
  if not sums:
    return tf.constant(True)
  if len({x.dtype for x in sums}) > 1:
    sums = [tf.cast(x, tf.float64) for x in sums]
  return tf.math.is_finite(sums[0] if len(sums) == 1 else tf.add_n(sums))


@autograph.as_written
def clip_by_global_norm(grads: Sequence[tf.Tensor], clip_norm: float
                        ) -> tuple[list[tf.Tensor], tf.Tensor]:
  """Scales `grads` so that their global L2 norm is at most `clip_norm`.

  Unlike `tf.clip_by_global_norm`, the squares are summed in float32 (float64
  if a gradient is float64), so float16 gradients do not overflow at a norm
  of ~360 and gradients of mixed precisions can be clipped together.

  Returns:
    The clipped gradients and the global norm. The norm is non-finite exactly
    when a gradient is, or when it exceeds ~1.8e19 in float32: the update's
    NaN/Inf check when clipping is on, at no extra cost.
  """
  wide = (tf.float64 if any(g.dtype == tf.float64 for g in grads)
          else tf.float32)
  halves = [tf.nn.l2_loss(g if g.dtype == wide else tf.cast(g, wide))
            for g in grads]
  norm = tf.sqrt(2.0 * (halves[0] if len(halves) == 1 else tf.add_n(halves)))
  scale = clip_norm / tf.maximum(norm, clip_norm)
  return [g * tf.cast(scale, g.dtype) for g in grads], norm


# ---- The optimizers' own methods, routed through their updaters. ----


def routes(optimizers: Sequence[Any], updater_of: Callable[[Any], Updater]
           ) -> list[tuple[Any, str, Callable]]:
  """For each optimizer, its update methods (`apply_gradients` and Keras
  3's `apply` for Keras, `apply` for Sonnet-style) as they go through
  `updater_of(optimizer)`: `(optimizer, name, method)`, for the traced
  step to set while `train_step` is traced (and delete after)."""
  found = []
  for optimizer in optimizers:
    for name in ("apply_gradients", "apply"):
      if hasattr(optimizer, name):
        own = getattr(type(optimizer), name)
        through = (_routed_apply_gradients if name == "apply_gradients"
                   else _routed_apply)
        found.append((optimizer, name, functools.partial(
            through, optimizer, own, updater_of)))
  return found


# Set while an updater applies with the optimizer's own method: Keras 3's
# `apply_gradients` calls its `apply`, which must then be the optimizer's.
_applying = threading.local()


@autograph.as_written
def _routed_apply_gradients(optimizer: Any, own: Callable,
                            updater_of: Callable[[Any], Updater],
                            grads_and_vars: Any, *args, **kwargs) -> Any:
  if getattr(_applying, "depth", 0):
    return own(optimizer, grads_and_vars, *args, **kwargs)
  pairs = list(grads_and_vars)
  return updater_of(optimizer).apply([g for g, _ in pairs],
                                     [v for _, v in pairs])


@autograph.as_written
def _routed_apply(optimizer: Any, own: Callable,
                  updater_of: Callable[[Any], Updater], updates: Any,
                  parameters: Any = None, *args, **kwargs) -> Any:
  if getattr(_applying, "depth", 0):
    return own(optimizer, updates, parameters, *args, **kwargs)
  if parameters is None:
    raise ValueError(NO_VARIABLES_ERROR.format(
        owner=updater_of(optimizer).shared.owner))
  return updater_of(optimizer).apply(list(updates), list(parameters))


def _optimizer_variables(optimizer: Any) -> list[tf.Variable]:
  try:
    return list(getattr(optimizer, "variables", ()))
  except ValueError:  # A sonnet_like module with no variables yet.
    return []
