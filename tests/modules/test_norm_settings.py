"""Tests for sonnet_like/modules/norm_settings.py: one wording per rule."""

import pytest
import tensorflow as tf

import sonnet_like as snt

_NORMS = {
    "BatchNorm": lambda **kw: snt.BatchNorm(**kw),
    "LayerNorm": lambda **kw: snt.LayerNorm(-1, **kw),
    "InstanceNorm": lambda **kw: snt.InstanceNorm(**kw),
    "GroupNorm": lambda **kw: snt.GroupNorm(2, **kw),
    "CrossReplicaBatchNorm": lambda **kw: snt.distribute.CrossReplicaBatchNorm(
        moving_mean=snt.ExponentialMovingAverage(0.9),
        moving_variance=snt.ExponentialMovingAverage(0.9), **kw),
}


@pytest.mark.parametrize("name", sorted(_NORMS))
@pytest.mark.parametrize("kwargs,message", [
    (dict(eps=-1.), "eps must be a non-negative number, got -1.0."),
    (dict(eps="1"), "eps must be a non-negative number, got '1'."),
    (dict(create_scale=False, scale_init=snt.initializers.Ones()),
     "Cannot set `scale_init` if `create_scale=False`, got scale_init="),
    (dict(create_offset=False, offset_init=snt.initializers.Zeros()),
     "Cannot set `offset_init` if `create_offset=False`, got offset_init="),
    (dict(data_format="HWNX"), "Unable to extract channel information from "
     "'HWNX'"),
])
def test_every_norm_checks_its_settings_alike(name, kwargs, message):
  settings = dict(create_scale=True, create_offset=True)
  settings.update(kwargs)
  with pytest.raises(ValueError) as error:
    _NORMS[name](**settings)
  assert str(error.value).startswith(f"{name}: ")
  assert message in str(error.value)


@pytest.mark.parametrize("name", sorted(_NORMS))
@pytest.mark.parametrize("kind", ["scale", "offset"])
def test_every_norm_refuses_a_call_time_override_alike(name, kind):
  module = _NORMS[name](create_scale=True, create_offset=True)
  kwargs = {"is_training": False} if "Batch" in name else {}
  with pytest.raises(ValueError, match=rf"learns its own {kind}: Cannot pass "
                     rf"`{kind}` at call time if `create_{kind}=True`\."):
    module(tf.ones([2, 4]), **{kind: tf.ones([4])}, **kwargs)


def test_eps_may_be_a_tensor():
  for make in _NORMS.values():
    make(create_scale=True, create_offset=True, eps=tf.constant(1e-3))


@pytest.mark.parametrize("cls", [snt.BaseBatchNorm, snt.BatchNorm,
                                 snt.LayerNorm, snt.GroupNorm])
def test_constructor_docstrings_describe_every_argument_once(cls):
  import inspect  # pylint: disable=g-import-not-at-top
  from sonnet_like.modules import norm_settings  # pylint: disable=g-import-not-at-top
  doc = inspect.getdoc(cls.__init__)
  names = [n for n in inspect.signature(cls.__init__).parameters
           if n != "self"]
  documented = [line.split(":")[0].strip() for line in doc.splitlines()
                if line.startswith("  ") and not line.startswith("    ")]
  assert documented == names
  for name, text in norm_settings.ARGUMENTS.items():
    assert " ".join(text.split()) in " ".join(doc.split()), name
