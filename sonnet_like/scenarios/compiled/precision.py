"""A scenario's numeric precision: `precision="float32" | "mixed_float16" |
"mixed_bfloat16"`.

Under a mixed precision the models run in the low precision with float32
variables: `Scenario.forward(model, inputs)` runs the whole call through
`snt.mixed_precision.call_in` (floating inputs and every trainable variable
an `snt.Module` reads are cast; outputs come back in float32), so losses,
the NaN guard and the optimizer work in float32. Only while the compiled
training step is traced: `build()`, evaluation, sampling and export run in
float32 as written.

"mixed_float16" also scales the loss dynamically
(`loss_scale.DynamicLossScale`): float16's smallest normal number is ~6e-5,
and small gradients would flush to zero in the backward pass without it.
bfloat16 has float32's range and needs no scaling.

    >>> Precision("mixed_float16", initial_scale=2.0 ** 10)
    Precision('mixed_float16', initial_scale=1024.0, growth_interval=2000)
"""

import dataclasses
import warnings
from typing import Any

import tensorflow as tf

from sonnet_like.core import autograph
from sonnet_like.core import base
from sonnet_like.core import mixed_precision

POLICIES = {"float32": None, "mixed_float16": tf.float16,
            "mixed_bfloat16": tf.bfloat16}

FLOAT32_MODEL_WARNING = (
    "{owner}: precision={precision!r}, but {model} computes in float32: "
    "{why}. It trains, at float32 speed. Build it from snt modules (their "
    "variables are read cast to {dtype}), or pass precision='float32' to "
    "silence this.")

# The ops that hold a model's arithmetic: if none of them runs in the low
# precision, the model was left in float32.
_HEAVY_OPS = frozenset([
    "MatMul", "SparseMatMul", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3", "Einsum",
    "Conv", "Conv1D", "Conv2D", "Conv3D", "DepthwiseConv2dNative",
    "Conv2DBackpropInput", "Conv3DBackpropInputV2"])


@dataclasses.dataclass(frozen=True)
class Precision:
  """A precision setting with its loss-scaling knobs.

  Args:
    policy: "float32", "mixed_float16" or "mixed_bfloat16".
    initial_scale: The loss scale at step 0 ("mixed_float16" only).
    growth_interval: The scale doubles after this many finite updates in a
      row, and halves (down to 1) on an update whose gradients overflow.
  """
  policy: str = "float32"
  initial_scale: float = 2.0 ** 15
  growth_interval: int = 2000

  def __post_init__(self):
    if self.policy not in POLICIES:
      raise ValueError(f"Precision: policy must be one of {list(POLICIES)}, "
                       f"got {self.policy!r}.")
    if not (isinstance(self.initial_scale, (int, float)) and
            self.initial_scale >= 1):
      raise ValueError(f"Precision: initial_scale must be a number >= 1, got "
                       f"{self.initial_scale!r}.")
    if isinstance(self.growth_interval, bool) or not (
        isinstance(self.growth_interval, int) and self.growth_interval > 0):
      raise ValueError(f"Precision: growth_interval must be a positive int, "
                       f"got {self.growth_interval!r}.")
    object.__setattr__(self, "initial_scale", float(self.initial_scale))

  @property
  def compute_dtype(self) -> tf.DType | None:
    """float16 or bfloat16 under a mixed policy, else None."""
    return POLICIES[self.policy]

  @property
  def scales_loss(self) -> bool:
    return self.policy == "mixed_float16"

  def __repr__(self) -> str:
    if not self.scales_loss:
      return f"Precision({self.policy!r})"
    return (f"Precision({self.policy!r}, initial_scale={self.initial_scale}, "
            f"growth_interval={self.growth_interval})")


def parse(owner: str, value: Any) -> Precision:
  """`value` (a policy name or a `Precision`) as a `Precision`."""
  if isinstance(value, Precision):
    return value
  if not isinstance(value, str) or value not in POLICIES:
    raise ValueError(f"{owner}: precision must be one of {list(POLICIES)} "
                     f"or a snt.scenarios.Precision, got {value!r}.")
  return Precision(value)


def _model_name(model: Any) -> str:
  name = getattr(model, "name", None) or getattr(model, "__name__", None)
  return f"{type(model).__name__} {name!r}" if name else repr(model)


class Forward:
  """Runs models in the compute dtype of a mixed precision.

  The traced step (`step.TracedStep.forward`) calls it while `train_step`
  is traced; outside it (building, evaluation, export) models run as
  written. A model that cannot be cast runs as written, with a warning.
  """

  def __init__(self, owner: str, precision: Precision):
    self.owner, self.precision = owner, precision
    self._warned: set[int] = set()

  @autograph.as_written
  def __call__(self, model: Any, call: Any, inputs: Any) -> Any:
    """`call(inputs)` (which calls `model`) in the compute dtype."""
    call = autograph.as_user_code(call)  # The user's model, rewritten.
    dtype = self.precision.compute_dtype
    if dtype is None:
      return call(inputs)
    model = getattr(model, "fn", model)  # A function given as the model.
    why = self._cannot_cast(model)
    if why:
      self._warn(model, why)
      return call(inputs)
    graph = tf.compat.v1.get_default_graph()
    before = len(graph.get_operations()) if not tf.executing_eagerly() else 0
    outputs = mixed_precision.call_in(dtype, call, (inputs,),
                                      trainable_only=True)
    if not tf.executing_eagerly():
      heavy = [op for op in graph.get_operations()[before:]
               if op.type in _HEAVY_OPS]
      # Their output dtype: bfloat16 x float32 runs as SparseMatMul into
      # float32.
      dtypes = {op.outputs[0].dtype for op in heavy if op.outputs}
      if dtypes and dtype not in dtypes:
        self._warn(model, f"its matrix products and convolutions run in "
                   f"{sorted(d.name for d in dtypes)}")
    return outputs

  def _cannot_cast(self, model: Any) -> str | None:
    if hasattr(model, "dtype_policy") or hasattr(model, "compute_dtype"):
      return ("it is a Keras layer or model, which follows its own dtype "
              "policy (keras.mixed_precision.set_dtype_policy)")
    if isinstance(model, base.Module):
      return None
    if not isinstance(model, tf.Module) or not any(
        isinstance(m, base.Module) for m in model.submodules):
      return ("its variables are not read through snt.Module attributes, "
              "so they cannot be cast (a plain function or tf.Module)")
    return None

  def _warn(self, model: Any, why: str) -> None:
    if id(model) in self._warned:
      return
    self._warned.add(id(model))
    warnings.warn(FLOAT32_MODEL_WARNING.format(
        owner=self.owner, precision=self.precision.policy,
        model=_model_name(model), why=why,
        dtype=self.precision.compute_dtype.name), stacklevel=4)
