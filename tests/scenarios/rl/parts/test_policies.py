"""Policies: distributions, sampling, clipping and greedy actions."""

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_probability as tfp

from sonnet_like import envs
from sonnet_like.scenarios.rl.parts import policies

tfd = tfp.distributions
BOX = envs.Box(np.array([-1.0, 0.0]), np.array([1.0, 2.0]))


def test_discrete_is_categorical_over_the_logits():
  policy = policies.Policy("PPO", envs.Discrete(3))
  logits = tf.constant([[0.0, 1.0, 2.0], [3.0, 0.0, -1.0]])
  distribution = policy.distribution(logits)
  assert isinstance(distribution, tfd.Categorical)
  np.testing.assert_allclose(
      distribution.log_prob([2, 0]).numpy(),
      tf.nn.log_softmax(logits).numpy()[[0, 1], [2, 0]], rtol=1e-6)
  assert policy.trainable_variables == ()
  np.testing.assert_array_equal(policy.greedy(logits).numpy(), [2, 0])


def test_discrete_samples_follow_the_probabilities():
  policy = policies.Policy("PPO", envs.Discrete(3))
  logits = tf.math.log(tf.constant([[0.2, 0.5, 0.3]] * 20_000))
  actions = policy.sample(logits, tf.random.Generator.from_seed(0))
  assert actions.dtype == tf.int32
  frequencies = np.bincount(actions.numpy(), minlength=3) / 20_000
  np.testing.assert_allclose(frequencies, [0.2, 0.5, 0.3], atol=0.015)


def test_sampling_draws_only_from_the_generator():
  policy = policies.Policy("PPO", envs.Discrete(4))
  logits = tf.zeros([64, 4])
  first = policy.sample(logits, tf.random.Generator.from_seed(7))
  tf.random.set_seed(123)  # The global seed must not matter.
  again = policy.sample(logits, tf.random.Generator.from_seed(7))
  other = policy.sample(logits, tf.random.Generator.from_seed(8))
  np.testing.assert_array_equal(first.numpy(), again.numpy())
  assert not np.array_equal(first.numpy(), other.numpy())


def test_box_is_a_normal_with_a_trainable_state_independent_log_std():
  policy = policies.Policy("PPO", BOX, log_std_init=-0.5)
  assert [v.name for v in policy.trainable_variables] == ["log_std:0"]
  means = tf.constant([[0.1, 0.2], [0.3, 0.4]])
  distribution = policy.distribution(means)
  assert distribution.event_shape == [2]
  actions = tf.constant([[0.0, 1.0], [2.0, 3.0]])
  scale = np.float32(np.exp(-0.5))
  want = tfd.Normal(means, scale).log_prob(actions).numpy().sum(1)
  np.testing.assert_allclose(distribution.log_prob(actions).numpy(), want,
                             rtol=1e-5)
  with tf.GradientTape() as tape:
    entropy = tf.reduce_sum(policy.distribution(means).entropy())
  assert tape.gradient(entropy, policy.log_std) is not None


def test_box_samples_are_unclipped_and_clipped_for_the_environment():
  policy = policies.Policy("PPO", BOX, log_std_init=1.0)
  means = tf.zeros([5_000, 2])
  actions = policy.sample(means, tf.random.Generator.from_seed(0))
  np.testing.assert_allclose(actions.numpy().std(0), [np.e, np.e], rtol=0.05)
  assert (actions.numpy() < -1).any() and (actions.numpy() > 2).any()
  clipped = policy.to_env(actions).numpy()
  assert clipped[:, 0].min() == -1 and clipped[:, 0].max() == 1
  assert clipped[:, 1].min() == 0 and clipped[:, 1].max() == 2
  np.testing.assert_array_equal(
      policy.greedy(tf.constant([[5.0, -5.0], [0.5, 1.5]])).numpy(),
      [[1.0, 0.0], [0.5, 1.5]])


