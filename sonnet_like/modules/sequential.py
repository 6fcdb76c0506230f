"""Sequential: a chain of modules or functions, each feeding the next."""

from typing import Any, Callable, Iterable


from sonnet_like.core import base


class Sequential(base.Module):
  """Applies its layers in order; the first one gets every call argument.

      >>> import sonnet_like as snt, tensorflow as tf
      >>> model = snt.Sequential([snt.Linear(4), tf.nn.relu, snt.Linear(2)],
      ...                        name="model")
      >>> model(tf.ones([3, 5])).shape
      TensorShape([3, 2])
      >>> len(model.trainable_variables)  # Both layers' w and b.
      4

  Only the first layer receives the extra arguments of a call, so layers
  needing their own (e.g. `BatchNorm`'s `is_training`) belong in a `Module`
  subclass with its own `__call__` instead.
  """

  def __init__(self, layers: Iterable[Callable[..., Any]] | None = None,
               name: str | None = None):
    """Constructs the module.

    Args:
      layers: Modules or functions, applied first to last.
      name: Name of the module.
    """
    super().__init__(name=name)
    self._layers = list(layers) if layers is not None else []
    for i, layer in enumerate(self._layers):
      if not callable(layer):
        raise TypeError(f"Sequential: layers must all be callable, got "
                        f"{layer!r} at index {i} "
                        f"('{type(layer).__name__}' object is not callable).")

  def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
    """Returns the last layer's output; the first gets all the arguments."""
    outputs = inputs
    for i, layer in enumerate(self._layers):
      outputs = layer(outputs, *args, **kwargs) if i == 0 else layer(outputs)
    return outputs
