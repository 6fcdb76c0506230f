"""GeneratorEMA: the average's formula, swapping in and out, checkpointing."""

import numpy as np
import tensorflow as tf

from sonnet_like.scenarios.gan import ema as gan_ema


def test_update_follows_the_formula_from_the_initial_weights():
  w = tf.Variable([[1.0, -2.0]])
  b = tf.Variable([0.5])
  ema = gan_ema.GeneratorEMA([w, b], decay=0.75)
  expected = [w.numpy(), b.numpy()]
  for values in ([[3.0, 0.0]], [0.0]), ([[-1.0, 4.0]], [2.0]):
    w.assign(values[0])
    b.assign(values[1])
    ema.update()
    expected = [0.75 * e + 0.25 * np.asarray(v, np.float32)
                for e, v in zip(expected, values)]
  for average, value in zip(ema.averages, expected):
    np.testing.assert_allclose(average.numpy(), value, rtol=1e-6)
  assert not any(a.trainable for a in ema.averages)


def test_swapped_in_restores_the_exact_weights_even_after_an_error():
  w = tf.Variable([0.1, 0.2, 0.3])
  ema = gan_ema.GeneratorEMA([w], decay=0.5)
  w.assign([1.0 / 3.0, 2.0, 7.0])
  ema.update()
  before = w.numpy().copy()
  try:
    with ema.swapped_in():
      np.testing.assert_array_equal(w.numpy(), ema.averages[0].numpy())
      raise KeyError("inside")
  except KeyError:
    pass
  np.testing.assert_array_equal(w.numpy(), before)


def test_averages_are_checkpointed(tmp_path):
  w = tf.Variable([1.0])
  ema = gan_ema.GeneratorEMA([w], decay=0.5)
  w.assign([3.0])
  ema.update()
  path = tf.train.Checkpoint(ema=ema).save(str(tmp_path / "ckpt"))
  fresh = gan_ema.GeneratorEMA([tf.Variable([1.0])], decay=0.5)
  tf.train.Checkpoint(ema=fresh).restore(path).assert_existing_objects_matched()
  assert float(fresh.averages[0][0]) == 2.0
