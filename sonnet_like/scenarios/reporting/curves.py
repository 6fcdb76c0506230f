"""Learning curves of a `History`, drawn to a PNG with matplotlib.

matplotlib is an optional dependency (the `examples` extra): it is imported
when a plot is drawn, never when sonnet_like is imported, and drawn on a
`matplotlib.figure.Figure` of its own, so pyplot's global backend and
figures are left alone.
"""

import io
from typing import Any

from sonnet_like.core import files

NO_MATPLOTLIB_ERROR = (
    "History.plot draws with matplotlib, which is not installed. Install it "
    "with the examples extra (`pip install sonnet_like[examples]`) or "
    "`pip install matplotlib`.")


def _series(table: dict[str, list[float]]) -> dict[str, list[float]]:
  """The table's columns but the steps."""
  return {name: values for name, values in table.items() if name != "step"}


def plot(history: Any, path: str, title: str | None = None) -> str:
  """Draws train logs and eval metrics against the step into a PNG at `path`.

  The left panel holds every train log ("loss", a GAN's two losses, ...)
  and the eval "loss", on a log scale when all are positive; the right
  panel, drawn when there is one, every other eval metric ("accuracy", ...).

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
  train_steps = history.train.get("step", [])
  eval_steps = history.eval.get("step", [])
  losses = [(name, train_steps, values, "-")
            for name, values in _series(history.train).items()]
  metrics = []
  for name, values in _series(history.eval).items():
    if name == "loss":
      losses.append(("eval loss" if losses else "loss", eval_steps, values,
                     "o-"))
    else:
      metrics.append((name, eval_steps, values, "o-"))
  if not losses and not metrics:
    raise ValueError("History.plot: the history holds no record yet; plot it "
                     "after training.")
  panels = [p for p in (losses, metrics) if p]
  fig = figure.Figure(figsize=(5 * len(panels), 4))
  axes = fig.subplots(1, len(panels), squeeze=False)[0]
  for ax, panel in zip(axes, panels):
    for name, steps, values, style in panel:
      ax.plot(steps, values, style, label=name, markersize=3)
    ax.set_xlabel("step")
    ax.grid(alpha=0.3)
    ax.legend()
  axes[0].set_title("Loss" if losses else "Evaluation")
  if losses and all(v > 0 for _, _, values, _ in losses for v in values):
    axes[0].set_yscale("log")
  if len(panels) == 2:
    axes[1].set_title("Evaluation")
  if title:
    fig.suptitle(title)
  fig.tight_layout()
  buffer = io.BytesIO()
  fig.savefig(buffer, format="png", dpi=100)
  files.write_bytes(files.normalized(path), buffer.getvalue())
  return path
