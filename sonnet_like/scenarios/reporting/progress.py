"""`ProgressBar`: steps, the rate, the ETA, the logs and eval metrics (tqdm).

Quiet when the output is not a terminal (tqdm's `disable=None`), and on
workers other than the chief.

The bar shows one rate, the logs' own "steps_per_second" (training steps
per second of wall time since the previous log step, hooks, evaluations
and saves included), and an ETA from it; not tqdm's rate, which counts
from the start of the run, tracing included, and so could disagree with
the logs several-fold.
"""

from typing import Any

from sonnet_like.scenarios import hooks

RATE = "steps_per_second"

# tqdm's default bar without its own rate and ETA: the postfix has ours
# ("[00:07, 893.9 steps/s, 00:02 left, loss=0.011]").
BAR_FORMAT = "{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}{postfix}]"


class ProgressBar(hooks.Hook):
  """A tqdm bar over the training steps, with the logs' steps per second.

  Args:
    disable: True to hide it, False to force it, None (default) to show it
      only on a terminal.
    show: Names of the logs and eval metrics to show; all by default (the
      rate and the ETA are always shown).
  """

  def __init__(self, disable: bool | None = None,
               show: tuple[str, ...] | None = None):
    self.disable, self.show = disable, show
    self._bar: Any = None
    self._postfix: dict[str, str] = {}
    self._rate: float | None = None
    self._left = 0

  def begin(self, scenario):
    import tqdm  # pylint: disable=g-import-not-at-top
    disable = self.disable if scenario.is_chief else True
    self._bar = tqdm.tqdm(total=scenario.num_steps, initial=scenario.step,
                          disable=disable, unit="step", dynamic_ncols=True,
                          desc=type(scenario).__name__, bar_format=BAR_FORMAT)

  def _update(self, values: dict[str, float], prefix: str) -> None:
    for key, value in values.items():
      if key == RATE:
        self._rate = value
      elif self.show is None or key in self.show:
        self._postfix[prefix + key] = f"{value:.4g}"
    parts = [f"{key}={value}" for key, value in self._postfix.items()]
    if self._rate:
      eta = self._bar.format_interval(self._left / self._rate)
      parts = [f"{self._rate:.4g} steps/s", f"{eta} left"] + parts
    self._bar.set_postfix_str(", ".join(parts), refresh=False)

  def step_end(self, scenario, step, logs):
    if self._bar is None:
      return
    self._left = scenario.num_steps - step
    self._update(logs, "")
    self._bar.update(step - self._bar.n)

  def eval_end(self, scenario, step, metrics):
    if self._bar is not None:
      self._update(metrics, "eval_")

  def end(self, scenario):
    if self._bar is not None:
      self._bar.close()
      self._bar = None
