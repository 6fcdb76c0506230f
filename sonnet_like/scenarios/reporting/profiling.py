"""`profile_steps`: TensorFlow's profiler over a window of training steps.

`profile_steps=(start, stop)` traces the steps after `start` steps are done
up to `stop` (`stop - start` steps) with `tf.profiler.experimental` into
the run's TensorBoard logs, `save_dir/logs/plugins/profile/<time>/
<host>.xplane.pb`. The loop cuts its compiled calls at `start` and `stop`
(`training_loop._calls_until_boundary`), so the window is exact whatever
`steps_per_call`. The chief alone profiles (its host). A run resumed inside
the window is traced from the resumed step to `stop`. TensorBoard shows
the trace in its Profile tab, which needs `pip install
tensorboard-plugin-profile`.
"""

import sys
from typing import Any

import tensorflow as tf

from sonnet_like.core import files
from sonnet_like.scenarios import hooks

WINDOW_ERROR = (
    "{owner}: profile_steps must be a pair (start, stop) of steps with 0 <= "
    "start < stop <= num_steps={num_steps}, got {window!r}.")

BUSY_ERROR = (
    "{owner}: profile_steps: another TensorFlow profiler is already running "
    "in this process; stop it (tf.profiler.experimental.stop()) or drop "
    "profile_steps.")

DONE_MESSAGE = (
    "{owner}: profiled steps {start}-{stop} into {log_dir}; see them with "
    "`tensorboard --logdir {log_dir}`, Profile tab (pip install "
    "tensorboard-plugin-profile).")


def checked_window(owner: str, window: Any, num_steps: int,
                   save_dir: str | None) -> tuple[int, int] | None:
  """`window` as `(start, stop)`, or None; an error naming `owner`."""
  if window is None:
    return None
  if not (isinstance(window, (tuple, list)) and len(window) == 2 and
          all(isinstance(s, int) and not isinstance(s, bool)
              for s in window) and 0 <= window[0] < window[1] <= num_steps):
    raise ValueError(WINDOW_ERROR.format(owner=owner, num_steps=num_steps,
                                         window=window))
  if save_dir is None:
    raise ValueError(f"{owner}: profile_steps writes the trace into "
                     "save_dir/logs and needs a save_dir, got save_dir=None.")
  return int(window[0]), int(window[1])


def edges(window: tuple[int, int] | None, step: int) -> list[int]:
  """The window's ends after `step`: where the loop must cut its calls."""
  return [edge for edge in window or () if edge > step]


class Profiler(hooks.Hook):
  """Starts TensorFlow's profiler at `start` steps and stops it at `stop`.

  Args:
    owner: The scenario's name, for messages.
    log_dir: Where the trace goes (the run's TensorBoard logs).
    window: `(start, stop)`, checked by `checked_window`.
  """

  def __init__(self, owner: str, log_dir: str, window: tuple[int, int]):
    self.owner, self.log_dir = owner, files.normalized(log_dir)
    self.start, self.stop = window
    self.active = False

  def _begin_trace(self, scenario: Any) -> None:
    if not scenario.is_chief:
      return
    try:
      tf.profiler.experimental.start(self.log_dir)
    except tf.errors.AlreadyExistsError as error:
      raise RuntimeError(BUSY_ERROR.format(owner=self.owner)) from error
    self.active = True

  def _end_trace(self) -> None:
    self.active = False  # Only the chief's trace was started.
    tf.profiler.experimental.stop()
    print(DONE_MESSAGE.format(owner=self.owner, start=self.start,
                              stop=self.stop, log_dir=self.log_dir),
          file=sys.stderr, flush=True)

  def begin(self, scenario):
    if self.start <= scenario.step < self.stop:
      self._begin_trace(scenario)

  def step_end(self, scenario, step, logs):
    if self.active and step >= self.stop:
      self._end_trace()
    elif step == self.start and not self.active:
      self._begin_trace(scenario)

  def end(self, scenario):
    if self.active:  # Stopped early (an error, early stopping, a signal).
      self._end_trace()
