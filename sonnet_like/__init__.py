"""sonnet_like: neural-network modules and training scenarios for TensorFlow 2.

`import sonnet_like as snt` runs Sonnet 2 code unchanged.
"""

# pylint: disable=g-bad-import-order
# --- core ---
from sonnet_like.core import initializers
from sonnet_like.core.base import allow_empty_variables
from sonnet_like.core.base import Module
from sonnet_like.core.base import no_name_scope
from sonnet_like.core.once import once
# --- core layers ---
from sonnet_like.modules.linear import Linear
# --- conv ---
# --- normalization, dropout, containers, reshape, moving averages ---
# --- nets ---
# --- optimizers ---
# --- recurrent ---
# --- other modules ---
# --- scenarios ---

__version__ = "0.1.0"

__all__ = [
    # --- core ---
    "Module",
    "allow_empty_variables",
    "initializers",
    "no_name_scope",
    "once",
    # --- core layers ---
    "Linear",
    # --- conv ---
    # --- normalization, dropout, containers, reshape, moving averages ---
    # --- nets ---
    # --- optimizers ---
    # --- recurrent ---
    # --- other modules ---
    # --- scenarios ---
]