def test_actor_outputs_that_do_not_fit_are_refused():
  policy = policies.Policy("PPO", envs.Discrete(2))
  with pytest.raises(ValueError, match=r"PPO: the actor must output \[batch, "
                     r"2\] logits for Discrete\(2\), got \[batch, 3\]"):
    policy.distribution(tf.zeros([4, 3]))
  with pytest.raises(ValueError, match=r"got \[batch\]"):
    policy.greedy(tf.zeros([4]))
  box = policies.Policy("REINFORCE", BOX)
  with pytest.raises(ValueError, match=r"REINFORCE: the actor must output "
                     r"\[batch, 2\] means for Box\(shape=\(2,\)\), got "
                     r"\[batch, 4\]"):
    box.sample(tf.zeros([1, 4]), tf.random.Generator.from_seed(0))


def test_bad_action_spaces_and_value_outputs_are_refused():
  with pytest.raises(ValueError, match="Box action spaces must have one axis"):
    policies.Policy("PPO", envs.Box(np.zeros((2, 2)), np.ones((2, 2))))
  with pytest.raises(TypeError, match="must be Discrete or Box"):
    policies.Policy("PPO", "discrete")
  np.testing.assert_array_equal(
      policies.values_of("PPO", "critic", tf.ones([3, 1])).numpy(), [1, 1, 1])
  with pytest.raises(ValueError, match=r"PPO: the critic must output \[batch\] "
                     r"or \[batch, 1\] values, got \[batch, 2\]"):
    policies.values_of("PPO", "critic", tf.ones([3, 2]))


def test_noise_is_independent_of_a_generator_seeded_next_to_it():
  # Generator.from_seed(s) starts at counter s: seeds 0 and 1 give the same
  # stream shifted by four numbers. An environment seeded 0 and a scenario
  # seeded 1 must still not share noise.
  policy = policies.Policy("PPO", envs.Box(np.array([-9.0]), np.array([9.0])))
  environment, scenario = (tf.random.Generator.from_seed(0),
                           tf.random.Generator.from_seed(1))
  drawn = environment.normal([4_000])
  noise = policy.sample(tf.zeros([4_000, 1]), scenario)[:, 0]
  for shift in range(8):
    correlation = np.corrcoef(drawn[shift:], noise[:4_000 - shift])[0, 1]
    assert abs(correlation) < 0.1, shift


# ---- State-dependent log-std, tanh squashing ----

def test_state_dependent_std_comes_from_the_actor_and_is_clipped():
  policy = policies.Policy("SAC", BOX, log_std_init=0.5,
                           state_dependent_std=True)
  assert policy.size == 4 and policy.log_std is None
  assert policy.trainable_variables == ()
  outputs = tf.constant([[0.1, 0.2, -1.0, 0.0], [0.0, 0.0, -30.0, 30.0]])
  mean, log_std = policy.mean_and_log_std(outputs)
  np.testing.assert_allclose(mean.numpy(), [[0.1, 0.2], [0.0, 0.0]])
  np.testing.assert_allclose(log_std.numpy(), [
      [-0.5, 0.5], [policies.LOG_STD_MIN, policies.LOG_STD_MAX]])
  entropy = policy.entropy(outputs).numpy()
  want = tfd.Normal(mean, tf.exp(log_std)).entropy().numpy().sum(1)
  np.testing.assert_allclose(entropy, want, rtol=1e-6)
  with tf.GradientTape() as tape:
    tape.watch(outputs)
    total = tf.reduce_sum(policy.entropy(outputs))
  np.testing.assert_allclose(tape.gradient(total, outputs).numpy()[0],
                             [0, 0, 1, 1])
  with pytest.raises(ValueError, match=r"SAC: the actor must output \[batch, "
                     r"4\] means then log standard deviations"):
    policy.greedy(tf.zeros([1, 2]))


def test_squashed_actions_stay_in_the_bounds_and_greedy_is_the_mode():
  policy = policies.Policy("SAC", BOX, squash=True, log_std_init=2.0)
  actions = policy.to_env(policy.sample(tf.zeros([5_000, 2]),
                                        tf.random.Generator.from_seed(0)))
  actions = actions.numpy()
  assert np.all(actions[:, 0] >= -1) and np.all(actions[:, 0] <= 1)
  assert np.all(actions[:, 1] >= 0) and np.all(actions[:, 1] <= 2)
  assert actions[:, 1].min() < 0.05 and actions[:, 1].max() > 1.95
  np.testing.assert_allclose(
      policy.greedy(tf.constant([[0.0, 0.0], [50.0, -50.0]])).numpy(),
      [[0.0, 1.0], [1.0, 0.0]])


