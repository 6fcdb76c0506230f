"""One metric over the members of a population, reported as a distribution.

A claim about a training recipe rests on many seeds, not one. `summarize`
turns one value per member (a final return, an accuracy) into a
`Distribution`: the mean, the median, the interquartile mean (IQM) and a
bootstrap confidence interval of the chosen statistic, with rliable's
definitions (Agarwal et al., "Deep Reinforcement Learning at the Edge of
the Statistical Precipice", 2021):

- IQM: the mean of the values left after dropping `n // 4` of the lowest
  and `n // 4` of the highest (`scipy.stats.trim_mean(values, 0.25)`).
  With 10 members, 2 are dropped at each end and the middle 6 averaged;
  with fewer than 4 members nothing is dropped and the IQM is the mean.
- The interval is the percentile bootstrap: the members are resampled with
  replacement `reps` times, the statistic is computed on each resample,
  and the interval runs between the `(1 - confidence) / 2` and
  `(1 + confidence) / 2` quantiles of those statistics. The resamples are
  drawn from `numpy.random.default_rng(seed)`, so the same values and seed
  give the same interval.

`summarize_groups` does the same per setting of a sweep, and `table` prints
the result. Everything here is NumPy: no TensorFlow is needed.

    >>> returns = [93.0, 95.5, 88.0, 97.0, 91.0, 99.5, 12.0, 94.0, 96.0, 90.0]
    >>> print(summarize(returns))
    IQM 93.2 [77.8, 96.2] (mean 85.6, median 93.5, 10 members)
"""

import dataclasses
import math
import numbers
from typing import Any, Hashable, Mapping, Sequence

import numpy as np

STATISTICS = ("iqm", "mean", "median")
_NAMES = {"iqm": "IQM", "mean": "mean", "median": "median"}
_CHUNK = 4_000_000  # Resampled values held at once (32 MB of float64).

NON_FINITE_ERROR = (
    "{owner}: {what} among {count} members; every member needs a finite "
    "value. A member whose run diverged has no score: drop it and report how "
    "many were dropped, or give it the score the metric assigns to failure.")


@dataclasses.dataclass(frozen=True)
class Distribution:
  """One metric over the members of a population.

  Attributes:
    count: How many members.
    mean: Their mean.
    median: Their median.
    iqm: Their interquartile mean: the mean after dropping `count // 4`
      values at each end (rliable's IQM, `scipy.stats.trim_mean(x, 0.25)`).
    std: The sample standard deviation (`ddof=1`); NaN for one member.
    low: The lower end of the bootstrap confidence interval of `statistic`.
    high: The upper end of that interval.
    min: The smallest value.
    max: The largest value.
    statistic: Which statistic the interval is of: "iqm", "mean" or
      "median".
    confidence: The interval's confidence level, e.g. 0.95.

  `str()` gives one line, `value` the chosen statistic:

      >>> d = summarize([1.0, 2.0, 3.0, 4.0, 100.0])
      >>> d.iqm, d.mean, d.median, d.count
      (3.0, 22.0, 3.0, 5)
      >>> d.value == d.iqm
      True
      >>> print(d)
      IQM 3.0 [1.7, 68.0] (mean 22.0, median 3.0, 5 members)
  """
  count: int
  mean: float
  median: float
  iqm: float
  std: float
  low: float
  high: float
  min: float
  max: float
  statistic: str = "iqm"
  confidence: float = 0.95

  @property
  def value(self) -> float:
    """The statistic the interval is of (`iqm`, `mean` or `median`)."""
    return getattr(self, self.statistic)

  def __str__(self) -> str:
    decimals = _decimals([self.value, self.low, self.high, self.mean,
                          self.median])
    f = lambda x: _format(x, decimals)
    others = ", ".join(f"{name} {f(getattr(self, name))}"
                       for name in ("mean", "median") if name != self.statistic)
    level = ("" if math.isclose(self.confidence, 0.95) else
             f"{_percent(self.confidence)} CI ")
    members = "member" if self.count == 1 else "members"
    return (f"{_NAMES[self.statistic]} {f(self.value)} {level}[{f(self.low)}, "
            f"{f(self.high)}] ({others}, {self.count} {members})")


