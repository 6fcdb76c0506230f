"""What has no single answer in a population, and the one sentence it gets.

After a population's run the scenario's attributes that held what it
trains (its models, optimizers, environments, generator) hold a
`NoSingleMember` each: using one (calling a model, acting, exporting,
evaluating, predicting) raises `NO_SINGLE_ERROR`, which points to
`member(i)`, `best(metric)` and `as_member(i)`. Inside
`scenario.as_member(i)` (`Members.member_in`) the attributes hold member
i's objects, so the scenario answers as member i; a new call of the
scenario puts its own arguments back.
"""

import contextlib
from typing import Any, Iterator

NO_SINGLE_ERROR = (
    "{owner}: {what} has no single answer in a population of {size} "
    "members. Use scenario.member(i) (member i's models) or "
    "scenario.best(metric) (the best member's), or answer as member i "
    "inside `with scenario.as_member(i):` (act, evaluate, export, "
    "evaluate_policy); export_population(directory) writes every member.")


class PopulationError(ValueError):
  """A single answer was asked of a population (`NO_SINGLE_ERROR`)."""

  # Raised while a function is traced, AutoGraph re-raises an error of this
  # type (its message after "in user code:") only for this constructor.
  __init__ = Exception.__init__


class _NoAttribute(PopulationError, AttributeError):
  """An attribute of a `NoSingleMember`: `hasattr` says False."""


def refuse(owner: str, what: str, size: int,
           kind: type[PopulationError] = PopulationError) -> PopulationError:
  return kind(NO_SINGLE_ERROR.format(owner=owner, what=what, size=size))


class NoSingleMember:
  """What a population's scenario attribute holds after the run: using it
  raises `NO_SINGLE_ERROR` naming the attribute.

  Args:
    owner: The scenario's name.
    name: The attribute's name.
    size: The population's size.
    original: What the attribute held before the run (the user's object;
      None for one that build() makes), what a new run starts from.
  """

  def __init__(self, owner: str, name: str, size: int, original: Any):
    object.__setattr__(self, "_about", (owner, name, size))
    object.__setattr__(self, "original", original)

  def _error(self, kind: type[PopulationError] = PopulationError
             ) -> PopulationError:
    owner, name, size = object.__getattribute__(self, "_about")
    return refuse(owner, f"scenario.{name}", size, kind)

  def __getattr__(self, attribute: str) -> Any:
    if attribute.startswith("__"):  # copy, pickle and friends ask politely.
      raise AttributeError(attribute)
    raise self._error(_NoAttribute)

  def __setattr__(self, attribute: str, value: Any) -> None:
    raise self._error()

  def __call__(self, *args: Any, **kwargs: Any) -> Any:
    raise self._error()

  def __repr__(self) -> str:
    owner, name, size = object.__getattribute__(self, "_about")
    return (f"<{owner}.{name}: one per member of {size}; "
            "scenario.member(i)>")


def refuse_in(scenario: Any, members: Any) -> None:
  """After a run: each attribute holding one of the objects the members
  were copied from (or a template) holds a `NoSingleMember`, which
  `member_in` swaps for member i's objects."""
  owner = type(scenario).__name__
  parts = members._parts  # pylint: disable=protected-access
  templates = {id(t): key for key, t in parts.templates.items()}
  for name, value in list(vars(scenario).items()):
    key = id(value) if id(value) in parts.copies[0] else templates.get(
        id(value))
    if key is None:
      continue
    placeholder = NoSingleMember(owner, name, members.population.size,
                                 parts.before_build.get(name, value))
    parts.after_run[key] = placeholder
    setattr(scenario, name, placeholder)


def release(scenario: Any) -> None:
  """Before a new run: the attributes a `NoSingleMember` holds get their
  original objects back (a new call of the scenario sets its own)."""
  for name, value in list(vars(scenario).items()):
    if isinstance(value, NoSingleMember):
      setattr(scenario, name, object.__getattribute__(value, "original"))


@contextlib.contextmanager
def originals(scenario: Any) -> Iterator[None]:
  """Inside the block the attributes hold their original objects (to find
  which objects the scenario trains: `models()`, `trackables()`); their
  `NoSingleMember`s again after it."""
  held = {name: value for name, value in vars(scenario).items()
          if isinstance(value, NoSingleMember)}
  release(scenario)
  try:
    yield
  finally:
    for name, value in held.items():
      setattr(scenario, name, value)
