"""Every module in the descriptor table under every execution mode."""

import copy
import inspect

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from tests import descriptors

_ROWS = descriptors.DESCRIPTORS
_IDS = [d.name for d in _ROWS]


def _example(d: descriptors.Descriptor, seed: int = 0) -> tf.Tensor:
  x = np.random.default_rng(seed).normal(size=d.shape)
  return tf.constant(x, dtype=d.dtype)


def _built(d: descriptors.Descriptor):
  tf.random.set_seed(0)
  module = d.create()
  x = _example(d)
  return module, x, d.call(module, x)


def _spec(d: descriptors.Descriptor, batch=None) -> tf.TensorSpec:
  return tf.TensorSpec((batch,) + tuple(d.shape[1:]), d.dtype)


def _assert_close(a, b, **kw):
  tf.nest.map_structure(
      lambda x, y: np.testing.assert_allclose(np.asarray(x), np.asarray(y),
                                              **kw), a, b)


@pytest.mark.parametrize("d", _ROWS, ids=_IDS)
def test_tf_function_matches_eager(d):
  module, x, eager = _built(d)
  compiled = tf.function(lambda x: d.call(module, x))
  _assert_close(compiled(x), eager, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("d", _ROWS, ids=_IDS)
def test_first_call_inside_tf_function(d):
  tf.random.set_seed(0)
  module = d.create()
  x = _example(d)
  out = tf.function(lambda x: d.call(module, x))(x)
  _assert_close(d.call(module, x), out, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("d", _ROWS, ids=_IDS)
def test_unknown_batch_size(d):
  module, x, eager = _built(d)
  compiled = tf.function(lambda x: d.call(module, x),
                         input_signature=[_spec(d)])
  _assert_close(compiled(x), eager, rtol=1e-5, atol=1e-6)
  smaller = x[:1]
  _assert_close(compiled(smaller), d.call(module, smaller), rtol=1e-5,
                atol=1e-6)


@pytest.mark.parametrize("d", [d for d in _ROWS if d.xla],
                         ids=[d.name for d in _ROWS if d.xla])
def test_xla(d):
  module, x, eager = _built(d)
  compiled = tf.function(lambda x: d.call(module, x), jit_compile=True)
  _assert_close(compiled(x), eager, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("d", _ROWS, ids=_IDS)
def test_checkpoint_restores_before_first_call(d, tmp_path):
  module, x, expected = _built(d)
  path = tf.train.Checkpoint(module=module).save(str(tmp_path / "ckpt"))
  tf.random.set_seed(1)  # A different initialisation, overwritten on restore.
  fresh = d.create()
  status = tf.train.Checkpoint(module=fresh).restore(path)
  _assert_close(d.call(fresh, x), expected, rtol=1e-6, atol=1e-6)
  status.assert_existing_objects_matched()


@pytest.mark.parametrize("d", _ROWS, ids=_IDS)
def test_saved_model_round_trip(d, tmp_path):
  module, x, expected = _built(d)
  holder = tf.Module()
  holder.module = module
  holder.call = tf.function(lambda x: d.call(module, x),
                            input_signature=[_spec(d)])
  tf.saved_model.save(holder, str(tmp_path))
  loaded = tf.saved_model.load(str(tmp_path))
  _assert_close(loaded.call(x), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("d", _ROWS, ids=_IDS)
def test_deepcopy(d):
  module, x, expected = _built(d)
  clone = copy.deepcopy(module)
  _assert_close(d.call(clone, x), expected, rtol=1e-6, atol=1e-6)
  for v in tf.Module.variables.fget(clone):  # () for stateless modules.
    v.assign(tf.zeros_like(v))
  _assert_close(d.call(module, x), expected, rtol=1e-6, atol=1e-6)


def _public_module_classes():
  """(qualified name, class) for every Module subclass exported publicly."""
  found = {}
  namespaces = [("snt", snt)] + [
      (f"snt.{name}", getattr(snt, name)) for name in snt.__all__
      if inspect.ismodule(getattr(snt, name))]
  for prefix, namespace in namespaces:
    for name in getattr(namespace, "__all__", ()):
      obj = getattr(namespace, name)
      if inspect.isclass(obj) and issubclass(obj, snt.Module):
        found.setdefault(obj, f"{prefix}.{name}")
  return {qualified: cls for cls, qualified in found.items()}


def test_table_covers_every_public_module():
  described = set()
  for d in _ROWS:
    described.add(type(d.create()))
  missing = []
  for qualified, cls in sorted(_public_module_classes().items()):
    if cls not in described and cls.__name__ not in descriptors.NOT_DESCRIBED:
      missing.append(qualified)
  assert not missing, (
      f"Public modules missing from tests/descriptors.py: {missing}")
