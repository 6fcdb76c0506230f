"""Gradient accumulation: `accumulate_steps=N` micro-batches, one update.

With `accumulate_steps=N` a step is one micro-batch: its gradients are
checked (and, under loss scaling, unscaled), summed over replicas and added
to a sum kept in a variable per trained variable; after every N-th step the
sums, divided by N, are clipped and applied as one update, and zeroed. One
update therefore sees the mean gradient of N micro-batches, which is the
gradient of one N-times-larger batch's mean loss. `num_steps`, `log_every`,
`save_every` and `eval_every` count micro-batches (steps), the optimizer's
own counter counts updates. The sums are in the checkpoint, so a run saved
between micro-batches resumes exactly.

A micro-batch whose loss or gradients are not finite adds nothing: with
`on_nonfinite="raise"` the run stops before it (no update is made), with
"skip" it counts as a zero gradient in the mean. Under "mixed_float16" an
overflowing micro-batch is dropped the same way and lowers the loss scale.

A scenario whose step makes several updates (`updates_per_step` > 1: a
GAN's critic and generator updates, PPO's epochs) cannot accumulate: its
later updates depend on the earlier ones of the same step.
"""

from typing import Any, Callable, Sequence

import tensorflow as tf

from sonnet_like.scenarios.compiled import guard as guard_lib

SEVERAL_UPDATES_ERROR = (
    "{owner}: accumulate_steps={steps} needs one update per step, but a "
    "{owner} step makes {updates} (updates_per_step) and each depends on the "
    "ones before it, so their gradients cannot be summed over steps. Use a "
    "larger batch (or more environments) instead, or accumulate_steps=1.")

NOT_BUILT_ERROR = (
    "{owner}: with accumulate_steps, every variable updated needs its "
    "gradient sum before the first step; {names} have none. Call "
    "self.build_optimizer(optimizer, variables) for them in build().")

TWICE_ERROR = (
    "{owner}: with accumulate_steps, a step may update each variable once; "
    "{names} were updated twice in one step.")


class GradientAccumulator:
  """The gradient sums of `accumulate_steps` and the deferred update.

  Args:
    owner: The scenario's name, for errors.
    steps: Micro-batches per update (N > 1).
  """

  def __init__(self, owner: str, steps: int):
    self.owner, self.steps = owner, steps
    self.sums: list[tf.Variable] = []
    self._index: dict[Any, int] = {}
    # Every update site traced so far (an optimizer and its variables): a
    # step's sites are the same at every trace. What this trace updated, per
    # replica context (a mirrored strategy traces each replica's step).
    self._sites: dict[Any, tuple[Any, list, list]] = {}
    self._updated: dict[int, set[Any]] = {}

  def create(self, optimizer: Any, variables: Sequence[tf.Variable]) -> None:
    """Python, eagerly (in `build`): zero sums for `optimizer`'s variables."""
    for variable in variables:
      key = (id(optimizer), variable.ref())
      if key not in self._index:
        self._index[key] = len(self.sums)
        self.sums.append(tf.Variable(
            tf.zeros(variable.shape, variable.dtype), trainable=False,
            name=variable.name.split(":")[0].replace("/", "_") + "_grad_sum"))

  def trackable(self) -> tf.Module:
    """The sums, for the checkpoint (as "sums/0", "sums/1", ...)."""
    holder = tf.Module(name="gradient_sums")
    holder.sums = list(self.sums)
    return holder

  def start(self) -> None:
    """Traced, at the start of each step: no update site yet."""
    self._updated = {}

  def add(self, optimizer: Any, grads: Sequence[Any],
          variables: Sequence[tf.Variable], loss: tf.Tensor | None = None,
          loss_scale: Any = None, scale: tf.Tensor | None = None
          ) -> tf.Tensor:
    """Traced, per replica: adds a micro-batch's gradients to the sums.

    Returns the micro-batch's verdict (finite, or an overflow the loss
    scale handled), as `guard.apply_update` does.
    """
    pairs = [(g, v) for g, v in zip(grads, variables) if g is not None]
    if not pairs:
      raise ValueError(f"{self.owner}: no variable received a gradient; "
                       "check that the loss depends on the variables passed "
                       "to the update.")
    grads = [tf.convert_to_tensor(g) for g, _ in pairs]
    variables = [v for _, v in pairs]
    sums = self._sums_of(optimizer, variables)
    losses = [] if loss is None else [loss]
    if tf.distribute.get_strategy().num_replicas_in_sync > 1:
      context = tf.distribute.get_replica_context()
      grads = context.all_reduce(tf.distribute.ReduceOp.SUM, grads)
      losses = [context.all_reduce(tf.distribute.ReduceOp.SUM, x)
                for x in losses]
    if loss_scale is None:
      ok = verdict = guard_lib.all_finite(list(grads) + losses)
    else:
      grads = [g * tf.cast(1.0 / scale, g.dtype) for g in grads]
      grads_finite = guard_lib.all_finite(grads)
      loss_finite = guard_lib.all_finite(losses)
      ok = tf.logical_and(grads_finite, loss_finite)
      overflow = loss_scale.update(grads_finite, loss_finite)
      verdict = tf.logical_or(ok, tf.logical_and(overflow, scale > 1.0))
    for total, grad in zip(sums, grads):
      total.assign_add(tf.where(ok, tf.cast(grad, total.dtype),
                                tf.zeros_like(total)))
    self._sites[(id(optimizer),) + tuple(v.ref() for v in variables)] = (
        optimizer, variables, sums)
    return verdict

  def _sums_of(self, optimizer: Any, variables: Sequence[tf.Variable]
               ) -> list[tf.Variable]:
    missing = [v.name for v in variables
               if (id(optimizer), v.ref()) not in self._index]
    if missing:
      raise ValueError(NOT_BUILT_ERROR.format(owner=self.owner,
                                              names=missing))
    used = self._updated.setdefault(id(tf.distribute.get_replica_context()),
                                    set())
    twice = [v.name for v in variables if v.ref() in used]
    if twice:
      raise ValueError(TWICE_ERROR.format(owner=self.owner, names=twice))
    used.update(v.ref() for v in variables)
    return [self.sums[self._index[(id(optimizer), v.ref())]]
            for v in variables]

  def is_last(self, step: tf.Tensor) -> tf.Tensor:
    """Whether the step numbered `step` (0-based) ends an accumulation."""
    return tf.equal((step + 1) % self.steps, 0)

  def apply(self, clip_norm: float | None,
            apply_fn: Callable[[Any, list[tf.Tensor], list[tf.Variable]],
                               None]) -> None:
    """Per replica: applies every site's mean gradient, zeroes the sums.

    `apply_fn(optimizer, grads, variables)` makes the update (with the
    learning rate of the step).
    """
    replicas = tf.distribute.get_strategy().num_replicas_in_sync
    sites = list(self._sites.values())
    for optimizer, variables, sums in sites:
      grads = [total.read_value() / self.steps for total in sums]
      if clip_norm is not None:
        grads, _ = guard_lib.clip_by_global_norm(grads, clip_norm)
      if replicas > 1 and hasattr(optimizer, "apply_gradients"):
        grads = [g / replicas for g in grads]  # Keras sums them again.
      apply_fn(optimizer, grads, variables)
    for _, _, sums in sites:
      for total in sums:
        total.assign(tf.zeros_like(total))
