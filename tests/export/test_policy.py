"""snt.export.save_policy: greedy and seeded actions like rl.policies."""

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.scenarios.rl.parts import policies
from tests import export_common


def _load(path):
  loaded = tf.saved_model.load(path)
  return loaded.signatures["serving_default"], loaded.signatures.get("sample")


def _sample(signature, observation, seed):
  return signature(observation=tf.constant(observation),
                   seed=tf.constant(seed, tf.int64))["action"].numpy()


def test_discrete_greedy_and_sampled_actions(tmp_path):
  actor = snt.nets.MLP([8, 3], name="actor")
  path = snt.export.save_policy(actor, tmp_path / "p", tf.TensorSpec([4]),
                                snt.envs.Discrete(3))
  greedy, sample = _load(path)
  observations = export_common.normal((9, 4))
  policy = policies.Policy("test", snt.envs.Discrete(3))
  np.testing.assert_array_equal(
      greedy(observation=tf.constant(observations))["action"],
      policy.greedy(actor(observations)))
  np.testing.assert_array_equal(_sample(sample, observations, 1),
                                _sample(sample, observations, 1))
  # Sampling follows the softmax of the logits.
  one = np.repeat(observations[:1], 4000, axis=0)
  counts = np.bincount(_sample(sample, one, 7), minlength=3) / 4000
  np.testing.assert_allclose(counts, tf.nn.softmax(actor(one[:1]))[0],
                             atol=0.03)


def test_box_greedy_and_sampled_actions(tmp_path):
  actor = snt.Linear(2, name="actor")
  space = snt.envs.Box(low=[-1.0, -0.5], high=[1.0, 0.5])
  log_std = tf.Variable([-1.0, -2.0])
  path = snt.export.save_policy(actor, tmp_path / "p", tf.TensorSpec([3]),
                                space, log_std=log_std)
  greedy, sample = _load(path)
  observations = 3.0 * export_common.normal((5, 3))
  policy = policies.Policy("test", space)
  np.testing.assert_array_equal(
      greedy(observation=tf.constant(observations))["action"],
      policy.greedy(actor(observations)))
  one = np.zeros([4000, 3], np.float32)  # The mean is the bias: 0.
  actions = _sample(sample, one, 3)
  np.testing.assert_allclose(actions.std(axis=0), np.exp([-1.0, -2.0]),
                             rtol=0.05)
  assert np.all(np.abs(actions) <= [1.0, 0.5])


def test_greedy_only_and_preprocessing(tmp_path):
  q_network = snt.Linear(2, name="q")
  scale = snt.Linear(4, with_bias=False, name="normalizer")
  path = snt.export.save_policy(q_network, tmp_path / "p",
                                tf.TensorSpec([4]), snt.envs.Discrete(2),
                                sampling=False, preprocess=scale)
  greedy, sample = _load(path)
  assert sample is None
  observations = export_common.normal((6, 4))
  np.testing.assert_array_equal(
      greedy(observation=tf.constant(observations))["action"],
      tf.argmax(q_network(scale(observations)), -1, output_type=tf.int32))


def test_errors(tmp_path):
  spec = tf.TensorSpec([4])
  with pytest.raises(TypeError, match="action_space must have num_actions"):
    snt.export.save_policy(tf.identity, tmp_path / "p", spec, "left-right")
  with pytest.raises(ValueError, match="sampling box actions needs log_std"):
    snt.export.save_policy(tf.identity, tmp_path / "p", spec,
                           snt.envs.Box([-1.0], [1.0]))
  with pytest.raises(ValueError, match=r"the actor must output \[batch, 3\] "
                     r"logits, got shape \(None, 4\)"):
    snt.export.save_policy(tf.identity, tmp_path / "p", spec,
                           snt.envs.Discrete(3))
  with pytest.raises(TypeError, match="observation_spec must be a "
                     "tf.TensorSpec of one observation"):
    snt.export.save_policy(tf.identity, tmp_path / "p", [4],
                           snt.envs.Discrete(4))
