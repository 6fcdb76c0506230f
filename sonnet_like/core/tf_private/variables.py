"""`ResourcelessVariable`: a `tf.Variable` subclass that skips its `__init__`.

`functional.TensorVariable` (and a population's `MemberVariable`) are
`tf.Variable`s so that modules, optimizers and `tf.Module`'s tracking take
them, but hold a tensor, not a device resource. They rely on TensorFlow's
`VariableMetaclass` building a subclass with plain `type.__call__` (only
`tf.Variable(...)` itself goes through the variable creators), and on
`tf.Variable.__init__` not being needed by what the subclass does not
override. Public replacement: a `tf.experimental.ExtensionType` variable,
if TensorFlow ever offers one; `tf.Variable` subclassing is not documented.
"""

import tensorflow as tf


class ResourcelessVariable(tf.Variable):
  """A `tf.Variable` that makes no resource: subclasses define the state
  and override what reads and writes it. `tf.Variable.__init__` is
  deliberately never called."""

  def __init__(self):  # pylint: disable=super-init-not-called
    pass
