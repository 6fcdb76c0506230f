"""Every value a run's future depends on (`state`), and how far two such
states are apart (`largest_difference`): a population's member i against
the solo run of seed i, in the population tests."""

import numpy as np
import tensorflow as tf

from sonnet_like.scenarios.population import members as members_lib


def state(scenario, member=None):
  """Every value a run's future depends on, by part: a solo run's, or a
  population's member `member` (the scenario answering as it)."""
  if member is not None:
    with scenario.as_member(member):
      return state(scenario)
  found = {}
  for name, value in dict(scenario.trackables(), rng=scenario.rng).items():
    if isinstance(value, tf.random.Generator):
      found[name] = [value.state.numpy()]
    else:
      found[name] = [v.numpy() for v in members_lib._variables_of(value)]  # pylint: disable=protected-access
  return found


def largest_difference(a, b):
  """The largest difference between two `state`s' floats, relative to
  the value where it is above 1 (an episode's return of a few hundred
  carries float32 steps of 3e-5); integers must be equal."""
  assert a.keys() == b.keys()
  worst = 0.0
  for name in a:
    assert len(a[name]) == len(b[name]), name
    for x, y in zip(a[name], b[name]):
      if x.dtype.kind in "iub":  # Counters, environment steps, the stream.
        np.testing.assert_array_equal(x, y, err_msg=name)
      else:
        y = y.astype(np.float64)
        worst = max(worst, float(np.max(np.abs(x - y) / np.maximum(
            np.abs(y), 1.0), initial=0.0)))
  return worst