def summarize(values: Any, statistic: str = "iqm", confidence: float = 0.95,
              reps: int = 2000, seed: int | None = 0) -> Distribution:
  """Summarizes one value per member as a `Distribution`.

  Args:
    values: One number per member: a list, a 1-D NumPy array or tensor.
    statistic: The statistic the confidence interval is of: "iqm" (rliable's
      choice: robust to a few failed seeds, less noisy than the median),
      "mean" or "median".
    confidence: The interval's confidence level, in (0, 1).
    reps: How many bootstrap resamples.
    seed: Seeds `numpy.random.default_rng` for the resamples, so the same
      values give the same interval. None draws a fresh interval each call.

  Returns:
    The `Distribution` of the values.

  Raises:
    ValueError: for no values, a NaN or infinite value (naming the
      members), values that are not one number per member, or a bad
      `statistic`, `confidence`, `reps` or `seed`.

      >>> d = summarize([0.5, 0.7, 0.9, 0.6], statistic="mean")
      >>> d.value, d.low <= d.value <= d.high
      (0.675, True)
      >>> summarize([1.0, float("nan"), 3.0, float("nan")])
      Traceback (most recent call last):
      ...
      ValueError: summarize: 2 NaN values (members 1, 3) among 4 members; ...
  """
  _check_settings("summarize", statistic, confidence, reps, seed)
  return _summarize(_members("summarize", values), statistic, confidence,
                    reps, seed)


def summarize_groups(values: Any, groups: Sequence[Hashable],
                     statistic: str = "iqm", confidence: float = 0.95,
                     reps: int = 2000, seed: int | None = 0,
                     ) -> dict[Hashable, Distribution]:
  """Summarizes a sweep: one `Distribution` per setting.

  Members with the same label in `groups` form one group (a learning rate,
  or a tuple of settings). Each group is summarized as `summarize` would
  summarize its values alone, with the same `seed`, so a group's interval
  does not depend on the other groups.

  Args:
    values: One number per member.
    groups: One hashable label per member, as long as `values`.
    statistic: As in `summarize`.
    confidence: As in `summarize`.
    reps: As in `summarize`.
    seed: As in `summarize`.

  Returns:
    A dict from label to `Distribution`, in the order in which the labels
    first appear in `groups`.

      >>> lrs = [1e-3, 1e-3, 1e-3, 3e-4, 3e-4, 3e-4]
      >>> sweep = summarize_groups([0.9, 0.8, 0.85, 0.6, 0.7, 0.65], lrs)
      >>> {lr: round(d.iqm, 3) for lr, d in sweep.items()}
      {0.001: 0.85, 0.0003: 0.65}
  """
  owner = "summarize_groups"
  _check_settings(owner, statistic, confidence, reps, seed)
  members = _members(owner, values)
  if isinstance(groups, (str, bytes)) or not isinstance(
      groups, (Sequence, np.ndarray)):
    raise ValueError(f"{owner}: groups must be a sequence of labels, one per "
                     f"member, got {type(groups).__name__}.")
  if len(groups) != len(members):
    raise ValueError(f"{owner}: groups must have one label per member: got "
                     f"{len(members)} values and {len(groups)} labels.")
  indices: dict[Hashable, list[int]] = {}
  for i, label in enumerate(groups):
    try:
      indices.setdefault(label, []).append(i)
    except TypeError:
      raise ValueError(f"{owner}: group labels must be hashable (a number, a "
                       f"string, a tuple); member {i} has {label!r}.") from None
  return {label: _summarize(members[where], statistic, confidence, reps, seed)
          for label, where in indices.items()}


