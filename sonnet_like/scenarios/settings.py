"""A scenario's settings in four small groups, each checked once.

`Scenario(num_steps, **settings)` takes them all as keywords and keeps them
in `loop` (`LoopSettings`: how far, how often, where it runs),
`checkpointing` (`CheckpointSettings`: the save_dir, what is kept, the end
of run export), `guard` (`GuardSettings`: the NaN guard, clipping and
unused variables) and `updates` (`UpdateSettings`: gradient accumulation,
the weights' EMA, the learning-rate schedule). Each setting stays readable
(and writable) as an attribute of the scenario (`scenario.num_steps`,
`scenario.save_dir`) through `From`, which reads it from its group: one
holder per value.

    >>> LoopSettings.checked("PPO", num_steps=0)
    Traceback (most recent call last):
    ...
    ValueError: PPO: num_steps must be a positive int, got 0.
"""

import dataclasses
import inspect
import re
from typing import Any, Callable

import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import files
from sonnet_like.scenarios import best as best_lib
from sonnet_like.scenarios import hooks as hooks_lib
from sonnet_like.scenarios.reporting import profiling
from sonnet_like.scenarios import schedules as schedules_lib


@dataclasses.dataclass
class LoopSettings:
  """How long the loop runs, how often it stops for hooks, and where."""
  num_steps: int
  steps_per_call: int = 1
  eval_every: int | None = None
  log_every: int = 100
  jit_compile: bool = False
  strategy: tf.distribute.Strategy | None = None
  seed: int = 0
  hooks: tuple[hooks_lib.Hook, ...] = ()
  progress: bool | None = None
  tensorboard: bool = True
  catch_signals: bool = True
  termination_watcher: Callable[[], bool] | None = None
  profile_steps: tuple[int, int] | None = None
  dry_run: bool = False

  @classmethod
  def checked(cls, owner: str, save_dir: str | None = None,
              **values: Any) -> "LoopSettings":
    """The settings, or the first error naming `owner` and the argument
    (`save_dir`: the checkpoint setting that `profile_steps` needs)."""
    for name, optional in (("num_steps", False), ("steps_per_call", False),
                           ("eval_every", True), ("log_every", False)):
      if name in values:
        arguments.check_positive_int(owner, name, values[name], optional)
    strategy = values.get("strategy")
    if strategy is not None and not isinstance(strategy,
                                               tf.distribute.Strategy):
      raise TypeError(f"{owner}: strategy must be a tf.distribute.Strategy or "
                      f"None, got {strategy!r}.")
    watcher = values.get("termination_watcher")
    if watcher is not None and not callable(watcher):
      raise TypeError(f"{owner}: termination_watcher must be a callable "
                      f"returning a bool, or None, got {watcher!r}.")
    values["profile_steps"] = profiling.checked_window(
        owner, values.get("profile_steps"), values.get("num_steps"), save_dir)
    if not isinstance(values.get("dry_run", False), bool):
      raise TypeError(f"{owner}: dry_run must be True or False, got "
                      f"{values['dry_run']!r}.")
    values["hooks"] = tuple(values.get("hooks", ()))
    for hook in values["hooks"]:
      if not isinstance(hook, hooks_lib.Hook):
        raise TypeError(f"{owner}: hooks must be Hook instances, got "
                        f"{hook!r}.")
    return cls(**values)


@dataclasses.dataclass
class CheckpointSettings:
  """Where the run is saved, how often, what is kept, and the export."""
  save_dir: str | None = None
  save_every: int | None = None
  max_to_keep: int = 3
  restart: bool = False
  export_dir: str | None = None
  async_save: bool = False
  keep_best: str | None = None
  best_mode: str | None = None

  @classmethod
  def checked(cls, owner: str, **values: Any) -> "CheckpointSettings":
    """The settings, or the first error naming `owner` and the argument."""
    arguments.check_positive_int(owner, "save_every",
                                 values.get("save_every"), optional=True)
    arguments.check_positive_int(owner, "max_to_keep",
                                 values.get("max_to_keep", 3))
    no_dir = values.get("save_dir") is None
    if values.get("save_every") is not None and no_dir:
      raise ValueError(f"{owner}: save_every needs a save_dir, got "
                       "save_dir=None.")
    if values.get("restart") and no_dir:
      raise ValueError(f"{owner}: restart=True needs a save_dir, got "
                       "save_dir=None.")
    if values.get("keep_best") is None and values.get("best_mode") is not None:
      raise ValueError(f"{owner}: best_mode is the mode of keep_best, which "
                       f"is not set; got best_mode={values['best_mode']!r}.")
    if values.get("keep_best") is not None:
      values["best_mode"] = best_lib.Best(
          owner, "keep_best", values["keep_best"], values.get("best_mode"),
          mode_argument="best_mode").mode
      if no_dir:
        raise ValueError(f"{owner}: keep_best needs a save_dir (the best "
                         "checkpoint is kept in save_dir/best), got "
                         "save_dir=None.")
    for name in ("save_dir", "export_dir"):  # Any file system; file:// too.
      if values.get(name) is not None:
        values[name] = files.normalized(values[name])
    return cls(**values)


