"""Tests for snt.pad: the padding functions and `create`."""

import pytest
import sonnet
import tensorflow as tf

import sonnet_like as snt

_FUNCTIONS = ["valid", "same", "full", "causal", "reverse_causal"]


def test_public_names():
  assert sorted(snt.pad.__all__) == sorted(_FUNCTIONS + ["create"])


@pytest.mark.parametrize("k, expected", [
    (1, {"valid": [0, 0], "same": [0, 0], "full": [0, 0], "causal": [0, 0],
         "reverse_causal": [0, 0]}),
    (4, {"valid": [0, 0], "same": [1, 2], "full": [3, 3], "causal": [3, 0],
         "reverse_causal": [0, 3]}),
    (5, {"valid": [0, 0], "same": [2, 2], "full": [4, 4], "causal": [4, 0],
         "reverse_causal": [0, 4]}),
])
def test_function_values(k, expected):
  for name, pair in expected.items():
    assert getattr(snt.pad, name)(k) == pair, name


@pytest.mark.parametrize("name", _FUNCTIONS)
@pytest.mark.parametrize("k", range(1, 8))
def test_functions_match_sonnet(name, k):
  assert getattr(snt.pad, name)(k) == getattr(sonnet.pad, name)(k)


@pytest.mark.parametrize("name", ["same", "causal", "reverse_causal"])
@pytest.mark.parametrize("k", [1, 2, 3, 6])
def test_same_size_at_stride_one(name, k):
  """These paddings keep the length of a stride-1 VALID convolution."""
  before, after = getattr(snt.pad, name)(k)
  x = tf.ones([1, 9, 1])
  padded = tf.pad(x, [[0, 0], [before, after], [0, 0]])
  y = tf.nn.convolution(padded, tf.ones([k, 1, 1]), padding="VALID")
  assert y.shape[1] == 9


def test_causal_output_ignores_the_future():
  k = 3
  x = tf.random.normal([1, 10, 1])
  pads = snt.pad.create(snt.pad.causal, k, 1, 1, -1)
  w = tf.random.normal([k, 1, 1])
  y = tf.nn.convolution(tf.pad(x, pads), w, padding="VALID")
  changed = tf.concat([x[:, :6], x[:, 6:] + 1.], axis=1)
  y2 = tf.nn.convolution(tf.pad(changed, pads), w, padding="VALID")
  tf.debugging.assert_equal(y[:, :6], y2[:, :6])
  assert not bool(tf.reduce_all(y[:, 6:] == y2[:, 6:]))


@pytest.mark.parametrize("kwargs", [
    dict(padding=snt.pad.causal, kernel=3, rate=2, n=1, channel_index=-1),
    dict(padding=snt.pad.same, kernel=[3, 4], rate=1, n=2, channel_index=-1),
    dict(padding=[snt.pad.full, snt.pad.valid], kernel=3, rate=[1, 3], n=2,
         channel_index=1),
    dict(padding=[snt.pad.same], kernel=[2], rate=[2], n=3, channel_index=1),
    dict(padding=(snt.pad.causal, snt.pad.same, snt.pad.reverse_causal),
         kernel=(1, 2, 3), rate=2, n=3, channel_index=-1),
])
def test_create_matches_sonnet(kwargs):
  ours = snt.pad.create(**kwargs)
  theirs = sonnet.pad.create(**{
      k: (tuple(getattr(sonnet.pad, f.__name__) for f in v) if
          isinstance(v, (list, tuple)) and callable(v[0]) else
          getattr(sonnet.pad, v.__name__) if callable(v) else v)
      for k, v in kwargs.items()})
  assert ours == [list(p) for p in theirs]


def test_create_layouts():
  last = snt.pad.create(snt.pad.causal, 3, 1, 2, -1)
  first = snt.pad.create(snt.pad.causal, 3, 1, 2, 1)
  assert last == [[0, 0], [2, 0], [2, 0], [0, 0]]
  assert first == [[0, 0], [0, 0], [2, 0], [2, 0]]


def test_create_uses_the_effective_kernel_size():
  seen = []
  snt.pad.create(lambda k: seen.append(k) or [0, 0], kernel=(3, 2),
                 rate=(2, 4), n=2, channel_index=-1)
  assert seen == [5, 5]


@pytest.mark.parametrize("kwargs, match", [
    (dict(kernel=(3, 3, 3)), "kernel must be a scalar or a sequence of 2"),
    (dict(rate=(1, 2, 3)), "rate must be a scalar or a sequence of 2"),
    (dict(padding=[snt.pad.same] * 3),
     "padding must be a scalar or a sequence of 2"),
    (dict(channel_index=0), "channel_index must be 1 or -1, got 0"),
])
def test_create_errors(kwargs, match):
  arguments = dict(padding=snt.pad.same, kernel=3, rate=1, n=2,
                   channel_index=-1)
  arguments.update(kwargs)
  with pytest.raises(ValueError, match=match):
    snt.pad.create(**arguments)
