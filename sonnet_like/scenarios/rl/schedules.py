"""The step schedules, now `snt.scenarios.schedules` (kept importable here)."""

from sonnet_like.scenarios.schedules import ConstantSchedule
from sonnet_like.scenarios.schedules import ExponentialSchedule
from sonnet_like.scenarios.schedules import LinearSchedule
from sonnet_like.scenarios.schedules import Schedule

__all__ = ["ConstantSchedule", "ExponentialSchedule", "LinearSchedule",
           "Schedule"]
