"""Type aliases shared across the library."""

from typing import Any, Callable, Sequence, Union

import numpy as np
import tensorflow as tf

Tensor = Union[tf.Tensor, tf.Variable]
TensorLike = Union[np.ndarray, tf.Tensor, tf.Variable, float, int]
ShapeLike = Union[int, Sequence[int], tf.TensorShape]
IntLike = Union[int, np.integer, tf.Tensor]
FloatLike = Union[float, np.floating, tf.Tensor]
BoolLike = Union[bool, np.bool_, tf.Tensor]
Activation = Callable[[tf.Tensor], tf.Tensor]
Initializer = Callable[[ShapeLike, tf.DType], tf.Tensor]
PaddingLike = Union[str, Callable[[int], Sequence[int]],
                    Sequence[Callable[[int], Sequence[int]]]]
ParameterUpdate = Any  # A gradient or update for one variable (or None).
