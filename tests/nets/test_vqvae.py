"""Tests for sonnet_like/nets/vqvae.py."""

import numpy as np
import pytest
import sonnet
import tensorflow as tf

import sonnet_like as snt

_KEYS = ["distances", "encoding_indices", "encodings", "loss", "perplexity",
         "quantize"]


def _np_nearest(x, embeddings):
  """NumPy reference: distances, indices, one-hot codes, quantized inputs."""
  dim, num = embeddings.shape
  flat = x.reshape(-1, dim)
  distances = ((flat**2).sum(1, keepdims=True) - 2 * flat @ embeddings +
               (embeddings**2).sum(0, keepdims=True))
  indices = distances.argmin(1)
  encodings = np.eye(num, dtype=x.dtype)[indices]
  quantized = embeddings.T[indices].reshape(x.shape)
  avg = encodings.mean(0)
  perplexity = np.exp(-(avg * np.log(avg + 1e-10)).sum())
  return {"distances": distances, "encoding_indices":
          indices.reshape(x.shape[:-1]), "encodings": encodings,
          "quantize": quantized, "perplexity": perplexity}


class _NpEMA:
  """NumPy reference of the debiased moving average."""

  def __init__(self, decay):
    self.decay, self.hidden, self.count = decay, 0., 0

  def __call__(self, value):
    self.count += 1
    self.hidden = self.hidden - (self.hidden - value) * (1 - self.decay)
    return self.hidden / (1 - self.decay**self.count)


def _assert_outputs_close(ours, theirs, **kw):
  assert sorted(ours) == sorted(theirs) == _KEYS
  for key in _KEYS:
    np.testing.assert_allclose(np.asarray(ours[key]), np.asarray(theirs[key]),
                               err_msg=key, **kw)


# VectorQuantizer.


def test_outputs_match_numpy_reference():
  vq = snt.nets.VectorQuantizer(embedding_dim=4, num_embeddings=7,
                                commitment_cost=0.25)
  x = np.random.default_rng(0).normal(size=(3, 5, 4)).astype(np.float32)
  out = vq(tf.constant(x), is_training=True)
  ref = _np_nearest(x, vq.embeddings.numpy())
  np.testing.assert_array_equal(out["encoding_indices"],
                                ref["encoding_indices"])
  assert out["encoding_indices"].dtype == tf.int64
  assert out["encoding_indices"].shape == [3, 5]
  np.testing.assert_array_equal(out["encodings"], ref["encodings"])
  np.testing.assert_allclose(out["distances"], ref["distances"], rtol=1e-5,
                             atol=1e-5)
  np.testing.assert_allclose(out["quantize"], ref["quantize"], rtol=1e-6,
                             atol=1e-6)
  np.testing.assert_allclose(out["perplexity"], ref["perplexity"], rtol=1e-5)
  mse = ((ref["quantize"] - x)**2).mean()
  np.testing.assert_allclose(out["loss"], mse * (1 + 0.25), rtol=1e-5)


