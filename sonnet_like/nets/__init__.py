"""Common networks built from sonnet_like modules."""

# pylint: disable=g-bad-import-order
from sonnet_like.nets.mlp import MLP
# --- cifar10_convnet, resnet ---
# --- vqvae ---

__all__ = [
    "MLP",
    # --- cifar10_convnet, resnet ---
    # --- vqvae ---
]