def test_squashed_log_prob_is_the_density_of_the_environment_action():
  policy = policies.Policy("SAC", BOX, state_dependent_std=True, squash=True)
  outputs = tf.constant([[0.3, -0.4, -0.5, 0.2]] * 3)
  raw = tf.constant([[0.1, 0.2], [-1.5, 0.7], [2.0, -2.5]])
  low, high = BOX.low, BOX.high
  mean, log_std = policy.mean_and_log_std(outputs)
  squashed = tfd.TransformedDistribution(
      tfd.Normal(mean, tf.exp(log_std)), tfp.bijectors.Chain([
          tfp.bijectors.Shift((low + high) / 2),
          tfp.bijectors.Scale((high - low) / 2), tfp.bijectors.Tanh()]))
  want = tf.reduce_sum(squashed.log_prob(policy.to_env(raw)), -1).numpy()
  np.testing.assert_allclose(policy.log_prob(outputs, raw).numpy(), want,
                             rtol=1e-4)
  # Stable far out, where tanh(u) rounds to +-1.
  far = policy.log_prob(outputs, tf.constant([[40.0, -40.0]] * 3)).numpy()
  assert np.all(np.isfinite(far))
  # The entropy estimate is -log_prob at the given actions.
  np.testing.assert_allclose(policy.entropy(outputs, raw).numpy(), -want,
                             rtol=1e-4)
  with pytest.raises(ValueError, match="SAC: a squashed policy's entropy"):
    policy.entropy(outputs)


def test_reparameterised_samples_carry_gradients_to_the_actor_outputs():
  policy = policies.Policy("SAC", BOX, state_dependent_std=True, squash=True)
  outputs = tf.Variable(tf.zeros([8, 4]))
  with tf.GradientTape() as tape:
    raw = policy.sample(outputs, tf.random.Generator.from_seed(1))
    loss = tf.reduce_sum(policy.to_env(raw)) + tf.reduce_sum(
        policy.log_prob(outputs, raw))
  grad = tape.gradient(loss, outputs).numpy()
  assert np.all(np.abs(grad[:, :2]) > 0) and np.all(np.abs(grad[:, 2:]) > 0)


def test_options_are_for_box_actions_and_decide_what_exports_sample():
  with pytest.raises(ValueError, match="PPO: state_dependent_std and squash "
                     r"are for Box actions, got Discrete\(2\)"):
    policies.Policy("PPO", envs.Discrete(2), squash=True)
  with pytest.raises(ValueError, match="PPO: squash must be a bool"):
    policies.Policy("PPO", BOX, squash=1)
  assert policies.Policy("PPO", BOX).exports_sampling
  assert policies.Policy("PPO", envs.Discrete(2)).exports_sampling
  assert not policies.Policy("PPO", BOX, squash=True).exports_sampling
  assert not policies.Policy("PPO", BOX,
                             state_dependent_std=True).exports_sampling
  greedy = policies.GreedyActor(lambda obs: obs * 100.0,
                                policies.Policy("PPO", BOX, squash=True))
  np.testing.assert_allclose(greedy(tf.constant([[1.0, -1.0]])).numpy(),
                             [[1.0, 0.0]])


# ---- gSDE: noise linear in the features, drawn again every k steps ----

def _sde_policy(freq=3, batch=2, log_std_init=0.0):
  # Features of size 3, two actions, `batch` environments.
  return policies.Policy("PPO", BOX, log_std_init, sde_sample_freq=freq,
                         sde_features=3, sde_batch=batch)


