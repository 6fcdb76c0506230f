"""`ProgressBar`: steps, loss, the last eval metrics and the ETA, via tqdm.

Quiet when the output is not a terminal (tqdm's `disable=None`), and on
workers other than the chief.
"""

from typing import Any

from sonnet_like.scenarios import hooks


class ProgressBar(hooks.Hook):
  """A tqdm bar over the training steps.

  Args:
    disable: True to hide it, False to force it, None (default) to show it
      only on a terminal.
    show: Names of the logs and eval metrics to show; all by default.
  """

  def __init__(self, disable: bool | None = None,
               show: tuple[str, ...] | None = None):
    self.disable, self.show = disable, show
    self._bar: Any = None
    self._postfix: dict[str, str] = {}

  def begin(self, scenario):
    import tqdm  # pylint: disable=g-import-not-at-top
    disable = self.disable if scenario.is_chief else True
    self._bar = tqdm.tqdm(total=scenario.num_steps, initial=scenario.step,
                          disable=disable, unit="step", dynamic_ncols=True,
                          desc=type(scenario).__name__)

  def _update(self, values: dict[str, float], prefix: str) -> None:
    for key, value in values.items():
      if self.show is None or key in self.show:
        self._postfix[prefix + key] = f"{value:.4g}"
    self._bar.set_postfix(self._postfix, refresh=False)

  def step_end(self, scenario, step, logs):
    if self._bar is None:
      return
    self._update(logs, "")
    self._bar.update(step - self._bar.n)

  def eval_end(self, scenario, step, metrics):
    if self._bar is not None:
      self._update(metrics, "eval_")

  def end(self, scenario):
    if self._bar is not None:
      self._bar.close()
      self._bar = None
