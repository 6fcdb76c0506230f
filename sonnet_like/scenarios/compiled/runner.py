"""`Runner`: how a scenario's state is built and its step run, one seam.

The engine (`engine.py`) and the compiled step (`step.py`) ask the
scenario's runner wherever the answer depends on how many copies of the
scenario's models one run trains; this class is a solo run's (one copy).
A population's runner (`population/runner.py`) answers for many, and is
the only code that knows them. What it may change:

- the state: `build` (the scenario's `build()`, once or once a copy),
  `named_state` and `engine_state` (what the checkpoint holds),
  `storage` (where the models' variables live, for their averages) and
  `read` (a variable's value, one per copy);
- the step: `traced` (the replica step the compiled call runs),
  `batches` (the fed data's iterator), `updates` (the updaters' policy,
  `updates/policy.py`) and `checks_per_call` (whether a per-call check
  can watch the state);
- the loop: `call_error` (a failed call), `split_logs`, `evaluate` and
  `after_run`;
- the run folder: `kept_rows` (`keep_best` of each copy), `export` and
  `exporting_at_best`.
"""

import contextlib
from typing import Any, Callable

import tensorflow as tf

from sonnet_like.scenarios.updates import policy


class Runner:
  """A solo run: the scenario's own objects, one step per replica.

  Args:
    scenario: The `Scenario` it runs.
  """

  # The updaters' policy: a solo run's `tf.cond`, no sums of its own.
  updates: policy.UpdatePolicy = policy.SOLO
  # How often `build()` runs in one run (each call makes its own objects).
  builds_per_run = 1
  # Whether the NaN guard may check once per compiled call.
  checks_per_call = True
  # Where the models' variables live (None: in the models themselves).
  storage: Any = None
  # The seeds of several copies of the fed data, stacked (None: one copy).
  data_seeds: list[int] | None = None

  def __init__(self, scenario: Any):
    self.scenario = scenario

  def before_run(self) -> None:
    """Before a run creates its state."""

  def build(self, cleanup: contextlib.ExitStack) -> None:
    """Creates the scenario's variables (`cleanup` closes what the run
    holds open until it ends)."""
    del cleanup
    self.scenario.build()

  def named_state(self) -> dict[str, Any]:
    """The scenario's state for the checkpoint, by name."""
    return dict(self.scenario.trackables())

  def engine_state(self, owned: dict[str, Any]) -> dict[str, Any]:
    """The engine's state for the checkpoint (`owned`, by name), less what
    the runner holds in its own state."""
    return owned

  def read(self, owner: Any, name: str) -> Any:
    """The value (NumPy) of the variable attribute `name` of `owner` (an
    object of the scenario's, say the loss scale), one per copy."""
    return getattr(owner, name).numpy()

  def batches(self, iterator: Any, own_inputs: bool) -> Any:
    """The fed data's iterator as the compiled call reads it
    (`own_inputs`: the scenario overrides `next_inputs`)."""
    del own_inputs
    return iterator

  def traced(self, guarded_step: Callable[..., Any], skip: bool,
             next_inputs: Callable[[], Any] | None
             ) -> tuple[Callable[..., Any], Callable[[], Any] | None, int]:
    """The step each replica runs, made of `guarded_step` (one traced
    `train_step` with its verdict), with the `next_inputs` the compiled
    call then reads (None: the fed data) and how many batches a step
    reads."""
    del skip
    return guarded_step, next_inputs, 1

  def call_error(self, error: tf.errors.OpError) -> Exception:
    """The error to raise for a compiled call that failed with `error`."""
    return error

  def split_logs(self, logs: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """A call's logs, and what the runner adds to them per copy (None)."""
    return logs, None

  def evaluate(self) -> dict[str, float] | None:
    """The metrics at an evaluation boundary."""
    return self.scenario.evaluate_now()

  def after_run(self) -> None:
    """After a run, however it ended."""

  def kept_rows(self, best: Any) -> Any:
    """What `keep_best` keeps of each copy, judged as `best` judges (a
    tf.Module for the checkpoint), or None: one copy, kept whole."""
    del best
    return None

  def export(self, directory: str) -> str:
    """The export at the end of a run, into `directory`."""
    return self.scenario.export(directory)

  def exporting_at_best(self, export: Callable[[str], str]
                        ) -> Callable[[str], str] | None:
    """`export` from the state `keep_best` kept, or None: the run folder
    reads the best checkpoint back whole (one copy)."""
    del export
    return None
