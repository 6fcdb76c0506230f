"""Tests for sonnet_like/core/initializers.py, side by side with dm-sonnet."""

import numpy as np
import pytest
import sonnet as reference
import tensorflow as tf

import sonnet_like as snt

_SAME_AS_SONNET = [
    ("Zeros", {}), ("Ones", {}), ("Constant", {"value": 2.5}),
    ("RandomUniform", {"minval": -1., "maxval": 3.}),
    ("RandomNormal", {"mean": 1., "stddev": 2.}),
    ("TruncatedNormal", {"stddev": 0.5}), ("Identity", {"gain": 2.}),
    ("Orthogonal", {"gain": 1.5}),
    ("VarianceScaling", {"scale": 2.0}),
    ("VarianceScaling", {"mode": "fan_out", "distribution": "normal"}),
    ("VarianceScaling", {"mode": "fan_avg", "distribution": "uniform"}),
]


@pytest.mark.parametrize("name,kwargs", _SAME_AS_SONNET)
@pytest.mark.parametrize("shape", [(4, 6), (3, 3, 2, 5)])
def test_matches_sonnet(name, kwargs, shape):
  tf.random.set_seed(7)
  ours = getattr(snt.initializers, name)(**kwargs)(shape, tf.float32)
  tf.random.set_seed(7)
  theirs = getattr(reference.initializers, name)(**kwargs)(shape, tf.float32)
  np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6,
                             atol=1e-6)


def test_variance_scaling_statistics():
  values = snt.initializers.VarianceScaling(scale=2.0)([400, 500], tf.float32)
  assert abs(np.std(values.numpy()) - np.sqrt(2.0 / 400)) < 0.002
  uniform = snt.initializers.VarianceScaling(distribution="uniform")(
      [400, 500], tf.float32).numpy()
  assert np.abs(uniform).max() <= np.sqrt(3.0 / 400)


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (2, 3, 4)])
def test_orthogonal_is_orthogonal(shape):
  q = snt.initializers.Orthogonal()(shape, tf.float32).numpy()
  matrix = q.reshape(-1, shape[-1])
  small = matrix.T @ matrix if matrix.shape[0] >= matrix.shape[1] else (
      matrix @ matrix.T)
  np.testing.assert_allclose(small, np.eye(len(small)), atol=1e-5)


def test_identity_batched():
  eye = snt.initializers.Identity(gain=3.)([2, 3, 3], tf.float32).numpy()
  np.testing.assert_array_equal(eye, 3. * np.stack([np.eye(3)] * 2))


@pytest.mark.parametrize("make,error,match", [
    (lambda: snt.initializers.Constant([1, 2]), TypeError, "scalar"),
    (lambda: snt.initializers.VarianceScaling(scale=0.), ValueError,
     "`scale` must be positive float, got 0.0"),
    (lambda: snt.initializers.VarianceScaling(mode="fan"), ValueError,
     "Invalid `mode` argument: 'fan'"),
    (lambda: snt.initializers.VarianceScaling(distribution="x"), ValueError,
     "Invalid `distribution` argument: 'x'"),
    (lambda: snt.initializers.Identity()([3], tf.float32), ValueError,
     "The tensor to initialize must be at least two-dimensional"),
    (lambda: snt.initializers.Orthogonal()([3], tf.float32), ValueError,
     "The tensor to initialize must be at least two-dimensional"),
    (lambda: snt.initializers.TruncatedNormal()([3], tf.int32), TypeError,
     "floating-point dtype: Expected floating point type, got int32"),
    (lambda: snt.initializers.Zeros()([3], tf.string), TypeError,
     "Expected integer or floating point type, got string"),
])
def test_bad_arguments(make, error, match):
  with pytest.raises(error, match=match):
    make()
