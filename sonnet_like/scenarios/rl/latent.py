"""The actor's last hidden layer, as gSDE's features.

With `sde_features="latent"` a gSDE policy's noise is linear in the actor's
last hidden layer (the input of its output layer), as Stable-Baselines3's
gSDE is, instead of in the actor's inputs. `hidden_layer(owner, actor)`
gives that layer as a function of the actor's inputs and its size; the
function calls the actor's own layers, so it shares their variables.

    >>> import tensorflow as tf, sonnet_like as snt
    >>> actor = snt.nets.MLP([16, 8, 1], activation=tf.tanh)
    >>> hidden, size = hidden_layer("PPO", actor)
    >>> size, hidden(tf.zeros([3, 2])).shape.as_list()
    (8, [3, 8])
"""

from typing import Any, Callable

import tensorflow as tf

from sonnet_like.modules import linear
from sonnet_like.modules import sequential
from sonnet_like.nets import mlp

SDE_FEATURES = ("inputs", "latent")

LATENT_ACTOR_ERROR = (
    "{owner}: sde_features='latent' uses the actor's last hidden layer as "
    "gSDE's features, so the actor must be an snt.nets.MLP with at least two "
    "layers and no dropout, or an snt.Sequential ending with an snt.Linear "
    "after another snt.Linear; got {got}. Use sde_features='inputs' (the "
    "actor's inputs) for other actors.")


def _last_linear_size(layers: list[Any]) -> int | None:
  """The output size of the last `snt.Linear` in `layers`, if any."""
  sizes = [layer.output_size for layer in layers
           if isinstance(layer, linear.Linear)]
  return sizes[-1] if sizes else None


def hidden_layer(owner: str, actor: Any
                 ) -> tuple[Callable[[tf.Tensor], tf.Tensor], int]:
  """(hidden, size): `hidden` maps the actor's inputs `[batch, ...]` to the
  input of its output layer, `[batch, size]`."""
  # pylint: disable=protected-access
  if isinstance(actor, mlp.MLP) and len(actor._layers) >= 2 and not (
      actor._use_dropout):
    layers, activation = actor._layers[:-1], actor._activation

    def mlp_hidden(inputs: tf.Tensor) -> tf.Tensor:
      for layer in layers:
        inputs = activation(layer(inputs))
      return inputs
    return mlp_hidden, layers[-1].output_size
  if isinstance(actor, sequential.Sequential) and actor._layers and (
      isinstance(actor._layers[-1], linear.Linear)):
    size = _last_linear_size(actor._layers[:-1])
    if size is not None:
      return sequential.Sequential(actor._layers[:-1],
                                   name=f"{actor.name}_hidden"), size
  raise TypeError(LATENT_ACTOR_ERROR.format(owner=owner, got=repr(actor)))
