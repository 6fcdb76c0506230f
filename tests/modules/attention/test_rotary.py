"""Tests for sonnet_like/modules/attention/rotary.py."""

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt


def _reference(x, positions, max_wavelength):
  """Each pair (i, i + D/2) times a 2x2 rotation matrix, one at a time."""
  out = np.empty_like(x)
  size = x.shape[-1]
  half = size // 2
  for b, t, h in np.ndindex(*x.shape[:3]):
    for i in range(half):
      theta = positions[t] / max_wavelength ** (2 * i / size)
      rotation = np.array([[np.cos(theta), -np.sin(theta)],
                           [np.sin(theta), np.cos(theta)]])
      pair = np.array([x[b, t, h, i], x[b, t, h, i + half]])
      out[b, t, h, i], out[b, t, h, i + half] = rotation @ pair
  return out


def test_equals_hand_written_reference():
  x = np.random.default_rng(0).normal(size=(2, 5, 3, 6))
  positions = np.array([0, 1, 2, 7, 30])
  rotary = snt.RotaryEmbedding(max_wavelength=100.)
  got = rotary(tf.constant(x, tf.float32), positions)
  np.testing.assert_allclose(got, _reference(x, positions, 100.), rtol=1e-5,
                             atol=1e-5)
  np.testing.assert_allclose(rotary(tf.constant(x, tf.float32)),
                             _reference(x, np.arange(5), 100.), rtol=1e-5,
                             atol=1e-5)


def test_scores_depend_on_relative_position_only():
  rng = np.random.default_rng(1)
  q = tf.constant(np.broadcast_to(rng.normal(size=(1, 1, 1, 8)),
                                  (1, 4, 1, 8)), tf.float32)
  rotary = snt.RotaryEmbedding()
  shifted = [rotary(q, tf.range(4) + start) for start in (0, 9)]
  scores = [tf.einsum("bthd,bshd->ts", r, r) for r in shifted]
  np.testing.assert_allclose(scores[0], scores[1], rtol=1e-4, atol=1e-4)


def test_odd_size_is_named():
  with pytest.raises(ValueError, match="RotaryEmbedding 'rot' rotates pairs "
                     "of features, so the last axis must have an even size, "
                     "got 5"):
    snt.RotaryEmbedding(name="rot")(tf.ones([1, 2, 1, 5]))
