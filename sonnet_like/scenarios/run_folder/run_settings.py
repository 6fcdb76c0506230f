"""What a run was started with, kept in every checkpoint and compared on resume.

`RunSettings` records the scenario's settings (its constructor arguments and
the engine's setting groups), the batches it was fed and each optimizer's
learning rate as the code gave it. The record is saved inside every
checkpoint. When a later run resumes from one, `reconcile` compares the two:

- changed batches (another `batch_size`) are refused before the first
  step: the checkpointed data position counts batches of the old shape;
- a learning rate changed in the code wins, for every optimizer alike.
  Keras optimizers keep their rate in a variable that the checkpoint
  restores, Sonnet's take it from the code: both now use the code's value.
  An unchanged rate keeps the checkpoint's value, so a rate changed during
  training (by a hook) resumes exactly;
- every change is listed in one line.
"""

import dataclasses
import inspect
import json
import numbers
from typing import Any, Callable

import tensorflow as tf

from sonnet_like.scenarios.updates import kinds

NAME = "run_settings"

# Settings a resume may change without it being worth a word.
_NOT_LISTED = ("restart", "progress")

BATCHES_CHANGED_ERROR = (
    "{owner}: the checkpoint in {save_dir} was saved feeding {argument} in "
    "batches of {old} (batch_size={old_size}), but this run feeds batches "
    "of {new} (batch_size={new_size}); the checkpointed data position counts "
    "the old batches. Resume with batch_size={old_size}, or pass "
    "restart=True (or another save_dir) to train from step 0 with the new "
    "batches.")


class ResumeSettingsError(ValueError):
  """A resume changes a setting the checkpoint cannot continue with."""


def _plain(value: Any) -> Any:
  """`value` as JSON: numbers, strings and nests as they are, objects by
  their repr (or their type, when the repr changes from run to run)."""
  if value is None or isinstance(value, (bool, str)):
    return value
  if isinstance(value, numbers.Number):
    return float(value) if isinstance(value, numbers.Real) and not (
        isinstance(value, numbers.Integral)) else int(value)
  if isinstance(value, (list, tuple)):
    return [_plain(v) for v in value]
  if isinstance(value, dict):
    return {str(k): _plain(v) for k, v in value.items()}
  if dataclasses.is_dataclass(value) and not isinstance(value, type):
    return {f.name: _plain(getattr(value, f.name))
            for f in dataclasses.fields(value)}
  text = repr(value)
  if " at 0x" in text or len(text) > 200:
    return type(value).__name__
  return text


def arguments_of(cls: type, args: tuple, kwargs: dict[str, Any]
                 ) -> dict[str, Any]:
  """The arguments of `cls(*args, **kwargs)` by name, defaults included
  (those passed on in `**kwargs` merged in); {} if they do not bind (the
  constructor then says why)."""
  signature = inspect.signature(cls.__init__)
  try:
    bound = signature.bind(None, *args, **kwargs)
  except TypeError:
    return {}
  bound.apply_defaults()
  values = dict(bound.arguments)
  for index, (name, parameter) in enumerate(signature.parameters.items()):
    value = values.pop(name, None)
    if parameter.kind == parameter.VAR_KEYWORD:
      values.update(value or {})
    elif index and parameter.kind != parameter.VAR_POSITIONAL:
      values[name] = value
  return values


def _learning_rate(optimizer: Any) -> tuple[float, Any] | None:
  """The optimizer's rate and its variable (None for a Python number), or
  None when it is a schedule (or there is no rate to read)."""
  rate = getattr(optimizer, "learning_rate", None)
  if isinstance(rate, numbers.Real) and not isinstance(rate, bool):
    return float(rate), None
  if hasattr(rate, "assign") and getattr(rate, "shape", None) == ():
    return float(rate.numpy()), rate
  return None


def _batches(spec: Any) -> Any:
  return _plain(tf.nest.map_structure(
      lambda s: [s.shape.as_list(), s.dtype.name], spec))


