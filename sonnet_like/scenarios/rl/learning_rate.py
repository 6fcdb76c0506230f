"""`ScaledLearningRate`, now in `scenarios/updates/learning_rate.py` (kept here)."""

from sonnet_like.scenarios.updates.learning_rate import NOT_SETTABLE_ERROR
from sonnet_like.scenarios.updates.learning_rate import ScaledLearningRate

__all__ = ["NOT_SETTABLE_ERROR", "ScaledLearningRate"]