def test_gradients_match_numpy_reference():
  """Straight-through to the inputs; the loss moves codes and inputs."""
  beta = 0.3
  vq = snt.nets.VectorQuantizer(3, 5, commitment_cost=beta, dtype=tf.float64)
  x = tf.constant(np.random.default_rng(1).normal(size=(4, 2, 3)))
  upstream = tf.constant(np.random.default_rng(2).normal(size=(4, 2, 3)))
  with tf.GradientTape(persistent=True) as tape:
    tape.watch(x)
    out = vq(x, is_training=True)
    through = tf.reduce_sum(out["quantize"] * upstream)
  np.testing.assert_allclose(tape.gradient(through, x), upstream)
  assert tape.gradient(through, vq.embeddings) is None

  embeddings = vq.embeddings.numpy()
  ref = _np_nearest(x.numpy(), embeddings)
  diff = ref["quantize"] - x.numpy()  # Code minus input.
  np.testing.assert_allclose(tape.gradient(out["loss"], x),
                             -beta * 2 * diff / diff.size, rtol=1e-10)
  expected = np.zeros_like(embeddings)
  flat = diff.reshape(-1, 3)
  for row, code in zip(flat, ref["encoding_indices"].reshape(-1)):
    expected[:, code] += 2 * row / diff.size
  np.testing.assert_allclose(tape.gradient(out["loss"], vq.embeddings),
                             expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("is_training", [True, False])
def test_vq_matches_dm_sonnet_with_same_codebook(is_training):
  ours = snt.nets.VectorQuantizer(4, 6, commitment_cost=0.25)
  theirs = sonnet.nets.VectorQuantizer(4, 6, commitment_cost=0.25)
  theirs.embeddings.assign(ours.embeddings)
  x = tf.random.normal([2, 3, 4])
  with tf.GradientTape(persistent=True) as tape:
    tape.watch(x)
    a = ours(x, is_training=is_training)
    b = theirs(x, is_training=is_training)
  _assert_outputs_close(a, b, rtol=1e-6, atol=1e-6)
  for source_a, source_b in [(x, x), (ours.embeddings, theirs.embeddings)]:
    np.testing.assert_allclose(tape.gradient(a["loss"], source_a),
                               tape.gradient(b["loss"], source_b), rtol=1e-6)
  names = ["vector_quantizer/embeddings:0"]
  assert [v.name for v in ours.variables] == names
  assert [v.name for v in theirs.variables] == names


def test_vq_codebook_is_trainable_and_created_with_the_module():
  vq = snt.nets.VectorQuantizer(4, 6, commitment_cost=0.25, name="vq")
  assert vq.trainable_variables == (vq.embeddings,)
  assert vq.embeddings.shape == [4, 6]
  assert vq.embedding_dim == 4 and vq.num_embeddings == 6
  np.testing.assert_allclose(vq.quantize(tf.constant([[2, 0]])),
                             tf.transpose(vq.embeddings).numpy()[[[2, 0]]])


def test_sgd_on_the_loss_moves_the_codes_towards_the_inputs():
  vq = snt.nets.VectorQuantizer(2, 3, commitment_cost=0.25)
  x = tf.random.normal([16, 2])
  opt = snt.optimizers.SGD(0.5)
  losses = []
  for _ in range(20):
    with tf.GradientTape() as tape:
      loss = vq(x, is_training=True)["loss"]
    opt.apply(tape.gradient(loss, [vq.embeddings]), [vq.embeddings])
    losses.append(float(loss))
  assert losses[-1] < losses[0]


# VectorQuantizerEMA.


def _np_ema_steps(x_steps, embeddings, decay, epsilon):
  """NumPy reference of the EMA codebook updates; returns each step's state."""
  num = embeddings.shape[1]
  cluster_ema, dw_ema = _NpEMA(decay), _NpEMA(decay)
  states = []
  for x in x_steps:
    ref = _np_nearest(x, embeddings)
    flat = x.reshape(-1, embeddings.shape[0])
    cluster_size = cluster_ema(ref["encodings"].sum(0))
    dw = dw_ema(flat.T @ ref["encodings"])
    n = cluster_size.sum()
    smoothed = (cluster_size + epsilon) / (n + num * epsilon) * n
    embeddings = dw / smoothed[None, :]
    states.append({"ref": ref, "cluster_size": cluster_size, "dw": dw,
                   "embeddings": embeddings})
  return states


@pytest.mark.parametrize("dtype,rtol", [(tf.float64, 1e-10),
                                        (tf.float32, 2e-5)])
@pytest.mark.parametrize("compiled", [False, True])
def test_ema_updates_match_numpy_reference(dtype, rtol, compiled):
  decay, epsilon = 0.8, 1e-3
  vq = snt.nets.VectorQuantizerEMA(3, 5, commitment_cost=0.5, decay=decay,
                                   epsilon=epsilon, dtype=dtype)
  call = tf.function(vq) if compiled else vq
  rng = np.random.default_rng(3)
  xs = [rng.normal(size=(6, 2, 3)).astype(dtype.as_numpy_dtype)
        for _ in range(4)]
  states = _np_ema_steps(xs, vq.embeddings.numpy(), decay, epsilon)
  for x, state in zip(xs, states):
    out = call(tf.constant(x), is_training=True)
    ref = state["ref"]
    np.testing.assert_array_equal(out["encoding_indices"],
                                  ref["encoding_indices"])
    np.testing.assert_allclose(out["quantize"], ref["quantize"], rtol=rtol)
    mse = ((ref["quantize"] - x)**2).mean()
    np.testing.assert_allclose(out["loss"], 0.5 * mse, rtol=rtol)
    np.testing.assert_allclose(vq.ema_cluster_size.value,
                               state["cluster_size"], rtol=rtol)
    np.testing.assert_allclose(vq.ema_dw.value, state["dw"], rtol=rtol,
                               atol=rtol)
    np.testing.assert_allclose(vq.embeddings, state["embeddings"], rtol=rtol,
                               atol=rtol)
  assert int(vq.ema_dw.counter) == 4


def test_ema_matches_dm_sonnet_over_steps():
  ours = snt.nets.VectorQuantizerEMA(4, 6, commitment_cost=0.25, decay=0.9)
  theirs = sonnet.nets.VectorQuantizerEMA(4, 6, commitment_cost=0.25,
                                          decay=0.9)
  theirs.embeddings.assign(ours.embeddings)
  for step in range(4):
    x = tf.random.normal([5, 2, 4], seed=step)
    training = step != 2
    _assert_outputs_close(ours(x, is_training=training),
                          theirs(x, is_training=training), rtol=1e-5,
                          atol=1e-6)
    np.testing.assert_allclose(ours.embeddings, theirs.embeddings, rtol=1e-5,
                               atol=1e-6)
  assert ([(v.name, v.shape, v.trainable) for v in ours.variables] ==
          [(v.name, v.shape, v.trainable) for v in theirs.variables])


def test_dm_sonnet_checkpoint_restores_into_ema(tmp_path):
  theirs = sonnet.nets.VectorQuantizerEMA(4, 6, commitment_cost=0.25,
                                          decay=0.9)
  x = tf.random.normal([8, 4])
  theirs(x, is_training=True)
  path = tf.train.Checkpoint(module=theirs).save(str(tmp_path / "ckpt"))
  ours = snt.nets.VectorQuantizerEMA(4, 6, commitment_cost=0.25, decay=0.9)
  tf.train.Checkpoint(module=ours).restore(path).assert_consumed()
  y = tf.random.normal([8, 4])
  _assert_outputs_close(ours(y, is_training=True),
                        theirs(y, is_training=True), rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(ours.embeddings, theirs.embeddings, rtol=1e-5,
                             atol=1e-6)


def test_ema_evaluation_changes_nothing():
  vq = snt.nets.VectorQuantizerEMA(4, 6, commitment_cost=0.25, decay=0.9)
  before = [v.numpy() for v in vq.variables]
  vq(tf.random.normal([8, 4]), is_training=False)
  for a, b in zip(before, vq.variables):
    np.testing.assert_array_equal(a, b)


def test_ema_unused_codes_collapse_like_sonnet():
  """A code no input chose after one step gets dw = 0, so it becomes 0."""
  vq = snt.nets.VectorQuantizerEMA(2, 3, commitment_cost=0.25, decay=0.5)
  vq.embeddings.assign([[0., 10., -10.], [0., 10., -10.]])
  vq(tf.constant([[0.1, 0.], [-0.1, 0.2]]), is_training=True)
  np.testing.assert_allclose(vq.embeddings.numpy()[:, 1:], 0.)
  np.testing.assert_allclose(vq.embeddings.numpy()[:, 0], [0., 0.1],
                             atol=1e-5)


def test_ema_tensor_is_training_in_tf_function():
  vq = snt.nets.VectorQuantizerEMA(4, 6, commitment_cost=0.25, decay=0.9)
  f = tf.function(lambda x, t: vq(x, is_training=t))
  x = tf.random.normal([8, 4])
  initial = vq.embeddings.numpy()
  f(x, tf.constant(False))
  np.testing.assert_array_equal(vq.embeddings, initial)
  assert int(vq.ema_cluster_size.counter) == 0
  eager = snt.nets.VectorQuantizerEMA(4, 6, commitment_cost=0.25, decay=0.9)
  eager.embeddings.assign(initial)
  # The outputs use the codes from before the update, as in eager mode.
  _assert_outputs_close(f(x, tf.constant(True)), eager(x, is_training=True),
                        rtol=1e-6, atol=1e-6)
  assert int(vq.ema_cluster_size.counter) == 1
  assert not np.allclose(vq.embeddings, initial)
  np.testing.assert_allclose(vq.embeddings, eager.embeddings, rtol=1e-6)


def test_ema_decay_as_numpy_array_float64():
  """As in Sonnet's own test: a 0-d NumPy decay and a tf.function module."""
  vq = snt.nets.VectorQuantizerEMA(6, 7, commitment_cost=0.5,
                                   decay=np.array(0.1, dtype=np.float64),
                                   dtype=tf.float64)
  f = tf.function(vq)
  previous = vq.embeddings.numpy()
  for _ in range(3):
    f(tf.random.normal([16, 6], dtype=tf.float64), is_training=True)
    assert not (previous == vq.embeddings.numpy()).all()
    previous = vq.embeddings.numpy()


def test_ema_codebook_is_not_trainable():
  vq = snt.nets.VectorQuantizerEMA(6, 13, commitment_cost=0.5, decay=0.1,
                                   name="vq_ema")
  assert not vq.embeddings.trainable
  assert [v.name for v in vq.variables] == [
      "vq_ema/embeddings:0", "vq_ema/ema_cluster_size/counter:0",
      "vq_ema/ema_cluster_size/hidden:0", "vq_ema/ema_cluster_size/average:0",
      "vq_ema/ema_dw/counter:0", "vq_ema/ema_dw/hidden:0",
      "vq_ema/ema_dw/average:0"]


@pytest.mark.parametrize("cls,kwargs", [
    (snt.nets.VectorQuantizer, {}), (snt.nets.VectorQuantizerEMA,
                                     {"decay": 0.9})])
def test_empty_batch(cls, kwargs):
  vq = cls(4, 6, commitment_cost=0.25, **kwargs)
  out = vq(tf.zeros([0, 5, 5, 4]), is_training=False)
  assert out["quantize"].shape == [0, 5, 5, 4]
  assert out["encoding_indices"].shape == [0, 5, 5]


def test_default_names():
  assert snt.nets.VectorQuantizer(2, 3, 0.25).name == "vector_quantizer"
  assert snt.nets.VectorQuantizerEMA(2, 3, 0.25, 0.9).name == (
      "vector_quantizer_ema")


# Errors.


@pytest.mark.parametrize("cls,kwargs", [
    (snt.nets.VectorQuantizer, {}), (snt.nets.VectorQuantizerEMA,
                                     {"decay": 0.9})])
def test_wrong_embedding_dim_names_the_module(cls, kwargs):
  vq = cls(4, 6, commitment_cost=0.25, name="codes", **kwargs)
  with pytest.raises(ValueError, match=f"{cls.__name__} 'codes' was built "
                     r"for embedding_dim 4, got 8 \(input shape \(2, 8\)\)"):
    vq(tf.zeros([2, 8]), is_training=False)


def test_wrong_embedding_dim_when_the_graph_runs():
  vq = snt.nets.VectorQuantizer(4, 6, commitment_cost=0.25, name="codes")
  f = tf.function(lambda x: vq(x, is_training=False)["quantize"],
                  input_signature=[tf.TensorSpec([None, None], tf.float32)])
  assert f(tf.zeros([2, 4])).shape == [2, 4]
  with pytest.raises(tf.errors.InvalidArgumentError,
                     match=r"VectorQuantizer \\*'codes\\*' was built "
                     "for embedding_dim 4, got a different size"):
    f(tf.zeros([2, 8]))


def test_wrong_dtype():
  vq = snt.nets.VectorQuantizer(4, 6, commitment_cost=0.25, name="codes")
  with pytest.raises(TypeError, match="VectorQuantizer 'codes' was built for "
                     "float32 inputs, got float64"):
    vq(tf.zeros([2, 4], tf.float64), is_training=False)


def test_scalar_input():
  vq = snt.nets.VectorQuantizer(4, 6, commitment_cost=0.25, name="codes")
  with pytest.raises(ValueError, match="expects an input of rank >= 1"):
    vq(tf.constant(1.), is_training=False)


@pytest.mark.parametrize("decay", [0., 1., 1.5, -0.1, "0.9", True])
def test_ema_bad_decay(decay):
  with pytest.raises(ValueError, match=r"VectorQuantizerEMA: decay must be in "
                     r"range \(0, 1\)"):
    snt.nets.VectorQuantizerEMA(4, 6, commitment_cost=0.25, decay=decay)


@pytest.mark.parametrize("argument,value", [
    ("embedding_dim", 0), ("num_embeddings", -2), ("num_embeddings", 2.)])
@pytest.mark.parametrize("cls,kwargs", [
    (snt.nets.VectorQuantizer, {}), (snt.nets.VectorQuantizerEMA,
                                     {"decay": 0.9})])
def test_bad_sizes(cls, kwargs, argument, value):
  arguments = {"embedding_dim": 4, "num_embeddings": 6, **{argument: value}}
  with pytest.raises(ValueError, match=f"{cls.__name__}: {argument} must be a "
                     f"positive int, got {value!r}"):
    cls(commitment_cost=0.25, **arguments, **kwargs)


def test_bad_commitment_cost_epsilon_and_dtype():
  with pytest.raises(ValueError, match="VectorQuantizer: commitment_cost must "
                     "be a non-negative number, got -1"):
    snt.nets.VectorQuantizer(4, 6, commitment_cost=-1)
  with pytest.raises(ValueError, match="VectorQuantizerEMA: epsilon must be a "
                     "non-negative number"):
    snt.nets.VectorQuantizerEMA(4, 6, 0.25, 0.9, epsilon=-1e-5)
  with pytest.raises(ValueError, match="VectorQuantizer: dtype must be a "
                     "floating-point dtype, got tf.int32"):
    snt.nets.VectorQuantizer(4, 6, 0.25, dtype=tf.int32)


def test_bad_is_training():
  vq = snt.nets.VectorQuantizerEMA(4, 6, 0.25, 0.9, name="codes")
  with pytest.raises(TypeError, match="VectorQuantizerEMA 'codes': "
                     "is_training must be a bool"):
    vq(tf.zeros([2, 4]), is_training="False")
