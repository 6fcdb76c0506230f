"""remat: recompute a module's activations in the backward pass."""

from typing import Any

import tensorflow as tf

from sonnet_like.core import arguments
from sonnet_like.core import base
from sonnet_like.core import checks


class Remat(base.Module):
  """Calls a module so that its activations are recomputed for gradients.

  Made by `snt.remat(module)`. Tensor positional arguments are the inputs
  that get gradients; keyword arguments are passed as they are.
  """

  def __init__(self, module: Any, name: str | None = None):
    super().__init__(name=name or f"remat_{getattr(module, 'name', 'module')}")
    arguments.check_module("remat", "module", module)
    self.module = module
    self._module_built = False

  def __call__(self, *args: Any, **kwargs: Any) -> Any:
    """`module(*args, **kwargs)`, keeping only its inputs for the gradient."""
    if not self._module_built and not tf.Module.variables.fget(self.module):
      # Variables cannot be created inside tf.recompute_grad: build them with
      # one ordinary call (whose result is discarded) first.
      self.module(*tf.nest.map_structure(tf.stop_gradient, args), **kwargs)
    self._module_built = True
    if not all(isinstance(a, (tf.Tensor, tf.Variable)) or
               hasattr(a, "dtype") for a in args):
      raise TypeError(f"{checks.describe(self)}: positional arguments must be "
                      "tensors (pass the others as keywords).")

    def forward(*inputs):
      return self.module(*inputs, **kwargs)

    return tf.recompute_grad(forward)(*args)


def remat(module: Any, name: str | None = None) -> tf.Module:
  """Wraps `module` so its activations are recomputed in the backward pass.

  The forward pass keeps only the module's inputs; the gradient runs the
  module again (`tf.recompute_grad`), trading one more forward pass for the
  memory of its activations. Gradients are those of `module` itself, under
  `tf.function`, XLA and `tf.distribute` strategies. Randomness inside the
  module (dropout) is drawn again when recomputed, so use it without.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> mlp = snt.nets.MLP([8, 8], name="doc_remat_mlp")
      >>> block = snt.remat(mlp)
      >>> x = tf.ones([2, 4])
      >>> with tf.GradientTape() as tape:
      ...   loss = tf.reduce_sum(block(x) ** 2)
      >>> len(tape.gradient(loss, mlp.trainable_variables))
      4

  Args:
    module: A module (or any `tf.Module` that can be called).
    name: Name of the wrapper; `remat_<module name>` by default.

  Returns:
    A module (an `snt.Module`) calling `module`.
  """
  return Remat(module, name=name)