NONFINITE_POLICIES = ("raise", "skip")

NONFINITE_CHECKS = ("auto", "step", "call")

# "auto" checks once per call from this many updates per call on: the copy
# of the state a call keeps costs about as much as checking a few updates.
CALL_CHECK_MIN_UPDATES = 8

UNUSED_POLICIES = ("warn", "raise", "ignore")


@dataclasses.dataclass
class GuardSettings:
  """What the NaN guard does, how it checks, clipping, unused variables.

  `nonfinite_check`, how the guard checks (see `on_nonfinite`): "step":
  every update is checked before it is applied (exact step; one more read
  of every gradient and a condition before each update). "call": each
  step's loss is checked as it comes, and every floating variable of the
  state once at the end of each compiled call; a call in which anything
  went non-finite is undone (the state returns to where the call began;
  the data iterator stays where it is) and the run stops. Faster where
  compute dominates, but it keeps a copy of the state during a call,
  cannot skip ("raise" only), and a gradient that goes non-finite under a
  finite loss is found at the next step's loss or at the end of the call.
  "auto": "call" when a call makes at least 8 updates (`steps_per_call`
  times `updates_per_step`) and `on_nonfinite="raise"` without loss
  scaling, else "step"; and "step" when the state's replay buffers (its
  storage by rows, which a call's check copies whole) hold more bytes than
  the call's updates would read checking each (the trainable weights once
  an update).
  """
  on_nonfinite: str = "raise"
  nonfinite_check: str = "auto"
  clip_norm: float | None = None
  unused_variables: str = "warn"

  @classmethod
  def checked(cls, owner: str, precision: Any,
              **values: Any) -> "GuardSettings":
    """The settings, or the first error naming `owner` and the argument
    (`precision`: the scenario's `compiled.precision.Precision`)."""
    settings = cls(**values)
    for name, allowed in (("unused_variables", UNUSED_POLICIES),
                          ("on_nonfinite", NONFINITE_POLICIES),
                          ("nonfinite_check", NONFINITE_CHECKS)):
      value = getattr(settings, name)
      if value not in allowed:
        raise ValueError(f"{owner}: {name} must be one of {list(allowed)}, "
                         f"got {value!r}.")
    if settings.nonfinite_check == "call" and settings.on_nonfinite == "skip":
      raise ValueError(f"{owner}: nonfinite_check='call' undoes a whole "
                       "compiled call and cannot drop single updates; use "
                       "nonfinite_check='step' (or 'auto') with "
                       "on_nonfinite='skip'.")
    if settings.nonfinite_check == "call" and precision.scales_loss:
      raise ValueError(f"{owner}: nonfinite_check='call' cannot be used with "
                       f"precision={precision.policy!r}: the loss scale "
                       "checks every update for overflow; use "
                       "nonfinite_check='step' (or 'auto').")
    clip_norm = settings.clip_norm
    if clip_norm is not None and not clip_norm > 0:
      raise ValueError(f"{owner}: clip_norm must be positive or None, got "
                       f"{clip_norm!r}.")
    return settings

  def checks_per_call(self, updates_per_call: int, scales_loss: bool) -> bool:
    """Whether the guard checks once per compiled call ("auto" resolved:
    from `CALL_CHECK_MIN_UPDATES` updates per call, raising, unscaled)."""
    if self.nonfinite_check != "auto":
      return self.nonfinite_check == "call"
    return (self.on_nonfinite == "raise" and not scales_loss and
            updates_per_call >= CALL_CHECK_MIN_UPDATES)


def _check_decay(owner: str, name: str, value: Any) -> float:
  if (isinstance(value, bool) or not isinstance(value, (int, float)) or
      not 0.0 <= value < 1.0):
    raise ValueError(f"{owner}: {name} must be a float in [0, 1), got "
                     f"{value!r}.")
  return float(value)


