"""A population's results as distributions: checked against SciPy at run time.

The IQM is compared with `scipy.stats.trim_mean(x, 0.25)` (rliable's
definition), the mean and median with NumPy, and the percentile bootstrap
interval with `scipy.stats.bootstrap(method="percentile")` within
Monte-Carlo tolerance.
"""

import re

import numpy as np
import pytest
from scipy import stats

from sonnet_like.scenarios.reporting import distribution
from sonnet_like.scenarios.reporting.distribution import Distribution
from sonnet_like.scenarios.reporting.distribution import summarize
from sonnet_like.scenarios.reporting.distribution import summarize_groups
from sonnet_like.scenarios.reporting.distribution import table


def _sample(n, seed=0):
  return np.random.default_rng(seed).normal(50.0, 10.0, n)


# ---- point statistics ----


@pytest.mark.parametrize("n", range(1, 14))
def test_iqm_is_scipy_trim_mean_a_quarter(n):
  # n = 1..13 covers 0.25 * n below 1 (nothing trimmed), integral (4, 8, 12)
  # and fractional (5, 6, 7, 9, ...: scipy trims int(0.25 * n)).
  rng = np.random.default_rng(n)
  for values in (rng.normal(size=n), rng.integers(0, 3, n).astype(float),
                 np.exp(rng.normal(size=n) * 3)):  # Ties; heavy right tail.
    expected = stats.trim_mean(values, 0.25)
    assert summarize(values).iqm == pytest.approx(expected, rel=1e-12,
                                                  abs=1e-12)


def test_iqm_trims_a_quarter_rounded_down():
  # 7 members: int(1.75) = 1 dropped at each end, the middle 5 averaged.
  values = [100.0, -100.0, 1.0, 2.0, 3.0, 4.0, 5.0]
  assert summarize(values).iqm == 3.0
  assert float(distribution.iqm(np.array([[1.0, 2.0, 3.0, 100.0],
                                          [0.0, 0.0, 2.0, 4.0]]))[1]) == 1.0


@pytest.mark.parametrize("n", [1, 2, 5, 10, 64])
def test_point_statistics_are_numpys(n):
  values = _sample(n, seed=n)
  d = summarize(values)
  assert d.count == n
  assert d.mean == pytest.approx(np.mean(values), rel=1e-12)
  assert d.median == pytest.approx(np.median(values), rel=1e-12)
  assert d.min == values.min() and d.max == values.max()
  if n > 1:
    assert d.std == pytest.approx(np.std(values, ddof=1), rel=1e-12)
  else:
    assert np.isnan(d.std)
  for field in ("mean", "median", "iqm", "std", "low", "high", "min", "max"):
    # Python floats (a readable repr), not NumPy scalars.
    assert isinstance(getattr(d, field), float), field
    assert not isinstance(getattr(d, field), np.floating), field


def test_takes_lists_tuples_arrays_and_tensors():
  import tensorflow as tf  # pylint: disable=g-import-not-at-top
  values = [3.0, 1.0, 2.0, 5.0]
  expected = summarize(values)
  assert summarize(tuple(values)) == expected
  assert summarize(np.array(values, np.float32)) == expected
  assert summarize(tf.constant(values)) == expected
  assert summarize([3, 1, 2, 5]) == expected


# ---- the bootstrap interval ----


@pytest.mark.parametrize("statistic,scipy_statistic", [
    ("iqm", lambda x, axis: stats.trim_mean(x, 0.25, axis=axis)),
    ("mean", np.mean),
    ("median", np.median),
])
def test_interval_matches_scipy_percentile_bootstrap(statistic,
                                                     scipy_statistic):
  values = np.random.default_rng(7).gamma(2.0, 10.0, 300)  # Skewed.
  reps = 20_000
  d = summarize(values, statistic=statistic, reps=reps, seed=1)
  expected = stats.bootstrap(
      (values,), scipy_statistic, n_resamples=reps, method="percentile",
      confidence_level=0.95, vectorized=True,
      rng=np.random.default_rng(2)).confidence_interval
  # Two independent Monte-Carlo estimates of the same quantiles: their
  # standard error here is about 1% of the width.
  tolerance = 0.05 * (expected.high - expected.low)
  assert d.low == pytest.approx(expected.low, abs=tolerance)
  assert d.high == pytest.approx(expected.high, abs=tolerance)


def test_interval_at_another_confidence_matches_scipy():
  values = _sample(200, seed=3)
  d = summarize(values, confidence=0.8, reps=20_000)
  expected = stats.bootstrap(
      (values,), lambda x, axis: stats.trim_mean(x, 0.25, axis=axis),
      n_resamples=20_000, method="percentile", confidence_level=0.8,
      rng=np.random.default_rng(5)).confidence_interval
  tolerance = 0.05 * (expected.high - expected.low)
  assert d.low == pytest.approx(expected.low, abs=tolerance)
  assert d.high == pytest.approx(expected.high, abs=tolerance)
  wider = summarize(values)  # 95%.
  assert d.high - d.low < wider.high - wider.low


