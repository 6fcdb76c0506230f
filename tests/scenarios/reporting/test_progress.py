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


def test_the_bar_shows_the_logs_rate_and_no_other(capsys):
  bar = progress.ProgressBar(disable=False)
  scenario = _Scenario()
  bar.begin(scenario)
  bar.step_end(scenario, 5, {"loss": 0.25, "steps_per_second": 506.0})
  bar.end(scenario)
  text = capsys.readouterr().err
  # 5 steps left at 506 steps/s: under a second.
  assert "5/10 [00:00, 506 steps/s, 00:00 left, loss=0.25]" in text, text
  assert "step/s" not in text and "steps_per_second" not in text
