"""`History`: the train logs and eval metrics of a run, step by step."""

import json
import os
from typing import Any

from sonnet_like.scenarios import hooks


class History(hooks.Hook):
  """Records train logs every `log_every` steps and every evaluation.

  Attributes:
    train: `{"step": [...], "loss": [...], ...}`.
    eval: `{"step": [...], "accuracy": [...], ...}`.
    stop_reason: Why the run ended ("done", "early stopping: ...", ...).
  """

  FILE = "history.json"

  def __init__(self, log_every: int = 100):
    self.log_every = log_every
    self.train: dict[str, list[float]] = {}
    self.eval: dict[str, list[float]] = {}
    self.stop_reason: str = ""

  @staticmethod
  def _add(table: dict[str, list[float]], step: int,
           values: dict[str, float]) -> None:
    table.setdefault("step", []).append(step)
    for key, value in values.items():
      table.setdefault(key, []).append(float(value))

  def step_end(self, scenario, step, logs):
    if step % self.log_every == 0 or step == scenario.num_steps:
      if not self.train.get("step") or self.train["step"][-1] != step:
        self._add(self.train, step, logs)

  def eval_end(self, scenario, step, metrics):
    self._add(self.eval, step, metrics)

  def to_dict(self) -> dict[str, Any]:
    return {"train": self.train, "eval": self.eval,
            "stop_reason": self.stop_reason}

  def save(self, directory: str) -> None:
    path = os.path.join(directory, self.FILE)
    with open(path + ".tmp", "w") as f:
      json.dump(self.to_dict(), f)
    os.replace(path + ".tmp", path)

  def load(self, directory: str, up_to_step: int) -> None:
    """Reads a saved history, dropping entries after `up_to_step`."""
    path = os.path.join(directory, self.FILE)
    if not os.path.exists(path):
      return
    with open(path) as f:
      saved = json.load(f)
    for name in ("train", "eval"):
      table = saved.get(name, {})
      keep = [i for i, s in enumerate(table.get("step", [])) if s <= up_to_step]
      setattr(self, name, {k: [v[i] for i in keep] for k, v in table.items()})
    self.stop_reason = saved.get("stop_reason", "")

  def __repr__(self) -> str:
    last = {k: v[-1] for k, v in self.eval.items()} if self.eval else {}
    return (f"History(train_records={len(self.train.get('step', []))}, "
            f"last_eval={last}, stop_reason={self.stop_reason!r})")
