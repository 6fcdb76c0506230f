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

In a population every member has its own sums (stacked like its weights)
and its window's update is applied inside its own step
(`population/step.py`), as a solo run applies it after the step.

A scenario whose step makes several updates (`updates_per_step` > 1: a
GAN's critic and generator updates, PPO's epochs) cannot accumulate: its
later updates depend on the earlier ones of the same step.
"""

from typing import Any, Sequence

import tensorflow as tf

from sonnet_like.core import autograph

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

  def create(self, updater: Any, variables: Sequence[tf.Variable]) -> None:
    """Python, eagerly (in `build`): zero sums for `updater`'s variables."""
    for variable in variables:
      key = (id(updater), variable.ref())
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

  def add(self, updater: Any, grads: Sequence[tf.Tensor],
          variables: Sequence[tf.Variable], ok: tf.Tensor) -> None:
    """Traced, per replica: adds a micro-batch's checked gradients (summed
    over replicas, unscaled) to `updater`'s sums if `ok`."""
    sums = self._sums_of(updater, variables)
    for total, grad in zip(sums, grads):
      total.assign_add(tf.where(ok, tf.cast(grad, total.dtype),
                                tf.zeros_like(total)))
    self._sites[(id(updater),) + tuple(v.ref() for v in variables)] = (
        updater, variables, sums)

  def _sums_of(self, updater: Any, variables: Sequence[tf.Variable]
               ) -> list[tf.Variable]:
    missing = [v.name for v in variables
               if (id(updater), v.ref()) not in self._index]
    if missing:
      raise ValueError(NOT_BUILT_ERROR.format(owner=self.owner,
                                              names=missing))
    used = self._updated.setdefault(id(tf.distribute.get_replica_context()),
                                    set())
    twice = [v.name for v in variables if v.ref() in used]
    if twice:
      raise ValueError(TWICE_ERROR.format(owner=self.owner, names=twice))
    used.update(v.ref() for v in variables)
    return [self.sums[self._index[(id(updater), v.ref())]]
            for v in variables]

  def is_last(self, step: tf.Tensor) -> tf.Tensor:
    """Whether the step numbered `step` (0-based) ends an accumulation."""
    return tf.equal((step + 1) % self.steps, 0)

  @autograph.as_written
  def apply(self, step: tf.Tensor) -> None:
    """Per replica: applies every site's mean gradient with its updater (at
    the learning rate of `step`), then zeroes the sums."""
    sites = list(self._sites.values())
    for updater, variables, sums in sites:
      grads = [total.read_value() / self.steps for total in sums]
      updater.apply_accumulated(grads, variables, step)
    for _, _, sums in sites:
      for total in sums:
        total.assign(tf.zeros_like(total))
