"""Shared helpers of the normalization tests: inputs, the Sonnet check."""

import numpy as np


def normal_input(shape, seed=0, dtype=np.float32):
  """Normal values with mean 3 and stddev 2 (statistics far from 0 and 1)."""
  return (np.random.default_rng(seed).normal(size=shape) * 2 + 3).astype(dtype)


def relative_names(module):
  """The names of `module`'s variables below the module's own scope."""
  return [v.name.split("/", 1)[1] for v in module.variables]


def assert_matches_sonnet(ours, theirs, x):
  """Equal outputs (to 1e-6) and variable names of ours and Sonnet's."""
  np.testing.assert_allclose(ours(x), theirs(x), rtol=1e-6, atol=1e-6)
  assert relative_names(ours) == relative_names(theirs)
