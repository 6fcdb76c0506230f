"""sonnet_like: neural-network modules and training scenarios for TensorFlow 2.

`import sonnet_like as snt` runs Sonnet 2 code unchanged.
"""

from sonnet_like.core import initializers
from sonnet_like.core.base import allow_empty_variables
from sonnet_like.core.base import Module
from sonnet_like.core.base import no_name_scope
from sonnet_like.core.once import once
from sonnet_like.modules.linear import Linear

__version__ = "0.1.0"

__all__ = [
    "Linear",
    "Module",
    "allow_empty_variables",
    "initializers",
    "no_name_scope",
    "once",
]
