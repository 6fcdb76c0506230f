"""`snt.functional`: Sonnet 2's functional API (pure `init`/`apply`).

Build modules under `variables()`, turn a function that uses them into pure
functions with `transform` (or `transform_with_state`), differentiate and
compile those with `grad`, `value_and_grad` and `jit`, and train with the
functional optimizers (`sgd`, `adam`, `momentum`, `rmsprop`, or
`optimizer(cls)` for any `snt.Optimizer`).
"""

from sonnet_like import optimizers as _optimizers
from sonnet_like.functional.jax_like import device_get
from sonnet_like.functional.jax_like import device_put
from sonnet_like.functional.jax_like import grad
from sonnet_like.functional.jax_like import jit
from sonnet_like.functional.jax_like import value_and_grad
from sonnet_like.functional.optimizers import optimizer
from sonnet_like.functional.tensor_variable import variables
from sonnet_like.functional.transform import transform
from sonnet_like.functional.transform import transform_with_state
from sonnet_like.functional.transform import without_state

sgd = optimizer(_optimizers.SGD)
adam = optimizer(_optimizers.Adam)
rmsprop = optimizer(_optimizers.RMSProp)
momentum = optimizer(_optimizers.Momentum)

__all__ = (
    "variables",
    "transform",
    "transform_with_state",
    "without_state",
    "device_get",
    "device_put",
    "grad",
    "jit",
    "value_and_grad",
    "optimizer",
    "sgd",
    "adam",
    "rmsprop",
    "momentum",
)
