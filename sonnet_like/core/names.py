"""Unique module names within an enclosing name scope (`linear`, `linear_1`)."""

import threading

_lock = threading.Lock()
# Maps an enclosing scope ("" at top level, "mlp" inside an MLP) to the
# names already handed out in it.
_taken: dict[str, set[str]] = {}


def reserve(parent_scope: str, name: str) -> str:
  """Returns `name`, or `name_1`, `name_2`... if taken, and marks it taken."""
  with _lock:
    taken = _taken.setdefault(parent_scope, set())
    unique, i = name, 0
    while unique in taken:
      i += 1
      unique = f"{name}_{i}"
    taken.add(unique)
    return unique


def _inside(key: str, scope: str) -> bool:
  return key == scope or key.startswith(scope + "/")


def snapshot(scope: str) -> dict[str, set[str]]:
  """Copies the names taken inside `scope` and the scopes nested in it."""
  with _lock:
    return {k: set(v) for k, v in _taken.items() if _inside(k, scope)}


def restore(scope: str, saved: dict[str, set[str]]) -> None:
  """Undoes the reservations made inside `scope` since `snapshot(scope)`."""
  with _lock:
    for key in [k for k in _taken if _inside(k, scope)]:
      if key in saved:
        _taken[key] = set(saved[key])
      else:
        del _taken[key]


def clear() -> None:
  """Forgets every name handed out, as in a fresh process (for tests)."""
  with _lock:
    _taken.clear()
