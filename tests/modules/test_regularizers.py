"""Tests for sonnet_like/modules/regularizers.py."""

import numpy as np
import pytest
import sonnet as reference
import tensorflow as tf

import sonnet_like as snt

RNG = np.random.default_rng(0)
TENSORS = [RNG.normal(size=s).astype(np.float32)
           for s in ((4, 3), (2, 5, 3), (6,))]
MATRICES = TENSORS[:2]


def numpy_off_diagonal(t):
  w = t.reshape(-1, t.shape[-1]).astype(np.float64)
  gram = w.T @ w
  return np.sum(gram**2) - np.sum(np.diag(gram)**2)


@pytest.mark.parametrize("name,tensors,numpy_fn", [
    ("L1", TENSORS, lambda t: np.abs(t).sum()),
    ("L2", TENSORS, lambda t: np.square(t).sum()),
    ("OffDiagonalOrthogonal", MATRICES, numpy_off_diagonal),
])
def test_maths_against_numpy_and_sonnet(name, tensors, numpy_fn):
  scale = 0.3
  ours = getattr(snt.regularizers, name)(scale)
  theirs = getattr(reference.regularizers, name)(scale)
  out = ours([tf.constant(t) for t in tensors])
  assert out.shape == () and out.dtype == tf.float32
  np.testing.assert_allclose(out, scale * sum(numpy_fn(t) for t in tensors),
                             rtol=1e-5)
  np.testing.assert_allclose(out, theirs([tf.constant(t) for t in tensors]),
                             rtol=1e-6)


def test_orthogonal_columns_give_zero():
  q, _ = np.linalg.qr(RNG.normal(size=(5, 3)))
  reg = snt.regularizers.OffDiagonalOrthogonal(1.)
  assert abs(float(reg([tf.constant(q * [1., 2., 3.])]))) < 1e-10


def test_variables_and_gradients():
  w = tf.Variable([[1., -2.], [3., 0.]])
  with tf.GradientTape() as tape:
    loss = snt.regularizers.L2(0.5)([w]) + snt.regularizers.L1(1.)([w])
  np.testing.assert_allclose(tape.gradient(loss, w),
                             w.numpy() + np.sign(w.numpy()))


@pytest.mark.parametrize("cls", [snt.regularizers.L1, snt.regularizers.L2,
                                 snt.regularizers.OffDiagonalOrthogonal])
def test_empty_list_gives_zero(cls):
  out = cls(0.1)([])
  assert float(out) == 0. and out.shape == ()


def test_float64_tensors_and_tensor_scale():
  out = snt.regularizers.L2(tf.constant(2.))([tf.constant([1., 2.],
                                                         tf.float64)])
  assert out.dtype == tf.float64 and float(out) == 10.


def test_inside_tf_function_and_xla():
  reg = snt.regularizers.OffDiagonalOrthogonal(0.1)
  tensors = [tf.constant(t) for t in MATRICES]
  expected = reg(tensors)
  for jit in (False, True):
    np.testing.assert_allclose(tf.function(reg, jit_compile=jit)(tensors),
                               expected, rtol=1e-5)


def test_repr():
  assert repr(snt.regularizers.L1(0.5)) == "L1(scale=0.5)"
  assert str(snt.regularizers.L2(1)) == "L2(scale=1)"
  assert repr(snt.regularizers.OffDiagonalOrthogonal(0.1)) == (
      "OffDiagonalOrthogonal(scale=0.1)")


def test_regularizer_is_abstract_and_extensible():
  with pytest.raises(TypeError):
    snt.regularizers.Regularizer()  # pylint: disable=abstract-class-instantiated

  class Count(snt.regularizers.Regularizer):

    def __call__(self, tensors):
      return tf.constant(float(len(tensors)))

  assert float(Count()([1, 2])) == 2.


@pytest.mark.parametrize("cls", [snt.regularizers.L1, snt.regularizers.L2,
                                 snt.regularizers.OffDiagonalOrthogonal])
def test_negative_scale(cls):
  with pytest.raises(ValueError,
                     match=rf"{cls.__name__}: scale must be >=0, got -0.1\."):
    cls(-0.1)


def test_non_scalar_scale():
  with pytest.raises(ValueError, match="L1: scale must be a scalar, got"):
    snt.regularizers.L1(tf.constant([0.1, 0.2]))


def test_orthogonal_needs_rank_2():
  with pytest.raises(ValueError, match=r"OffDiagonalOrthogonal: tensors\[1\] "
                     r"must have rank >= 2, got EagerTensor\(shape=\(3,\)"):
    snt.regularizers.OffDiagonalOrthogonal(0.1)([tf.ones([2, 2]),
                                                 tf.ones([3])])


def test_single_tensor_instead_of_list():
  # A TypeError, and the ValueError Sonnet 2 raises for the same mistake.
  for error in (TypeError, ValueError):
    with pytest.raises(error, match="L2: expects a sequence of tensors, got "
                       "a single EagerTensor"):
      snt.regularizers.L2(0.1)(tf.ones([3]))


def test_mixed_dtypes():
  with pytest.raises(TypeError, match=r"L1: all tensors must share one dtype; "
                     r"tensors\[0\] is float32, tensors\[1\] is float64"):
    snt.regularizers.L1(0.1)([tf.ones([2]), tf.ones([2], tf.float64)])


def test_integer_tensors():
  with pytest.raises(TypeError, match=r"L1: tensors\[0\] must be "
                     "floating-point, got int32"):
    snt.regularizers.L1(0.1)([tf.constant([1, 2])])
