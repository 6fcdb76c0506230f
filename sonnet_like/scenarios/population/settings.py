"""`Population`: who the members of a population are.

Every member has a seed (it decides the member's first weights, its data
order and its noise, as `seed=` decides a solo run's) and may have settings
of its own (a sweep): `learning_rate` sets the optimizers' rate, any other
name an attribute of the scenario read while its step is traced.
"""

import itertools
from typing import Any, Iterable, Sequence


class Population:
  """The members of a population: one seed each, and per-member settings.

      >>> import sonnet_like as snt
      >>> grid = snt.scenarios.Population.grid(seeds=[0, 1],
      ...                                      learning_rate=[0.1, 0.01])
      >>> grid.size, grid.seeds
      (4, (0, 1, 0, 1))
      >>> grid.group(3)
      (('learning_rate', 0.01),)

  Args:
    seeds: One seed per member.
    **settings: A setting's values, one per member (`learning_rate`, or the
      name of a scenario attribute such as PPO's `entropy_coef`).
  """

  def __init__(self, seeds: Iterable[int], **settings: Sequence[Any]):
    self.seeds = _seeds("Population", seeds)
    self.settings = {}
    for name, values in settings.items():
      values = _values("Population", name, values, "one per member")
      if len(values) != len(self.seeds):
        raise ValueError(
            f"Population: setting {name!r} has {len(values)} values for "
            f"{len(self.seeds)} members (one value per member; "
            "Population.grid crosses settings with seeds).")
      self.settings[name] = values
    seen: dict[tuple[Any, ...], int] = {}
    for member in range(self.size):
      key = (self.seeds[member], *(repr(v) for _, v in self.group(member)))
      if key in seen:
        described = ", ".join([f"seed {self.seeds[member]}"] + [
            f"{name}={value!r}" for name, value in self.group(member)])
        raise ValueError(
            f"Population: members {seen[key]} and {member} are the same run "
            f"({described}): each member is the solo run of its seed and "
            "settings, so they would train identically; give them "
            "different seeds or settings.")
      seen[key] = member

  @classmethod
  def grid(cls, seeds: Iterable[int], **settings: Sequence[Any]
           ) -> "Population":
    """Every combination of the settings' values, each with every seed
    (K combinations x M seeds = K*M members, seeds varying fastest)."""
    seeds = _seeds("Population.grid", seeds)
    settings = {name: _values("Population.grid", name, values,
                              "to cross with the seeds")
                for name, values in settings.items()}
    names = list(settings)
    members = [(seed, combo)
               for combo in itertools.product(*(settings[n] for n in names))
               for seed in seeds]
    return cls([seed for seed, _ in members],
               **{name: [combo[i] for _, combo in members]
                  for i, name in enumerate(names)})

  @property
  def size(self) -> int:
    return len(self.seeds)

  def group(self, member: int) -> tuple[tuple[str, Any], ...]:
    """Member `member`'s settings as `((name, value), ...)`: members of
    one group differ only by seed."""
    return tuple((name, values[member])
                 for name, values in self.settings.items())

  def __repr__(self) -> str:
    settings = "".join(f", {name}={list(values)!r}"
                       for name, values in self.settings.items())
    return f"Population(seeds={list(self.seeds)!r}{settings})"


def _seeds(owner: str, seeds: Any) -> tuple[int, ...]:
  """`seeds` as a tuple of ints, or the error that says what was given."""
  hint = (f"; for seeds 0 to {seeds - 1} write range({seeds})"
          if isinstance(seeds, int) and not isinstance(seeds, bool) and
          seeds > 0 else "")
  if isinstance(seeds, (str, bytes)) or not isinstance(seeds, Iterable):
    raise ValueError(f"{owner}: seeds must be a list of ints, one per "
                     f"member, got {seeds!r}{hint}.")
  seeds = tuple(seeds)
  if not seeds or not all(isinstance(s, int) and not isinstance(s, bool)
                          for s in seeds):
    raise ValueError(f"{owner}: seeds must be a non-empty list of ints, "
                     f"got {list(seeds)!r}.")
  return seeds


def _values(owner: str, name: str, values: Any, how: str) -> tuple[Any, ...]:
  """A setting's values as a tuple, or the error for a single value."""
  if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
    raise ValueError(f"{owner}: setting {name!r} must be a list of values "
                     f"({how}), got {values!r}; write [{values!r}] for one "
                     "value.")
  return tuple(values)


def parse(owner: str, population: Any, seed: int) -> Population | None:
  """`population=` as given: None, a member count (seeds `seed`,
  `seed + 1`, ...), a list of seeds or a `Population`."""
  if population is None or isinstance(population, Population):
    return population
  if isinstance(population, int) and not isinstance(population, bool):
    if population < 1:
      raise ValueError(f"{owner}: population must be at least 1 member, "
                       f"got {population}.")
    return Population(range(seed, seed + population))
  if isinstance(population, (list, tuple, range)):
    return Population(population)
  raise TypeError(f"{owner}: population must be a member count, a list of "
                  f"seeds or a snt.scenarios.Population, got {population!r}.")
