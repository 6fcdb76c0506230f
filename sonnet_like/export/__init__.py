"""Export: SavedModels with serving signatures that load without sonnet_like.

- `save_module(module, directory, inputs)`: a module's outputs (plus
  probabilities and classes for a classifier).
- `save_sampler(generator, directory, latents)`: a GAN generator, from a
  batch of latents or from a count and a seed.
- `save_policy(actor, directory, observation_spec, action_space)`: an RL
  policy's greedy and sampled actions.
- `save(directory, {name: Signature(...)})`: any callables.

Load with plain TensorFlow: `tf.saved_model.load(path)`, then
`loaded.signatures["serving_default"](**named_inputs)` (a dict of named
outputs) or `loaded(inputs)`.
"""

from sonnet_like.export.module import save_module
from sonnet_like.export.policy import save_policy
from sonnet_like.export.sampler import save_sampler
from sonnet_like.export.signatures import save
from sonnet_like.export.signatures import Signature

__all__ = [
    "Signature",
    "save",
    "save_module",
    "save_policy",
    "save_sampler",
]