def table(summaries: Mapping[Hashable, Distribution],
          title: str | None = None, label: str = "group") -> str:
  """An aligned plain-text table of `Distribution`s, one row per group.

  Args:
    summaries: Label to `Distribution`, e.g. from `summarize_groups`. The
      rows keep its order. All must be intervals of one statistic at one
      confidence level.
    title: A line above the table, if given.
    label: The heading of the label column.

  Returns:
    The table, lines joined by newlines, without a final newline.

      >>> sweep = summarize_groups([0.9, 0.8, 0.85, 0.6, 0.7, 0.65],
      ...                          ["1e-3"] * 3 + ["3e-4"] * 3)
      >>> print(table(sweep, title="accuracy by learning rate", label="lr"))
      accuracy by learning rate
      lr    members    IQM    95% CI (IQM)   mean  median    std    min    max
      1e-3        3  0.850  [0.800, 0.900]  0.850   0.850  0.050  0.800  0.900
      3e-4        3  0.650  [0.600, 0.700]  0.650   0.650  0.050  0.600  0.700
  """
  owner = "table"
  if not isinstance(summaries, Mapping) or not summaries:
    raise ValueError(f"{owner}: summaries must be a non-empty dict of label "
                     f"to Distribution, got {summaries!r}.")
  for key, d in summaries.items():
    if not isinstance(d, Distribution):
      raise ValueError(f"{owner}: summaries must map labels to "
                       f"Distributions; {key!r} maps to "
                       f"{type(d).__name__}.")
  kinds = {(d.statistic, d.confidence) for d in summaries.values()}
  if len(kinds) > 1:
    raise ValueError(f"{owner}: the intervals must be of one statistic at one "
                     f"confidence level to share a column, got "
                     f"{sorted(kinds)}.")
  statistic, confidence = kinds.pop()
  name = _NAMES[statistic]
  numbers_shown = [getattr(d, field) for d in summaries.values()
                   for field in ("iqm", "low", "high", "mean", "median", "std",
                                 "min", "max")]
  decimals = _decimals(numbers_shown)
  f = lambda x: _format(x, decimals)
  header = [label, "members", "IQM", f"{_percent(confidence)} CI ({name})",
            "mean", "median", "std", "min", "max"]
  rows = [[str(key), str(d.count), f(d.iqm), f"[{f(d.low)}, {f(d.high)}]",
           f(d.mean), f(d.median), f(d.std), f(d.min), f(d.max)]
          for key, d in summaries.items()]
  widths = [max(len(row[i]) for row in [header] + rows)
            for i in range(len(header))]
  lines = [title] if title is not None else []
  for row in [header] + rows:
    cells = [row[0].ljust(widths[0])] + [
        cell.rjust(width) for cell, width in zip(row[1:], widths[1:])]
    lines.append("  ".join(cells).rstrip())
  return "\n".join(lines)


def iqm(values: np.ndarray, axis: int = -1) -> np.ndarray:
  """The interquartile mean along `axis`: rliable's IQM.

  Drops `n // 4` values at each end (`int(0.25 * n)`, as
  `scipy.stats.trim_mean(values, 0.25)` does, so with n = 5 one value goes
  at each end and with n = 3 none) and averages the rest.

      >>> float(iqm(np.array([5.0, 1.0, 3.0, 2.0, 4.0, 100.0, -50.0])))
      3.0
  """
  values = np.sort(np.asarray(values, dtype=np.float64), axis=axis)
  n = values.shape[axis]
  cut = n // 4  # Equals int(0.25 * n): 0.25 * n is exact in floating point.
  kept = np.take(values, np.arange(cut, n - cut), axis=axis)
  return np.mean(kept, axis=axis)


_STATISTIC_FNS = {
    "iqm": iqm,
    "mean": lambda x, axis=-1: np.mean(x, axis=axis),
    "median": lambda x, axis=-1: np.median(x, axis=axis),
}


