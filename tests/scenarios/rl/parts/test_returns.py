"""Discounted returns and GAE against plain NumPy loops."""

import numpy as np
import pytest
import tensorflow as tf

from sonnet_like.scenarios.rl.parts import returns

T, N = 9, 4


def _rollout(seed):
  rng = np.random.default_rng(seed)
  rewards = rng.normal(size=(T, N)).astype(np.float32)
  values = rng.normal(size=(T, N)).astype(np.float32)
  final_values = rng.normal(size=(T, N)).astype(np.float32)
  last_value = rng.normal(size=N).astype(np.float32)
  ended = rng.uniform(size=(T, N)) < 0.3
  truncated = ended & (rng.uniform(size=(T, N)) < 0.5)
  terminated = ended & ~truncated
  # Every kind of ending in the test, including at the last step.
  terminated[2, 0], truncated[2, 0] = True, False
  truncated[4, 1], terminated[4, 1] = True, False
  truncated[T - 1, 2], terminated[T - 1, 2] = True, False
  terminated[T - 1, 3], truncated[T - 1, 3] = True, False
  return rewards, values, terminated, truncated, final_values, last_value


def _numpy_returns(rewards, terminated, truncated, final_values, last_value,
                   gamma):
  out = np.zeros_like(rewards)
  for env in range(N):
    following = last_value[env]
    for t in reversed(range(T)):
      if terminated[t, env]:
        following = 0.0
      elif truncated[t, env]:
        following = final_values[t, env]
      following = rewards[t, env] + gamma * following
      out[t, env] = following
  return out


def _numpy_gae(rewards, values, terminated, truncated, final_values,
               last_value, gamma, lam):
  out = np.zeros_like(rewards)
  for env in range(N):
    advantage = 0.0
    for t in reversed(range(T)):
      if terminated[t, env]:
        next_value, advantage = 0.0, 0.0
      elif truncated[t, env]:
        next_value, advantage = final_values[t, env], 0.0
      elif t == T - 1:
        next_value = last_value[env]
      else:
        next_value = values[t + 1, env]
      delta = rewards[t, env] + gamma * next_value - values[t, env]
      advantage = delta + gamma * lam * advantage
      out[t, env] = advantage
  return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_discounted_returns_match_numpy(seed):
  rewards, _, terminated, truncated, final_values, last_value = _rollout(seed)
  got = returns.discounted_returns(rewards, terminated, truncated, 0.9,
                                   final_values, last_value)
  want = _numpy_returns(rewards, terminated, truncated, final_values,
                        last_value, 0.9)
  np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)


def test_discounted_returns_without_bootstrap_are_monte_carlo():
  rewards, _, terminated, truncated, _, _ = _rollout(3)
  got = returns.discounted_returns(rewards, terminated, truncated, 0.9)
  want = _numpy_returns(rewards, terminated, truncated, np.zeros((T, N)),
                        np.zeros(N), 0.9)
  np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("seed,lam", [(0, 0.95), (1, 0.0), (2, 1.0)])
def test_gae_matches_numpy(seed, lam):
  rewards, values, terminated, truncated, final_values, last_value = (
      _rollout(seed))
  got = returns.gae(rewards, values, terminated, truncated, 0.99, lam,
                    final_values, last_value)
  want = _numpy_gae(rewards, values, terminated, truncated, final_values,
                    last_value, 0.99, lam)
  np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)


def test_gae_with_lambda_one_gives_returns_minus_values():
  rewards, values, terminated, truncated, final_values, last_value = (
      _rollout(4))
  advantages = returns.gae(rewards, values, terminated, truncated, 0.9, 1.0,
                           final_values, last_value)
  targets = returns.discounted_returns(rewards, terminated, truncated, 0.9,
                                       final_values, last_value)
  np.testing.assert_allclose((advantages + values).numpy(), targets.numpy(),
                             rtol=1e-5, atol=1e-5)


def test_gae_compiles_with_xla():
  rewards, values, terminated, truncated, final_values, last_value = (
      _rollout(5))
  compiled = tf.function(
      lambda r, v, te, tr, f, l: returns.gae(r, v, te, tr, 0.99, 0.95, f, l),
      jit_compile=True)
  got = compiled(rewards, values, terminated, truncated, final_values,
                 last_value)
  want = _numpy_gae(rewards, values, terminated, truncated, final_values,
                    last_value, 0.99, 0.95)
  np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)


def test_mismatched_shapes_are_refused():
  with pytest.raises(ValueError, match="the rewards' shape"):
    returns.gae(np.zeros((3, 2)), np.zeros((3, 3)), np.zeros((3, 2), bool),
                np.zeros((3, 2), bool), 0.9, 0.9)
