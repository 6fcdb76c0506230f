"""The Python loop of a run: compiled calls between boundaries, hooks,
evaluations, saves and stop signals.

`Scenario.run` restores the state, then `train` compiles the step
(`TracedStep.compile`, with what the scenario's runner reads) and loops:
each call runs up to the next log, eval, save or profiling boundary;
after it the hooks see the logs (and the evaluation at an eval boundary),
the run folder saves at a save boundary. A caught SIGTERM or Ctrl-C
saves and exits with the signal's code; running the same command again
resumes.
"""

import sys
from typing import Any

import tensorflow as tf

from sonnet_like.core import checks
from sonnet_like.scenarios.reporting import logs as logs_lib
from sonnet_like.scenarios.reporting import profiling
from sonnet_like.scenarios.run_folder import cluster
from sonnet_like.scenarios.run_folder import saved_run
from sonnet_like.scenarios.run_folder import signals

RESUME_MESSAGE = (
    "\n{owner}: caught {signal} at step {step}; {saved}. Run the same command "
    "again to resume from there.")


def _without_frames(error: Exception) -> Exception:
  """A ValueError or TypeError raised while the step was traced, with the
  message first: AutoGraph's "in user code:" frames (the chained original
  keeps them) replaced by the innermost user frame."""
  if type(error) not in (ValueError, TypeError) or not str(error).startswith(
      "in user code:"):
    return error
  text = checks.error_text(error)
  return type(error)(text.removeprefix(f"{type(error).__name__}: "))


def train(scenario: Any, saved: saved_run.SavedRun, state: list[Any],
          own_inputs: bool) -> None:
  """The loop with its hooks; on SIGTERM/Ctrl-C, saves and exits.

  Args:
    scenario: The `Scenario`, its state restored.
    saved: Its run folder.
    state: What a failed call may roll back (the run's state but the
      data iterator).
    own_inputs: The scenario overrides `next_inputs`.
  """
  fed = scenario.fed_data
  iterator = scenario.runner.batches(
      None if fed is None else fed.iterator, own_inputs)
  scenario.train_function = scenario.traced_step.compile(
      scenario, state,
      next_inputs=scenario.next_inputs if own_inputs else None,
      iterator=iterator)
  with signals.catch_stop_signals(
      scenario.catch_signals, agree=cluster.agreement(scenario.strategy),
      watcher=scenario.termination_watcher) as caught:
    for hook in saved.hooks:
      hook.begin(scenario)
    path = None
    try:
      with cluster.names_a_lost_worker(type(scenario).__name__,
                                       scenario.strategy):
        _loop(scenario, saved, caught)
        if caught:  # Saved before hooks end (EarlyStopping may restore).
          scenario.history.stop_reason = caught.signal_name
          path = saved.save(scenario.step)
    finally:
      for hook in saved.hooks:
        hook.end(scenario)
    if caught:
      saved = f"saved {path}" if path else "nothing was saved (no save_dir)"
      scenario.say(RESUME_MESSAGE.format(owner=type(scenario).__name__,
                                         signal=caught.signal_name,
                                         step=scenario.step, saved=saved))
      sys.exit(caught.exit_code)


def _loop(scenario: Any, saved: saved_run.SavedRun, caught: Any) -> None:
  step = scenario.step
  sizes: dict[int, tf.Tensor] = {}  # Reused: no new tensor per call.
  rate = logs_lib.StepRate(step, scenario.log_every)
  # The one trace, called directly: skips tf.function's per-call dispatch
  # (~10% of a small model's step at steps_per_call=1).
  try:
    call = scenario.train_function.get_concrete_function(
        tf.TensorSpec([], tf.int32))
  except (ValueError, TypeError) as error:
    clean = _without_frames(error)
    if clean is error:
      raise
    raise clean from error
  while (step < scenario.num_steps and scenario.stop_reason is None and
         not caught.agreed()):
    n = _calls_until_boundary(scenario, step)
    if n not in sizes:
      sizes[n] = tf.constant(n, tf.int32)
    try:
      logs, finite = call(sizes[n])
    except tf.errors.OpError as error:
      replaced = scenario.runner.call_error(error)
      if replaced is error:
        raise
      raise replaced from error
    logs, per_copy = scenario.runner.split_logs(logs)
    if not (bool(finite) or scenario.on_nonfinite == "skip"):
      raise scenario.traced_step.nonfinite_error(saved.latest, step, n)
    step += n
    logs = logs_lib.Logs(logs, per_copy)
    rate.add_to(logs, step)
    if scenario.on_nonfinite == "skip":
      logs.extra["skipped"] = lambda: float(scenario.skipped_steps)
    at_end = step >= scenario.num_steps
    if at_end or (scenario.eval_every and step % scenario.eval_every == 0):
      with scenario.ema_weights():
        metrics = scenario.runner.evaluate()
      if metrics is not None:
        for hook in saved.hooks:
          hook.eval_end(scenario, step, metrics)
    for hook in saved.hooks:
      hook.step_end(scenario, step, logs)
    if scenario.save_every and step % scenario.save_every == 0:
      saved.save(step)


def _calls_until_boundary(scenario: Any, step: int) -> int:
  """How many steps the next call runs: up to the next log, eval, save or
  profiling edge, at most `steps_per_call`."""
  boundary = scenario.num_steps
  for every in (scenario.eval_every, scenario.save_every, scenario.log_every):
    if every:
      boundary = min(boundary, (step // every + 1) * every)
  boundary = min([boundary, *profiling.edges(scenario.profile_steps, step)])
  return min(boundary - step, scenario.steps_per_call)

