"""Optimizers: `apply(updates, parameters)` changes the parameters in place.

All of them implement `snt.Optimizer` and follow Sonnet 2's names, arguments,
state variables and update rules.
"""

from sonnet_like.optimizers.adam import Adam
from sonnet_like.optimizers.momentum import Momentum
from sonnet_like.optimizers.rmsprop import RMSProp
from sonnet_like.optimizers.sgd import SGD

__all__ = [
    "Adam",
    "Momentum",
    "RMSProp",
    "SGD",
]
