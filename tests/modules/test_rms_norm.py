"""Tests for sonnet_like/modules/rms_norm.py."""

import numpy as np
import tensorflow as tf

import sonnet_like as snt


def test_formula_and_scale():
  x = np.random.default_rng(0).normal(size=(2, 3, 4)).astype(np.float32)
  norm = snt.RMSNorm(eps=1e-3)
  out = norm(x)
  expected = x / np.sqrt(np.mean(x ** 2, -1, keepdims=True) + 1e-3)
  np.testing.assert_allclose(out, expected, rtol=1e-5)
  norm.scale.assign([1., 2., 3., 4.])
  np.testing.assert_allclose(norm(x), expected * [1., 2., 3., 4.], rtol=1e-5)
  whole = snt.RMSNorm(axis=[1, 2], create_scale=False)(x)
  np.testing.assert_allclose(
      whole, x / np.sqrt(np.mean(x ** 2, (1, 2), keepdims=True) + 1e-5),
      rtol=1e-5)
  assert snt.RMSNorm(create_scale=False).variables == ()
