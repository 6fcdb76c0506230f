"""History.plot: learning curves of any scenario as a PNG."""

import sys

import numpy as np
import pytest

from sonnet_like.scenarios.reporting import curves
from sonnet_like.scenarios.run_folder import history as history_lib

pytest.importorskip("matplotlib")
from matplotlib import image  # pylint: disable=g-import-not-at-top


def _history(with_eval=True):
  h = history_lib.History()
  h.train = {"step": [10, 20, 30], "loss": [2.0, 1.0, 0.5]}
  if with_eval:
    h.eval = {"step": [15, 30], "loss": [1.5, 0.7], "accuracy": [0.4, 0.8]}
  return h


def _pixels(path):
  return image.imread(str(path))


def test_plot_draws_loss_and_eval_panels(tmp_path):
  both = _history().plot(str(tmp_path / "both.png"), title="digits")
  loss_only = _history(with_eval=False).plot(str(tmp_path / "loss.png"))
  wide, narrow = _pixels(both), _pixels(loss_only)
  assert wide.shape[:2] == (390, 900) and narrow.shape[:2] == (350, 450)
  for pixels in (wide, narrow):  # Lines were drawn, not a blank canvas.
    assert len(np.unique(pixels.reshape(-1, pixels.shape[-1]), axis=0)) > 20


def test_one_panel_per_kind_of_quantity_each_on_its_own_scale():
  h = history_lib.History()
  h.train = {"step": [10, 20, 30], "loss": [2.3, 0.1, 0.01],
             "accuracy": [0.1, 0.8, 0.99], "learning_rate": [1e-3] * 3,
             "steps_per_second": [4.0, 400.0, 410.0],
             "generator_loss": [1.0, 0.9, 0.8]}
  h.eval = {"step": [30], "loss": [0.02], "accuracy": [0.97],
            "mean_return": [-3.0]}
  panels = curves.panels(h)
  assert list(panels) == ["loss", "accuracy", "mean_return",
                          "learning rate", "throughput"]
  assert [(s.kind, s.name) for s in panels["loss"]] == [
      ("train", "loss"), ("train", "generator_loss"), ("eval", "loss")]
  assert [(s.kind, s.steps) for s in panels["accuracy"]] == [
      ("train", [10, 20, 30]), ("eval", [30])]
  # Log where positive values span two decades, else linear.
  assert curves.log_scale(panels["loss"])
  assert curves.log_scale(panels["throughput"])
  assert not curves.log_scale(panels["accuracy"])
  assert not curves.log_scale(panels["learning rate"])
  assert not curves.log_scale(panels["mean_return"])


def test_plot_of_an_empty_history_says_so(tmp_path):
  with pytest.raises(ValueError, match=r"^History.plot: the history holds no "
                     r"record yet; plot it after training\.$"):
    history_lib.History().plot(str(tmp_path / "empty.png"))
  assert not (tmp_path / "empty.png").exists()


def test_without_matplotlib_the_error_names_the_examples_extra(
    tmp_path, monkeypatch):
  monkeypatch.setitem(sys.modules, "matplotlib", None)  # Import fails.
  with pytest.raises(ImportError, match=r"^History.plot draws with "
                     r"matplotlib, which is not installed\. Install it with "
                     r"the examples extra \(`pip install "
                     r"sonnet_like\[examples\]`\)"):
    _history().plot(str(tmp_path / "curves.png"))
