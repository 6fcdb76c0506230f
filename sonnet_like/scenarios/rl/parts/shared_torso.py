"""A torso that the actor and the critic share runs once per update.

An actor and a critic that are `snt.Sequential`s beginning with the same
module objects share a torso: Stable-Baselines3's `CnnPolicy` shares its
feature extractor this way, and so do the Atari recipes' networks. The
on-policy updates ask for both networks' outputs on the same inputs; here
the shared front runs once and each head runs on its output, where calling
the two networks would run the torso twice, forward and backward. The
arithmetic is the same: the torso's gradient is the sum over both heads,
summed before its backward pass instead of after two of them.

Acting, evaluation and export call the actor alone, as before.
"""

from typing import Any, Sequence

from sonnet_like.modules import sequential


def _layers(model: Any) -> Sequence[Any] | None:
  """A plain `snt.Sequential`'s layers; None for anything else (a subclass
  with its own `__call__` may not apply them in order)."""
  if (isinstance(model, sequential.Sequential) and
      type(model).__call__ is sequential.Sequential.__call__):
    return model._layers  # pylint: disable=protected-access
  return None


def split(actor: Any, critic: Any
          ) -> tuple[Sequence[Any], Sequence[Any], Sequence[Any]] | None:
  """(torso, actor head, critic head) as lists of layers when `actor` and
  `critic` are `snt.Sequential`s whose first layers are the same objects;
  None when they share no front."""
  actor_layers, critic_layers = _layers(actor), _layers(critic)
  if actor_layers is None or critic_layers is None:
    return None
  shared = 0
  for mine, theirs in zip(actor_layers, critic_layers):
    if mine is not theirs:
      break
    shared += 1
  if not shared:
    return None
  return (actor_layers[:shared], actor_layers[shared:],
          critic_layers[shared:])


def _chain(layers: Sequence[Any], inputs: Any) -> Any:
  for layer in layers:
    inputs = layer(inputs)
  return inputs


def run(parts: tuple[Sequence[Any], Sequence[Any], Sequence[Any]],
        inputs: Any) -> tuple[Any, Any]:
  """The actor's and the critic's outputs on `inputs` from `split`'s
  parts: the torso once, then each head on its output."""
  torso, actor_head, critic_head = parts
  features = _chain(torso, inputs)
  return _chain(actor_head, features), _chain(critic_head, features)
