"""`dry_run=True`: the life of a run in miniature, before the real one.

A dry run trains `FIRST_STEPS` steps (or `accumulate_steps`, if more, so
that at least one optimizer update is made), evaluates, saves, resumes
from that save for `RESUMED_STEPS` more steps (evaluating and saving
again) and
exports (when the scenario can), all into a temporary folder that is
deleted afterwards, and prints a one-line verdict. It goes through
everything the real run goes through (the data and loss checks, tracing,
the NaN guard, hooks, `keep_best`, TensorBoard logs, the checkpoint and the
resume, the export), so a mistake that the real run would meet only at its
first evaluation, save or export shows up within seconds. The real
`save_dir` and `export_dir` are not touched and the real run is not
started; the models keep the few steps' changes (build new ones for the
real run, or run the script again without the flag). Files that the
user's own code writes (an evaluator's sample images, say) go where that
code puts them.

A failure is a `DryRunError` naming the stage (building and tracing,
training, evaluation, saving, resuming, export) and the step, followed by
the original error's whole message (for an error raised inside the
compiled step: the message and the innermost line of user code, without
AutoGraph's traceback), with the original error as its cause.
"""

import contextlib
import dataclasses
import shutil
import sys
import tempfile
import time
from typing import Any, Iterator

from sonnet_like.core import checks
from sonnet_like.core import files
from sonnet_like.scenarios import hooks

FIRST_STEPS = 2
RESUMED_STEPS = 1

OK_MESSAGE = (
    "{owner}: dry run OK in {seconds:.1f} s: {steps} steps{updates}, "
    "evaluation "
    "({metrics}), save, resume at step {first}, {export}; the real run "
    "({num_steps} steps) was not started{untouched}.")

FAILED_MESSAGE = (
    "{owner}: dry run FAILED at {stage} (after {step} of {steps} steps): "
    "{error}")


MULTI_WORKER_ERROR = (
    "{owner}: dry_run=True runs on one machine (its temporary folder is "
    "local), but the strategy spans a cluster. Dry-run the script once on "
    "one machine without TF_CONFIG, then start the cluster without dry_run.")


class DryRunError(RuntimeError):
  """A dry run met an error; its cause is the original error."""


def check_one_machine(owner: str, strategy: Any) -> None:
  """Refuses a strategy whose cluster has more than one task."""
  resolver = getattr(strategy, "cluster_resolver", None)
  spec = resolver.cluster_spec().as_dict() if resolver is not None else {}
  if sum(len(tasks) for tasks in spec.values()) > 1:
    raise ValueError(MULTI_WORKER_ERROR.format(owner=owner))


class _Stage(hooks.Hook):
  """Knows which stage of the dry run is under way."""

  def __init__(self):
    self.name = "building and tracing"

  def begin(self, scenario):
    self.name = "training"

  def eval_end(self, scenario, step, metrics):
    self.name = "evaluation"  # The hooks' checks of the metrics (keep_best).

  def step_end(self, scenario, step, logs):
    self.name = "saving" if step >= scenario.num_steps else "training"


def _updates(scenario: Any, steps: int) -> str:
  """Says how many updates the steps made when steps are micro-batches."""
  every = scenario.accumulate_steps
  if every == 1:
    return ""
  count = steps // every
  return (f" ({count} optimizer update{'s' if count > 1 else ''}: "
          f"accumulate_steps={every})")


def _metrics(history: Any) -> str:
  values = {name: values[-1] for name, values in history.eval.items()
            if name != "step" and values}
  if not values:
    return "none: evaluate_now() returned None"
  return ", ".join(f"{name} {value + 0.0:.4g}" for name, value in
                   sorted(values.items()))  # + 0.0: -0.0 reads 0.


@contextlib.contextmanager
def _staged(scenario: Any, stage: _Stage, method: str,
            name: str) -> Iterator[None]:
  """`scenario.<method>` says `stage.name = name` while it runs."""
  original = getattr(scenario, method)

  def staged(*args, **kwargs):
    before, stage.name = stage.name, name
    result = original(*args, **kwargs)
    stage.name = before
    return result

  setattr(scenario, method, staged)  # An instance attribute, removed after.
  try:
    yield
  finally:
    delattr(scenario, method)


def run(scenario: Any, can_export: bool) -> Any:
  """Runs the dry run of `scenario` (its `run()` twice); the `History`.

  Args:
    scenario: A scenario whose `__call__` has fed its data (`run()` calls
      this with `dry_run=True`).
    can_export: Whether the scenario defines `export(directory)`.

  Raises:
    DryRunError: Something went wrong; the message names the stage.
  """
  owner = type(scenario).__name__
  check_one_machine(owner, scenario.strategy)
  loop, saving = scenario.loop, scenario.checkpointing
  folder = tempfile.mkdtemp(prefix=f"{owner}-dry-run-")
  stage, started = _Stage(), time.perf_counter()
  # With accumulation a step is a micro-batch: train up to an update.
  first = max(FIRST_STEPS, scenario.accumulate_steps)
  steps = first + RESUMED_STEPS
  scenario.loop = dataclasses.replace(
      loop, num_steps=first, eval_every=None, log_every=1,
      profile_steps=None, dry_run=False, progress=False,
      catch_signals=False, hooks=loop.hooks + (stage,))
  scenario.checkpointing = dataclasses.replace(
      saving, save_dir=files.join(folder, "run"), save_every=None,
      restart=False, export_dir=None)
  try:
    with _staged(scenario, stage, "evaluate_now", "evaluation"), \
        _staged(scenario, stage, "export", "export"):
      scenario.run()
      stage.name = "resuming"
      scenario.loop.num_steps = steps
      if can_export:
        scenario.checkpointing.export_dir = files.join(folder, "export")
      history = scenario.run()
  except Exception as error:  # Named, with the original as the cause.  # pylint: disable=broad-except
    raise DryRunError(FAILED_MESSAGE.format(
        owner=owner, stage=stage.name, step=scenario.step, steps=steps,
        error=checks.error_text(error))) from error
  finally:
    scenario.loop, scenario.checkpointing = loop, saving
    shutil.rmtree(folder, ignore_errors=True)
  real = [f"{name} {path}" for name, path in (
      ("save_dir", saving.save_dir), ("export_dir", saving.export_dir)) if path]
  untouched = (f"; {' and '.join(real)} {'are' if len(real) > 1 else 'is'} "
               "untouched" if real else "")
  verdict = OK_MESSAGE.format(
      owner=owner, seconds=time.perf_counter() - started, steps=steps,
      updates=_updates(scenario, steps), metrics=_metrics(history),
      first=first,
      export="export" if can_export else "no export (export() not defined)",
      num_steps=loop.num_steps, untouched=untouched)
  if scenario.is_chief:
    print(verdict, file=sys.stderr, flush=True)
  history.stop_reason = "dry run"
  return history