def test_sde_variables_shapes_and_distribution():
  policy = _sde_policy(log_std_init=-1.0)
  assert policy.uses_sde and not policy.exports_sampling
  assert policy.size == 2 and policy.log_std.shape == [3, 2]
  assert [v.name for v in policy.trainable_variables] == ["log_std:0"]
  assert policy.sde_noise.shape == [2, 3, 2]
  means = tf.constant([[0.5, 1.0], [0.0, -1.0]])
  features = tf.constant([[1.0, 2.0, 0.0], [0.0, 0.0, 0.0]])
  mean, log_std = policy.mean_and_log_std(means, features)
  np.testing.assert_allclose(mean.numpy(), means.numpy())
  # Variance sum_j f_j^2 sigma^2 (+ epsilon): 5 e^-2 per action, then eps.
  want = 0.5 * np.log([[5 * np.exp(-2.0)] * 2, [policies.SDE_EPSILON] * 2])
  np.testing.assert_allclose(log_std.numpy(), want, rtol=1e-5)
  rng = tf.random.Generator.from_seed(0)
  action, log_prob, env_action = policy.explore(means, rng, features)
  assert action.shape == [2, 2] and log_prob.shape == [2]
  want_log_prob = tfd.Independent(tfd.Normal(mean, tf.exp(log_std)), 1)
  np.testing.assert_allclose(log_prob.numpy(),
                             want_log_prob.log_prob(action).numpy(),
                             rtol=1e-5)
  np.testing.assert_array_equal(env_action.numpy(),
                                policy.to_env(action).numpy())
  # Features of zero: no noise at all.
  np.testing.assert_allclose(action[1].numpy(), means[1].numpy())
  with pytest.raises(ValueError, match=r"PPO: gSDE exploration needs the "
                     r"actor's inputs as features, \[batch, 3\], got None"):
    policy.explore(means, rng)


def test_sde_noise_is_redrawn_every_k_steps_per_environment():
  policy, rng = _sde_policy(freq=3), tf.random.Generator.from_seed(4)
  means = tf.zeros([2, 2])
  features = tf.constant([[1.0, -1.0, 0.5], [0.3, 0.2, 1.0]])
  explore = tf.function(lambda: policy.explore(means, rng, features)[0])
  noise = np.stack([explore().numpy() for _ in range(7)])
  for same in ([0, 1, 2], [3, 4, 5]):
    for step in same[1:]:
      np.testing.assert_array_equal(noise[step], noise[same[0]])
  for a, b in ((2, 3), (5, 6)):
    assert np.all(noise[a] != noise[b])
  assert np.all(noise[0, 0] != noise[0, 1])  # One matrix per environment.
  assert int(policy.sde_steps) == 7
  # The noise is the features times the stored matrix.
  np.testing.assert_allclose(
      noise[6], np.einsum("bf,bfk->bk", features, policy.sde_noise.numpy()),
      rtol=1e-6)


def test_sde_noise_and_count_are_checkpointed(tmp_path):
  policy, rng = _sde_policy(freq=4), tf.random.Generator.from_seed(1)
  means, features = tf.zeros([2, 2]), tf.ones([2, 3])
  for _ in range(2):
    policy.explore(means, rng, features)
  path = tf.train.Checkpoint(policy=policy).save(str(tmp_path / "ckpt"))
  later = [policy.explore(means, rng, features)[0].numpy() for _ in range(3)]
  restored, other_rng = _sde_policy(freq=4), tf.random.Generator.from_seed(1)
  tf.train.Checkpoint(policy=restored).restore(path).assert_consumed()
  for _ in range(2):  # The generator as it was at the save.
    other_rng.make_seeds(1)
  again = [restored.explore(means, other_rng, features)[0].numpy()
           for _ in range(3)]
  # Steps 3 and 4 reuse the matrices drawn at step 1, step 5 draws anew.
  for a, b in zip(later, again):
    np.testing.assert_array_equal(a, b)
  np.testing.assert_array_equal(later[0], later[1])


def test_sde_options_are_checked():
  with pytest.raises(ValueError, match="PPO: sde_sample_freq must be a "
                     "positive int"):
    policies.Policy("PPO", BOX, sde_sample_freq=0, sde_features=3,
                    sde_batch=2)
  with pytest.raises(ValueError, match=r"PPO: gSDE \(sde_sample_freq\) is for "
                     r"Box actions, got Discrete\(2\)"):
    policies.Policy("PPO", envs.Discrete(2), sde_sample_freq=2,
                    sde_features=3, sde_batch=2)
  with pytest.raises(ValueError, match="choose one"):
    policies.Policy("PPO", BOX, state_dependent_std=True, sde_sample_freq=2,
                    sde_features=3, sde_batch=2)