@dataclasses.dataclass
class UpdateSettings:
  """How gradients become updates: accumulation, EMA, learning-rate schedule.

  `accumulate_steps`: the gradients of this many consecutive steps
  (micro-batches) are averaged, then applied as one update; a step is one
  micro-batch. `ema`: a decay in [0, 1) for every model of `models()`, or
  a dict of model name -> decay, of the weights' moving averages, which
  evaluation and export use. `learning_rate_schedule`: a
  `schedules.Schedule` of the step giving the factor of every optimizer's
  learning rate.
  """
  accumulate_steps: int = 1
  ema: float | dict[str, float] | None = None
  learning_rate_schedule: schedules_lib.Schedule | None = None

  @classmethod
  def checked(cls, owner: str, **values: Any) -> "UpdateSettings":
    """The settings, or the first error naming `owner` and the argument."""
    arguments.check_positive_int(owner, "accumulate_steps",
                                 values.get("accumulate_steps", 1))
    ema = values.get("ema")
    if isinstance(ema, dict):
      for name, decay in ema.items():
        if not isinstance(name, str):
          raise TypeError(f"{owner}: ema's keys must be model names (str), "
                          f"got {name!r}.")
        _check_decay(owner, f"ema[{name!r}]", decay)
      values["ema"] = dict(ema)
    elif ema is not None:
      values["ema"] = _check_decay(owner, "ema", ema)
    schedule = values.get("learning_rate_schedule")
    if schedule is not None and not isinstance(schedule,
                                               schedules_lib.Schedule):
      raise TypeError(
          f"{owner}: learning_rate_schedule must be a "
          f"snt.scenarios.schedules.Schedule (e.g. schedules.warmup_cosine("
          f"warmup_steps=100, decay_steps=900)) or None, got {schedule!r}.")
    return cls(**values)


class From:
  """A scenario attribute that reads (and writes) a setting of one group:
  `num_steps = From("loop")` is `self.loop.num_steps`.

  Args:
    group: The settings group's attribute ("loop", "checkpointing", ...).
    doc: What the setting does: what `help()` shows for the attribute.
  """

  def __init__(self, group: str, doc: str = ""):
    self.group, self.name = group, ""
    self.__doc__ = doc

  def __set_name__(self, owner: type, name: str) -> None:
    self.name = name

  def __get__(self, instance: Any, owner: type | None = None) -> Any:
    if instance is None:
      return self
    return getattr(getattr(instance, self.group), self.name)

  def __set__(self, instance: Any, value: Any) -> None:
    setattr(getattr(instance, self.group), self.name, value)


def argument_docs(docstring: str | None) -> dict[str, str]:
  """The entries of a Google-style docstring's "Args:" section, by name,
  each joined into one line."""
  docs: dict[str, str] = {}
  lines = inspect.cleandoc(docstring or "").splitlines()
  if "Args:" not in lines:
    return docs
  name, indent = None, None
  for line in lines[lines.index("Args:") + 1:]:
    if not line.strip():
      continue
    width = len(line) - len(line.lstrip())
    if width == 0:
      break  # The next section.
    entry = re.match(r"(\**\w+)( \([^)]*\))?: ?(.*)", line.strip())
    if indent is None or width == indent and entry:
      indent, name = width, entry.group(1) if entry else None
      if name is not None:
        docs[name] = entry.group(3)
    elif name is not None:
      docs[name] += " " + line.strip()
  return docs


GROUPS = {"loop": LoopSettings, "checkpointing": CheckpointSettings,
          "guard": GuardSettings, "updates": UpdateSettings}


def reads_through(cls: type) -> type:
  """Gives `cls` a `From` attribute for every setting of every group that
  `cls` does not define itself (`Scenario.strategy` does), documented by
  the entry of that name in the "Args:" of `cls`'s docstring."""
  docs = argument_docs(cls.__doc__)
  for group, settings in GROUPS.items():
    for field in dataclasses.fields(settings):
      if not hasattr(cls, field.name):
        # A first line without a colon: Sphinx reads "x: y" as a type.
        doc = docs.get(field.name, "")
        attribute = From(group, f"A scenario setting, kept in "
                         f"`self.{group}.{field.name}` (settable).\n\n"
                         f"{doc}".strip())
        attribute.__set_name__(cls, field.name)
        setattr(cls, field.name, attribute)
  return cls
