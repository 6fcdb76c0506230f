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
    self.seeds = tuple(seeds)
    if not self.seeds or not all(
        isinstance(s, int) and not isinstance(s, bool) for s in self.seeds):
      raise ValueError(f"Population: seeds must be a non-empty list of "
                       f"ints, got {seeds!r}.")
    self.settings = {}
    for name, values in settings.items():
      values = tuple(values)
      if len(values) != len(self.seeds):
        raise ValueError(
            f"Population: setting {name!r} has {len(values)} values for "
            f"{len(self.seeds)} members (one value per member; "
            "Population.grid crosses settings with seeds).")
      self.settings[name] = values

  @classmethod
  def grid(cls, seeds: Iterable[int], **settings: Sequence[Any]
           ) -> "Population":
    """Every combination of the settings' values, each with every seed
    (K combinations x M seeds = K*M members, seeds varying fastest)."""
    seeds = tuple(seeds)
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
