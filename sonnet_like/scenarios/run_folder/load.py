"""`load_weights`: a model's weights from what a run kept in its folder.

A run's folder holds the newest checkpoints (`save_dir/ckpt-<step>`) and,
with `keep_best`, the best evaluation's (`save_dir/best/ckpt-<step>`). Each
holds every model under the name the scenario gives it (`Supervised`:
"model"; `GAN`: "generator" and "discriminator"; the RL scenarios: "actor",
"critic", ...) and, with `ema`, the weights' averages ("<name>_ema"). This
loads one model's raw or averaged weights from one of them, after checking
that the checkpoint's variables are the model's (same paths, shapes and
dtypes); nothing changes in the folder.
"""

from typing import Any

import tensorflow as tf

from sonnet_like.core import files
from sonnet_like.core.tf_private import checkpoint as tf_checkpoint
from sonnet_like.scenarios.run_folder import checkpointing
from sonnet_like.scenarios.run_folder import keep_best

WHICH_ERROR = (
    "load_weights: which must be 'best', 'last' or a step (an int), got "
    "{which!r}.")

NOT_BUILT_ERROR = (
    "load_weights: the model {model} has no variables yet. Call it once on "
    "a batch of inputs (e.g. model(x[:1])) so that its variables exist, "
    "then load the weights into them.")

NO_CHECKPOINT_ERROR = (
    "load_weights: {save_dir} holds no {what}. {hint}")

NO_MODEL_ERROR = (
    "load_weights: checkpoint {checkpoint} holds no model named {name!r}; "
    "its entries are {names}. Pass name= the scenario's name of the model "
    "(Supervised: 'model'; GAN: 'generator'; RL: 'actor', ...).")

NO_EMA_ERROR = (
    "load_weights: checkpoint {checkpoint} holds no weight averages of "
    "{name!r} (the run was trained without ema=). Load its raw weights with "
    "ema=False.")

MISMATCH_ERROR = (
    "load_weights: the model {model} does not match {name!r} in checkpoint "
    "{checkpoint} (another architecture or size?). Unmatched paths:\n"
    "{details}\nNothing was loaded: make the model as the run made it.")


def _checkpoint_path(save_dir: str, which: Any) -> str:
  """The prefix of the checkpoint `which` names in `save_dir`."""
  if which == "best":
    best = keep_best.record(save_dir) if files.isdir(save_dir) else None
    if best is None:
      raise FileNotFoundError(NO_CHECKPOINT_ERROR.format(
          save_dir=save_dir, what="best checkpoint (best/best.json)",
          hint="The run keeps one with keep_best=METRIC, from its first "
          "evaluation on; load which='last' otherwise."))
    return best["checkpoint"]
  steps = [s for s in sorted(checkpointing.scan(save_dir), reverse=True)
           if which == "last" or s == which]
  for step in steps:  # The newest that reads (a save may be cut short).
    path = files.join(save_dir, f"{checkpointing.CHECKPOINT_NAME}-{step}")
    if checkpointing.readable(path):
      return path
  what = ("checkpoint that reads (ckpt-<step>)" if which == "last" else
          f"readable checkpoint of step {which} (ckpt-{which})")
  raise FileNotFoundError(NO_CHECKPOINT_ERROR.format(
      save_dir=save_dir, what=what, hint="Give the save_dir of a run that "
      "has saved (save_every=, or the end of the run)."))


def _entries(path: str) -> set[str]:
  """The checkpoint's top-level names ("model", "optimizer", ...), from its
  object graph (a variable's key names one of its paths only: a model's
  weights may be keyed under "model_ema/targets")."""
  reader = tf.compat.v1.train.NewCheckpointReader(path)
  graph = tf_checkpoint.TrackableObjectGraph()
  graph.ParseFromString(reader.get_tensor("_CHECKPOINTABLE_OBJECT_GRAPH"))
  return {child.local_name for child in graph.nodes[0].children}


def load_weights(model: tf.Module, save_dir: str, which: str | int = "last",
                 ema: bool = False, name: str = "model") -> str:
  """Loads the weights a run kept into `model` (built, as the run made it).

  With `ema` and `keep_best`, `which="best", ema=True` gives the weights
  the run's export holds. Only the model's variables change: the run's
  folder, optimizer and other models are left alone. For example (the
  export guide runs it):

      model = make_model()  # As the run made it, e.g. snt.nets.MLP(...)
      model(x[:1])  # Its variables, to load into.
      snt.scenarios.load_weights(model, "runs/digits", "best", ema=True)

  Args:
    model: The model to load into; its variables must exist.
    save_dir: The run's folder.
    which: "last" (the newest checkpoint that reads), "best" (the one
      `keep_best` kept) or a step whose checkpoint is still there.
    ema: Load the weights' averages (a run with `ema=`) instead of the raw
      weights.
    name: The scenario's name of the model: "model" (`Supervised`),
      "generator" or "discriminator" (`GAN`), "actor", "critic", ... (RL).

  Returns:
    The path of the checkpoint read.

  Raises:
    ValueError: `which` is not one of those; the model has no variables,
      does not match the checkpoint's, or the run kept no averages.
    FileNotFoundError: no such checkpoint in `save_dir`.
  """
  if which not in ("best", "last") and (not isinstance(which, int) or
                                        isinstance(which, bool)):
    raise ValueError(WHICH_ERROR.format(which=which))
  try:  # A Sonnet module not yet called raises a long error of its own.
    variables = list(model.trainable_variables)
  except ValueError:
    variables = []
  if not variables:
    raise ValueError(NOT_BUILT_ERROR.format(model=_named(model)))
  path = _checkpoint_path(save_dir, which)
  entries = _entries(path)
  if name not in entries:
    raise ValueError(NO_MODEL_ERROR.format(
        checkpoint=path, name=name, names=sorted(entries)))
  named: dict[str, Any] = {name: model}
  if ema:
    if f"{name}_ema" not in entries:
      raise ValueError(NO_EMA_ERROR.format(checkpoint=path, name=name))
    averages = tf.Module(name="averages")  # As `updates.ema.WeightEMA`.
    averages.targets = variables
    averages.averages = [tf.Variable(tf.zeros(v.shape, v.dtype),
                                     trainable=False) for v in variables]
    named[f"{name}_ema"] = averages
  checkpoint = tf.train.Checkpoint(**named)
  problems = [p for p in checkpointing.structure_mismatches(checkpoint, path)
              if p.split(":", 1)[0].split("/", 1)[0] in named]
  if problems:
    raise ValueError(MISMATCH_ERROR.format(
        model=_named(model), name=name, checkpoint=path,
        details="\n".join(f"  {p}" for p in problems[:20])))
  checkpoint.read(path).expect_partial()
  if ema:
    for variable, average in zip(variables, named[f"{name}_ema"].averages):
      variable.assign(average)
  return path


def _named(model: Any) -> str:
  name = getattr(model, "name", None)
  return f"{type(model).__name__} {name!r}" if name else type(model).__name__
