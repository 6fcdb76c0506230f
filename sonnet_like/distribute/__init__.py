"""`snt.distribute`: data-parallel training across devices (Sonnet 2 names)."""

from sonnet_like.distribute.batch_norm import CrossReplicaBatchNorm
from sonnet_like.distribute.replicator import create_variables_eagerly
from sonnet_like.distribute.replicator import Replicator
from sonnet_like.distribute.replicator import TpuReplicator

__all__ = [
    "CrossReplicaBatchNorm",
    "Replicator",
    "TpuReplicator",
    "create_variables_eagerly",
]