def test_same_seed_same_interval_other_seed_another():
  values = _sample(20)
  first, again = summarize(values, seed=3), summarize(values, seed=3)
  assert (first.low, first.high) == (again.low, again.high)
  assert first == again
  other = summarize(values, seed=4)
  assert (other.low, other.high) != (first.low, first.high)
  assert summarize(values) == summarize(values, seed=0)
  fresh = summarize(values, seed=None)
  assert fresh.low <= fresh.high


def test_interval_is_reproducible_whatever_the_chunking(monkeypatch):
  values = _sample(50)
  whole = summarize(values, reps=300)
  monkeypatch.setattr(distribution, "_CHUNK", 120)  # Two rows per chunk.
  assert summarize(values, reps=300) == whole


@pytest.mark.parametrize("statistic", distribution.STATISTICS)
def test_interval_contains_the_sample_statistic(statistic):
  for seed in range(20):
    d = summarize(_sample(5 + seed, seed), statistic=statistic, seed=seed)
    assert d.low <= d.value <= d.high, (seed, d)


@pytest.mark.parametrize("statistic", distribution.STATISTICS)
def test_more_members_narrower_interval(statistic):
  widths = [summarize(_sample(n, seed=n), statistic=statistic).high -
            summarize(_sample(n, seed=n), statistic=statistic).low
            for n in (10, 100, 1000)]
  assert widths[0] > widths[1] > widths[2] > 0


def test_interval_covers_the_true_mean_about_as_often_as_it_says():
  # 400 populations of 30 members from N(0, 1): a 90% interval of the mean
  # (the percentile bootstrap runs a little short at n = 30) covers 0 in
  # about 88% of them; binomial spread +-1.6%.
  rng = np.random.default_rng(11)
  covered = [d.low <= 0.0 <= d.high for d in (
      summarize(rng.normal(size=30), statistic="mean", confidence=0.9,
                reps=1000, seed=i) for i in range(400))]
  assert 0.83 < np.mean(covered) < 0.95


def test_one_member_and_equal_members():
  d = summarize([4.5])
  assert (d.count, d.iqm, d.low, d.high, d.min, d.max) == (
      1, 4.5, 4.5, 4.5, 4.5, 4.5)
  d = summarize([0.1] * 7)
  assert d.low <= d.value <= d.high
  assert d.low == pytest.approx(0.1) and d.high == pytest.approx(0.1)


# ---- str and table ----


def test_str_names_the_statistic_interval_and_members():
  values = [93.0, 95.5, 88.0, 97.0, 91.0, 99.5, 12.0, 94.0, 96.0, 90.0]
  d = summarize(values)
  assert re.fullmatch(r"IQM 93\.2 \[\d+\.\d, \d+\.\d\] \(mean 85\.6, median "
                      r"93\.5, 10 members\)", str(d)), str(d)
  assert str(summarize(values, statistic="median")).startswith("median 93.5 [")
  assert "(mean 85.6, 10 members)" in str(summarize(values, "median"))
  assert str(summarize(values, "mean", confidence=0.9)).startswith(
      "mean 85.6 90% CI [")
  # Three significant digits of the largest number shown, at least one
  # decimal.
  assert str(summarize([3.0])) == (
      "IQM 3.00 [3.00, 3.00] (mean 3.00, median 3.00, 1 member)")
  assert str(summarize([500.0] * 3)).startswith("IQM 500.0 [500.0, 500.0]")
  assert str(summarize([0.0123, 0.0125])).startswith("IQM 0.0124 [")
  assert str(summarize([-120.0, -103.2])).startswith("IQM -111.6 [-120.0, ")


def test_summarize_groups_is_summarize_per_label_in_first_appearance_order():
  values = _sample(12)
  groups = [(3e-4, 0.99), (1e-3, 0.99), (3e-4, 0.9)] * 4
  sweep = summarize_groups(values, groups, statistic="mean", reps=500, seed=2)
  assert list(sweep) == [(3e-4, 0.99), (1e-3, 0.99), (3e-4, 0.9)]
  for i, (label, d) in enumerate(sweep.items()):
    assert d == summarize(values[i::3], statistic="mean", reps=500, seed=2)
    assert label == groups[i]
  assert summarize_groups(np.arange(4.0), np.array([1, 1, 2, 2]))[2].mean == 2.5


def test_table_is_aligned_one_row_per_group_in_order():
  values = np.concatenate([_sample(5, 1), _sample(4, 2) * 10, [-3.0]])
  sweep = summarize_groups(values, ["0.01"] * 5 + ["0.1"] * 4 + ["1"])
  text = table(sweep, title="return by learning rate", label="lr")
  lines = text.split("\n")
  assert lines[0] == "return by learning rate"
  assert lines[1].split()[:3] == ["lr", "members", "IQM"]
  assert "95% CI (IQM)" in lines[1]
  assert [line.split()[0] for line in lines[2:]] == ["0.01", "0.1", "1"]
  assert [line.split()[1] for line in lines[2:]] == ["5", "4", "1"]
  assert lines[-1].split()[-4:-2] == ["-3.0", "nan"]  # One member: no std.
  # Right-aligned numbers: every row ends each column where the header does.
  header = lines[1]
  ends = [m.end() for m in re.finditer(r"\S+(?: \S+)*", header)]
  for line in lines[2:]:
    cells = [m.end() for m in re.finditer(r"\S+(?: \S+)*", line)]
    assert cells[1:] == ends[1:], (line, header)
  assert not table(sweep).startswith("return")


