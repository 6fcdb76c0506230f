"""Common networks built from sonnet_like modules."""

from sonnet_like.nets.mlp import MLP

__all__ = [
    "MLP",
]
