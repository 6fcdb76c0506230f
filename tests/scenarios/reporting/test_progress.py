"""ProgressBar: shows steps, logs and eval metrics; quiet off a terminal."""

from sonnet_like.scenarios.reporting import progress


class _Scenario:
  num_steps, step, is_chief = 10, 0, True


def _run(capsys, **kwargs):
  bar = progress.ProgressBar(**kwargs)
  scenario = _Scenario()
  bar.begin(scenario)
  bar.step_end(scenario, 5, {"loss": 0.25})
  bar.eval_end(scenario, 5, {"accuracy": 0.75})
  bar.step_end(scenario, 10, {"loss": 0.125})
  bar.end(scenario)
  return capsys.readouterr().err


def test_forced_bar_shows_progress_and_metrics(capsys):
  text = _run(capsys, disable=False)
  assert "10/10" in text and "loss=0.125" in text
  assert "eval_accuracy=0.75" in text


def test_quiet_when_not_a_terminal(capsys):
  assert _run(capsys) == ""  # pytest's captured stderr is not a terminal.


def test_show_filters(capsys):
  text = _run(capsys, disable=False, show=("accuracy",))
  assert "eval_accuracy" in text and "loss=" not in text