def test_table_of_summarize_dict_and_mixed_kinds():
  text = table({"a": summarize([1.0, 2.0]), "b": summarize([3.0, 4.0, 5.0])})
  assert len(text.split("\n")) == 3
  with pytest.raises(ValueError, match=r"^table: the intervals must be of "
                     r"one statistic"):
    table({"a": summarize([1.0, 2.0]), "b": summarize([1.0], "mean")})


# ---- errors ----


@pytest.mark.parametrize("fn", ["summarize", "summarize_groups"])
def test_bad_values_are_named(fn):
  call = (summarize if fn == "summarize" else
          lambda v, **kw: summarize_groups(v, [0] * len(v), **kw))
  with pytest.raises(ValueError, match=rf"^{fn}: values is empty"):
    call([])
  nan, inf = float("nan"), float("inf")
  with pytest.raises(ValueError, match=re.escape(
      f"{fn}: 2 NaN values (members 1, 4) among 5 members; every member "
      f"needs a finite value.")):
    call([1.0, nan, 2.0, 3.0, nan])
  with pytest.raises(ValueError, match=re.escape(
      f"{fn}: 1 NaN value (member 0) and 1 infinite value (member 2) among "
      f"3 members")):
    call([nan, 1.0, -inf])
  with pytest.raises(ValueError, match=re.escape(
      "members 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ... (2 more)")):
    call([nan] * 12)
  with pytest.raises(ValueError, match=rf"^{fn}: values must be one number "
                     r"per member \(1-D\), got shape \(3, 2\)"):
    call(np.ones((3, 2)))
  with pytest.raises(ValueError, match=rf"^{fn}: values must be numbers"):
    call(["a", "b"])


@pytest.mark.parametrize("fn", ["summarize", "summarize_groups"])
@pytest.mark.parametrize("setting,value,message", [
    ("confidence", 0.0, "confidence must be in range (0, 1), got 0.0."),
    ("confidence", 1.0, "confidence must be in range (0, 1), got 1.0."),
    ("confidence", 95, "confidence must be in range (0, 1), got 95."),
    ("confidence", True, "confidence must be in range (0, 1), got True."),
    ("reps", 0, "reps must be a positive int, got 0."),
    ("reps", 100.0, "reps must be a positive int, got 100.0."),
    ("statistic", "IQM", "statistic must be one of ['iqm', 'mean', "
     "'median'], got 'IQM'."),
    ("seed", -1, "seed must be a non-negative int or None, got -1."),
])
def test_bad_settings_are_named(fn, setting, value, message):
  call = (summarize if fn == "summarize" else
          lambda v, **kw: summarize_groups(v, [0] * len(v), **kw))
  with pytest.raises(ValueError, match=re.escape(f"{fn}: {message}")):
    call([1.0, 2.0], **{setting: value})


def test_groups_of_the_wrong_length_or_kind():
  with pytest.raises(ValueError, match=re.escape(
      "summarize_groups: groups must have one label per member: got 3 "
      "values and 2 labels.")):
    summarize_groups([1.0, 2.0, 3.0], [0.1, 0.2])
  with pytest.raises(ValueError, match=r"^summarize_groups: groups must be "
                     r"a sequence of labels"):
    summarize_groups([1.0, 2.0], "ab")
  with pytest.raises(ValueError, match=r"^summarize_groups: group labels "
                     r"must be hashable .* member 1 has \[2\]"):
    summarize_groups([1.0, 2.0], [1, [2]])


def test_table_refuses_what_is_not_a_dict_of_distributions():
  with pytest.raises(ValueError, match="^table: summaries must be a non-empty"):
    table({})
  with pytest.raises(ValueError, match="^table: summaries must map labels to "
                     "Distributions; 'a' maps to float."):
    table({"a": 1.0})


def test_distribution_is_frozen():
  d = summarize([1.0, 2.0])
  with pytest.raises(AttributeError):
    d.mean = 3.0  # pytype: disable=not-writable
  assert isinstance(d, Distribution)


# ---- rliable, when installed (an extra; SciPy is the reference above) ----


@pytest.mark.parametrize("n", [3, 5, 10, 13, 100])
def test_iqm_equals_rliable_aggregate_iqm(n):
  metrics = pytest.importorskip("rliable.metrics")
  values = _sample(n, seed=n)
  # rliable's scores are (runs x tasks); one task here.
  expected = metrics.aggregate_iqm(values[:, None])
  assert summarize(values).iqm == pytest.approx(expected, rel=1e-12)