def _shown(value: Any) -> str:
  return json.dumps(value) if not isinstance(value, str) else value


class RunSettings(tf.train.experimental.PythonState):
  """The record of one scenario run, saved with its checkpoints.

  Make it after the state is built and before the checkpoint is restored:
  it reads the learning rates the code gave. `restored` holds the
  checkpoint's record after a restore (None if it had none).

  Args:
    scenario: The scenario about to run.
  """

  def __init__(self, scenario: Any):
    self.owner = type(scenario).__name__
    self.save_dir = scenario.checkpointing.save_dir
    settings = {}
    for group in (scenario.loop, scenario.checkpointing, scenario.guard):
      settings.update(_plain(group))
    settings["precision"] = _plain(scenario.precision)
    settings.update(_plain(getattr(scenario, "constructor_arguments", {})))
    feed = scenario.fed_data
    self._argument = None if feed is None else feed.argument
    self._optimizers = {}
    rates = {}
    for name, obj in scenario.trackables().items():
      rate = (_learning_rate(obj) if kinds.is_optimizer(obj)
              else None)
      if rate is not None:
        rates[name], self._optimizers[name] = rate
    self.record = {
        "settings": {k: v for k, v in settings.items()
                     if k not in ("hooks", "termination_watcher")},
        "data": None if feed is None else {
            "batch_size": feed.batch_size,
            "batches": _batches(feed.element_spec)},
        "learning_rates": rates}
    self.restored: dict[str, Any] | None = None

  def serialize(self) -> str:
    return json.dumps(self.record)

  def deserialize(self, string_value) -> None:
    if isinstance(string_value, bytes):
      string_value = string_value.decode("utf-8")
    self.restored = json.loads(string_value)

  def reconcile(self, say: Callable[[str], None]) -> None:
    """After a restore: refuses changed batches, puts back the learning
    rates the code changed, and says in one line what changed.

    Raises:
      ResumeSettingsError: the batches fed changed.
    """
    old = self.restored
    if old is None:  # A checkpoint from before settings were recorded.
      return
    self._check_batches(old.get("data"))
    changes = []
    before = old.get("settings", {})
    now = self.record["settings"]
    for key in [k for k in now if k in before] + [
        k for k in before if k not in now]:
      if key not in _NOT_LISTED and before.get(key) != now.get(key):
        changes.append(f"{key} {_shown(before.get(key))} -> "
                       f"{_shown(now.get(key))}")
    for name, rate in self.record["learning_rates"].items():
      old_rate = old.get("learning_rates", {}).get(name)
      if old_rate is not None and old_rate != rate:
        variable = self._optimizers[name]
        if variable is not None:
          variable.assign(rate)
        changes.append(f"the learning rate of {name!r} {old_rate:g} -> "
                       f"{rate:g} (the code's value is used)")
    if changes:
      say(f"{self.owner}: resuming with settings changed since the "
          f"checkpoint: {'; '.join(changes)}.")

  def _check_batches(self, old: dict[str, Any] | None) -> None:
    new = self.record["data"]
    if old is None or new is None or old["batches"] == new["batches"]:
      return

    def shapes(batches):
      shown = [tuple(shape) for shape, _ in _leaves(batches)]
      return ", ".join(str(s) for s in shown)

    raise ResumeSettingsError(BATCHES_CHANGED_ERROR.format(
        owner=self.owner, save_dir=self.save_dir, argument=self._argument,
        old=shapes(old["batches"]), new=shapes(new["batches"]),
        old_size=old["batch_size"], new_size=new["batch_size"]))


def _leaves(batches: Any) -> list[list]:
  """The `[shape, dtype]` pairs of a recorded nest of batches."""
  if isinstance(batches, list) and len(batches) == 2 and isinstance(
      batches[1], str):
    return [batches]
  values = batches.values() if isinstance(batches, dict) else batches
  return [leaf for value in values for leaf in _leaves(value)]
