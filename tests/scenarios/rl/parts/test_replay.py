"""Tests for the replay buffer: ring order, sampling, checkpoints, errors."""

import numpy as np
import pytest
import tensorflow as tf

from sonnet_like.scenarios.rl.parts import replay

OBS = tf.TensorSpec([2], tf.float32)
ACT = tf.TensorSpec([], tf.int32)


def _batch(start, num_envs=3):
  ids = np.arange(start, start + num_envs)
  return replay.Transition(
      observation=tf.constant(np.stack([ids, -ids], 1), tf.float32),
      action=tf.constant(ids, tf.int32),
      reward=tf.constant(ids * 0.5, tf.float32),
      next_observation=tf.constant(np.stack([ids + 1, -ids], 1), tf.float32),
      terminated=tf.constant(ids % 2 == 0))


def test_add_wraps_around_and_overwrites_the_oldest():
  buffer = replay.ReplayBuffer(7, OBS, ACT)
  buffer.add(_batch(0))
  buffer.add(_batch(3))
  assert int(buffer.size) == 6 and int(buffer.position) == 6
  np.testing.assert_array_equal(buffer.storage.action.numpy()[:6],
                                np.arange(6))
  buffer.add(_batch(6))  # Ids 6, 7, 8 go to slots 6, 0, 1.
  assert int(buffer.size) == 7 and int(buffer.position) == 2
  np.testing.assert_array_equal(buffer.storage.action.numpy(),
                                [7, 8, 2, 3, 4, 5, 6])
  np.testing.assert_array_equal(buffer.storage.observation.numpy()[:, 0],
                                [7, 8, 2, 3, 4, 5, 6])
  np.testing.assert_array_equal(buffer.storage.next_observation.numpy()[:, 0],
                                [8, 9, 3, 4, 5, 6, 7])
  np.testing.assert_allclose(buffer.storage.reward.numpy(),
                             np.array([7, 8, 2, 3, 4, 5, 6]) * 0.5)
  np.testing.assert_array_equal(buffer.storage.terminated.numpy(),
                                np.array([7, 8, 2, 3, 4, 5, 6]) % 2 == 0)


def test_add_inside_a_tf_function_with_a_capacity_of_num_envs():
  buffer = replay.ReplayBuffer(3, OBS, ACT)
  add = tf.function(buffer.add)
  for start in (0, 3, 6):
    add(_batch(start))
  np.testing.assert_array_equal(buffer.storage.action.numpy(), [6, 7, 8])
  assert int(buffer.position) == 0 and int(buffer.size) == 3


def test_sample_draws_only_stored_transitions_and_keeps_them_whole():
  buffer = replay.ReplayBuffer(50, OBS, ACT)
  buffer.add(_batch(10, num_envs=4))
  batch = buffer.sample(256, tf.random.Generator.from_seed(1))
  ids = batch.action.numpy()
  assert set(ids) == {10, 11, 12, 13}
  np.testing.assert_array_equal(batch.observation.numpy()[:, 0], ids)
  np.testing.assert_array_equal(batch.next_observation.numpy()[:, 0], ids + 1)
  np.testing.assert_allclose(batch.reward.numpy(), ids * 0.5)
  np.testing.assert_array_equal(batch.terminated.numpy(), ids % 2 == 0)


def test_sample_is_uniform_over_the_stored_transitions():
  buffer = replay.ReplayBuffer(16, OBS, ACT)
  for start in range(0, 12, 3):
    buffer.add(_batch(start))
  sample = tf.function(lambda rng: buffer.sample(4096, rng).action)
  rng = tf.random.Generator.from_seed(3)
  ids = np.concatenate([sample(rng).numpy() for _ in range(30)])
  counts = np.bincount(ids, minlength=16)
  assert counts[12:].sum() == 0
  expected = ids.size / 12
  # Binomial standard deviation is ~sqrt(expected) ~ 100; allow 5 of them.
  np.testing.assert_allclose(counts[:12], expected, atol=5 * expected ** 0.5)


def test_restored_buffer_holds_and_samples_the_same(tmp_path):
  buffer = replay.ReplayBuffer(5, OBS, ACT)
  rng = tf.random.Generator.from_seed(7)
  buffer.add(_batch(0))
  buffer.add(_batch(3))
  rng.normal([3])
  path = tf.train.Checkpoint(buffer=buffer, rng=rng).save(
      str(tmp_path / "ckpt"))
  expected = buffer.sample(20, rng)

  other = replay.ReplayBuffer(5, OBS, ACT)
  other_rng = tf.random.Generator.from_seed(99)
  tf.train.Checkpoint(buffer=other, rng=other_rng).restore(path)
  assert int(other.position) == 1 and int(other.size) == 5
  for a, b in zip(buffer.storage, other.storage):
    np.testing.assert_array_equal(a.numpy(), b.numpy())
  for a, b in zip(expected, other.sample(20, other_rng)):
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_errors_name_the_buffer():
  with pytest.raises(ValueError, match="ReplayBuffer: capacity must be"):
    replay.ReplayBuffer(0, OBS, ACT)
  with pytest.raises(TypeError, match="ReplayBuffer: observation_spec"):
    replay.ReplayBuffer(4, [2], ACT)
  buffer = replay.ReplayBuffer(2, OBS, ACT)
  with pytest.raises(ValueError, match=r"ReplayBuffer: capacity \(2\) must be "
                     "at least num_envs, got a batch of 3"):
    buffer.add(_batch(0))
  small = replay.ReplayBuffer(4, OBS, ACT)
  with pytest.raises(ValueError, match="ReplayBuffer: sample called on an "
                     "empty buffer"):
    small.sample(2, tf.random.Generator.from_seed(0))
  good = _batch(0)
  with pytest.raises(ValueError, match=r"ReplayBuffer: observation must have "
                     r"shape \[num_envs, 2\] \(float32\), got shape \[3, 3\]"):
    small.add(good._replace(observation=tf.zeros([3, 3])))
  with pytest.raises(ValueError, match=r"ReplayBuffer: action must have shape "
                     r"\[num_envs\] \(int32\), got shape \[3\] \(int64\)"):
    small.add(good._replace(action=tf.zeros([3], tf.int64)))
  with pytest.raises(ValueError, match="ReplayBuffer: reward must have"):
    small.add(good._replace(reward=tf.zeros([2])))
  with pytest.raises(TypeError, match="ReplayBuffer: add takes a Transition"):
    small.add(tuple(good))
  with pytest.raises(ValueError, match="ReplayBuffer: batch_size must be"):
    buffer.sample(0, tf.random.Generator.from_seed(0))