def bootstrap_interval(values: np.ndarray, statistic: str = "iqm",
                       confidence: float = 0.95, reps: int = 2000,
                       seed: int | None = 0) -> tuple[float, float]:
  """The percentile bootstrap interval of `statistic` over 1-D `values`.

  Resamples `len(values)` members with replacement `reps` times (indices
  from `numpy.random.default_rng(seed).integers`, one row of indices per
  resample, in chunks that keep memory bounded) and takes the
  `(1 - confidence) / 2` and `(1 + confidence) / 2` quantiles (NumPy's
  linear interpolation) of the resampled statistics.
  """
  values = np.asarray(values, dtype=np.float64)
  n = len(values)
  fn = _STATISTIC_FNS[statistic]
  rng = np.random.default_rng(seed)
  rows = max(1, _CHUNK // n)
  stats = np.empty(reps)
  for start in range(0, reps, rows):
    stop = min(reps, start + rows)
    stats[start:stop] = fn(values[rng.integers(0, n, (stop - start, n))],
                           axis=1)
  alpha = (1.0 - confidence) / 2.0
  low, high = np.percentile(stats, [100.0 * alpha, 100.0 * (1.0 - alpha)])
  # The resampled statistics' quantiles can differ from the plain values'
  # in the last bit (a sum in another order); keep the interval ordered.
  return float(low), float(max(low, high))


def _summarize(members: np.ndarray, statistic: str, confidence: float,
               reps: int, seed: int | None) -> Distribution:
  low, high = bootstrap_interval(members, statistic, confidence, reps, seed)
  count = len(members)
  return Distribution(
      count=count,
      mean=float(np.mean(members)),
      median=float(np.median(members)),
      iqm=float(iqm(members)),
      std=float(np.std(members, ddof=1)) if count > 1 else math.nan,
      low=low,
      high=high,
      min=float(np.min(members)),
      max=float(np.max(members)),
      statistic=statistic,
      confidence=float(confidence))


def _members(owner: str, values: Any) -> np.ndarray:
  """`values` as a 1-D float64 array of finite numbers, or an error."""
  try:
    members = np.asarray(values, dtype=np.float64)
  except (TypeError, ValueError):
    raise ValueError(f"{owner}: values must be numbers, one per member, got "
                     f"{_short(values)}.") from None
  if members.ndim != 1:
    raise ValueError(
        f"{owner}: values must be one number per member (1-D), got shape "
        f"{members.shape}. Reduce each member to one number first (e.g. the "
        f"mean of its evaluation episodes).")
  if not len(members):
    raise ValueError(f"{owner}: values is empty; a distribution needs at "
                     f"least one member.")
  bad = ~np.isfinite(members)
  if bad.any():
    parts = []
    for what, mask in (("NaN", np.isnan(members)),
                       ("infinite", np.isinf(members))):
      where = np.flatnonzero(mask)
      if len(where):
        shown = ", ".join(str(i) for i in where[:10])
        more = f", ... ({len(where) - 10} more)" if len(where) > 10 else ""
        plural = "s" if len(where) > 1 else ""
        parts.append(f"{len(where)} {what} value{plural} "
                     f"(member{plural} {shown}{more})")
    raise ValueError(NON_FINITE_ERROR.format(
        owner=owner, what=" and ".join(parts), count=len(members)))
  return members


def _check_settings(owner: str, statistic: Any, confidence: Any, reps: Any,
                    seed: Any) -> None:
  if statistic not in STATISTICS:
    raise ValueError(f"{owner}: statistic must be one of {list(STATISTICS)}, "
                     f"got {statistic!r}.")
  if (isinstance(confidence, bool) or not isinstance(confidence, numbers.Real)
      or not 0 < confidence < 1):
    raise ValueError(f"{owner}: confidence must be in range (0, 1), got "
                     f"{confidence!r}.")
  if (isinstance(reps, bool) or not isinstance(reps, numbers.Integral) or
      reps < 1):
    raise ValueError(f"{owner}: reps must be a positive int, got {reps!r}.")
  if seed is not None and (isinstance(seed, bool) or
                           not isinstance(seed, numbers.Integral) or seed < 0):
    raise ValueError(f"{owner}: seed must be a non-negative int or None, got "
                     f"{seed!r}.")


def _decimals(values: Sequence[float]) -> int:
  """Decimals that show three significant digits of the largest value,
  and at least one: 93.2, 500.0, 0.675, 0.0123."""
  finite = [abs(v) for v in values if math.isfinite(v) and v != 0]
  if not finite:
    return 1
  return max(1, 2 - math.floor(math.log10(max(finite))))


def _format(x: float, decimals: int) -> str:
  text = f"{x:.{decimals}f}"
  return "0." + "0" * decimals if text == "-0." + "0" * decimals else text


def _percent(confidence: float) -> str:
  return f"{100 * confidence:.10g}%"


def _short(value: Any) -> str:
  text = repr(value)
  return text if len(text) <= 80 else text[:77] + "..."
