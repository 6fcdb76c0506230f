"""Library functions that AutoGraph calls as written."""

from typing import Callable, TypeVar

F = TypeVar("F", bound=Callable)

# The mark `tf.autograph.experimental.do_not_convert` puts on its wrapper:
# AutoGraph calls whatever carries it without rewriting it.
_MARK = "autograph_info__"


def as_written(fn: F) -> F:
  """Marks `fn` to be called as written inside a `tf.function`.

  For library functions that branch only on Python values and call no code
  a user supplies or overrides: AutoGraph would rewrite each once in every
  new process (~50 ms each) for nothing. Unlike `do_not_convert` it adds no
  wrapper, so an eager call costs nothing more.
  """
  setattr(fn, _MARK, frozenset())
  return fn
