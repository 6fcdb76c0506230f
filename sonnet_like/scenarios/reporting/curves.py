"""Learning curves of a `History`, drawn to a PNG with matplotlib.

One panel per kind of quantity, so that values of different sizes never
share an axis: the losses (train and eval), each other metric (its train
and eval values together: "accuracy", a return, ...), the learning rates,
the throughput ("steps_per_second"). A panel's y axis is logarithmic when
its values are positive and span two decades or more (a loss falling from
2.3 to 0.01), linear otherwise (an accuracy, a constant learning rate).
Train values are lines, eval values lines with a marker at each
evaluation.

matplotlib is an optional dependency (the `examples` extra): it is imported
when a plot is drawn, never when sonnet_like is imported, and drawn on a
`matplotlib.figure.Figure` of its own, so pyplot's global backend and
figures are left alone.
"""

import dataclasses
import io
import math
from typing import Any

from sonnet_like.core import files

NO_MATPLOTLIB_ERROR = (
    "History.plot draws with matplotlib, which is not installed. Install it "
    "with the examples extra (`pip install sonnet_like[examples]`) or "
    "`pip install matplotlib`.")

EMPTY_ERROR = ("History.plot: the history holds no record yet; plot it after "
               "training.")

_COLUMNS = 3  # Panels per row at most (four panels: two rows of two).
_LOG_SPAN = 100.0  # max / min from which a positive axis is logarithmic.


@dataclasses.dataclass
class Series:
  """One curve: a quantity's values at some steps."""
  kind: str  # "train" or "eval".
  name: str
  steps: list[float]
  values: list[float]


def panel_of(name: str) -> str:
  """The panel a quantity is drawn in: "loss", "learning rate",
  "throughput", or its own name (a metric)."""
  if "loss" in name:
    return "loss"
  if "learning_rate" in name or name == "lr" or name.endswith("_lr"):
    return "learning rate"
  if name.endswith("per_second"):
    return "throughput"
  return name


def panels(history: Any) -> dict[str, list[Series]]:
  """The history's curves by panel: losses first, then the metrics in the
  order they were recorded, the learning rates, the throughput."""
  found: dict[str, list[Series]] = {}
  for kind, table in (("train", history.train), ("eval", history.eval)):
    steps = table.get("step", [])
    for name, values in table.items():
      if name != "step" and values:
        found.setdefault(panel_of(name), []).append(
            Series(kind, name, steps[-len(values):], values))
  last = ("learning rate", "throughput")
  order = (["loss"] if "loss" in found else []) + [
      p for p in found if p not in ("loss",) + last] + [
          p for p in last if p in found]
  return {p: found[p] for p in order}


def log_scale(series: list[Series]) -> bool:
  """Whether the values are positive and span `_LOG_SPAN` or more."""
  values = [v for s in series for v in s.values if math.isfinite(v)]
  return bool(values) and min(values) > 0 and (
      max(values) / min(values) >= _LOG_SPAN)


def _flat_and_positive(series: list[Series]) -> bool:
  values = [v for s in series for v in s.values if math.isfinite(v)]
  return bool(values) and min(values) > 0 and (
      max(values) - min(values) <= 0.01 * max(values))


def _label(series: Series, both_kinds: bool) -> str:
  """"train loss" and "eval loss" where a panel has both, else the name
  ("eval" kept for eval values)."""
  if both_kinds or series.kind == "eval":
    return f"{series.kind} {series.name}"
  return series.name


def plot(history: Any, path: str, title: str | None = None) -> str:
  """Draws the history's learning curves into a PNG at `path`.

  Args:
    history: A `History` (or anything with its `train` and `eval` tables).
    path: The PNG to write (any path `tf.io.gfile` writes: local, `gs://`).
    title: Above the figure.

  Returns:
    `path`.

  Raises:
    ImportError: matplotlib is not installed.
    ValueError: the history holds no record yet.
  """
  try:
    from matplotlib import figure  # pylint: disable=g-import-not-at-top
  except ImportError as error:
    raise ImportError(NO_MATPLOTLIB_ERROR) from error
  by_panel = panels(history)
  if not by_panel:
    raise ValueError(EMPTY_ERROR)
  columns = 2 if len(by_panel) == 4 else min(len(by_panel), _COLUMNS)
  rows = -(-len(by_panel) // columns)
  fig = figure.Figure(figsize=(4.5 * columns, 3.5 * rows + (0.4 if title
                                                           else 0.0)))
  axes = fig.subplots(rows, columns, squeeze=False).ravel()
  for ax, (panel, series) in zip(axes, by_panel.items()):
    both_kinds = len({s.kind for s in series}) == 2
    for s in series:
      style = dict(marker="o", markersize=4, linestyle="--") if (
          s.kind == "eval") else dict(linewidth=1.2)
      ax.plot(s.steps, s.values, label=_label(s, both_kinds), **style)
    if log_scale(series):
      ax.set_yscale("log")
    elif _flat_and_positive(series):  # A constant rate: from 0, not +-4%.
      ax.set_ylim(0, 1.2 * max(v for s in series for v in s.values))
    ax.set_title(panel.replace("_", " ").capitalize())
    ax.set_xlabel("step")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize="small")
  for ax in axes[len(by_panel):]:
    ax.set_visible(False)
  if title:
    fig.suptitle(title)
  fig.tight_layout()
  buffer = io.BytesIO()
  fig.savefig(buffer, format="png", dpi=100)
  files.write_bytes(files.normalized(path), buffer.getvalue())
  return path
