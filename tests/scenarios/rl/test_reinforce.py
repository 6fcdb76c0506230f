"""REINFORCE: learning, one compiled call per rollout, returns with the
baseline, NaN guard and bad input."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.scenarios.rl.parts import episodes
from tests import rl_toys
from tests.scenarios.rl import test_ppo


def test_reinforce_learns_guess_in_one_compiled_call_per_rollout():
  env, eval_env = test_ppo.CountingGuess(8), rl_toys.Guess(16, seed=1)
  policy = snt.Linear(2, w_init=snt.initializers.Zeros(), name="policy")
  untrained = episodes.EpisodeRunner(
      eval_env, lambda obs: tf.argmax(policy(obs), -1, tf.int32), 32)(seed=0)
  reinforce = snt.scenarios.REINFORCE(
      num_env_steps=3_000, num_envs=8, rollout_length=25, eval_every=5,
      eval_episodes=32, log_every=3, progress=False)
  history = reinforce(policy, snt.Linear(1, name="baseline"),
                      keras.optimizers.Adam(0.05), env, eval_env=eval_env)
  assert reinforce.step == reinforce.num_steps == 15  # 3000 / (8 * 25)
  assert untrained["return"].mean() < 3.2  # Random: 2.5 of 5.
  assert history.eval["return"][-1] >= 4.5
  # Traced twice (the shape check, the step), stepped 375 times.
  assert env.python_steps == 2
  assert reinforce.train_function.experimental_get_tracing_count() == 1
  for name in ("loss", "policy_loss", "baseline_loss", "entropy",
               "episode_return", "episode_length", "episodes", "env_steps"):
    assert np.all(np.isfinite(history.train[name])), name
  assert history.train["env_steps"][-1] == 3_000
  assert set(reinforce.models()) == {"policy", "baseline"}
  assert {"optimizer", "episode_stats", "env"} <= set(reinforce.trackables())


def test_baseline_learns_the_discounted_returns():
  # Guess with a perfect fixed policy pays 1 per step: from step t of 5 the
  # return (bootstrapped through the truncation by the baseline itself) tends
  # to sum_k gamma^k = 1 / (1 - gamma) = 2 for gamma = 0.5.
  policy = snt.Linear(2, name="policy")
  reinforce = snt.scenarios.REINFORCE(
      num_env_steps=16_000, num_envs=16, rollout_length=10, gamma=0.5,
      baseline_coef=1.0, progress=False, steps_per_call=20)
  baseline = snt.Linear(1, name="baseline")
  reinforce(policy, baseline, keras.optimizers.Adam(0.05), rl_toys.Guess(16))
  values = baseline(tf.constant([[-1.0], [1.0]]))[:, 0].numpy()
  np.testing.assert_allclose(values, [2.0, 2.0], atol=0.25)


def test_continuous_actions():
  env, eval_env = test_ppo.Target(16, seed=0), test_ppo.Target(16, seed=1)
  reinforce = snt.scenarios.REINFORCE(
      num_env_steps=16_000, num_envs=16, rollout_length=10, gamma=0.0,
      eval_episodes=32, progress=False, seed=1, steps_per_call=20)
  tf.random.set_seed(0)  # The initial weights: not the suite's order's.
  policy = snt.Linear(1, name="policy")
  history = reinforce(policy, snt.Linear(1, name="baseline"),
                      keras.optimizers.Adam(0.02), env, eval_env=eval_env)
  assert history.eval["return"][-1] > -1.0  # Acting on 0: about -5.
  assert float(policy.w[0, 0]) == pytest.approx(1.0, abs=0.3)
  assert "log_std" in reinforce.models()


def test_poisoned_reward_stops_with_nonfinite_error_naming_the_step():
  env = test_ppo.CountingGuess(4, poison_after=3 * 10)
  reinforce = snt.scenarios.REINFORCE(num_env_steps=400, num_envs=4,
                                      rollout_length=10, progress=False)
  with pytest.raises(snt.scenarios.NonFiniteError,
                     match="REINFORCE: non-finite loss or gradient at step 3"):
    reinforce(snt.Linear(2, name="policy"), snt.Linear(1, name="baseline"),
              keras.optimizers.SGD(0.1), env)
  assert reinforce.step == 3


def test_bad_arguments_are_refused():
  with pytest.raises(ValueError, match="REINFORCE: rollout_length must be a "
                     "positive int, got 0"):
    snt.scenarios.REINFORCE(100, rollout_length=0)
  with pytest.raises(ValueError, match="REINFORCE: baseline_coef must be a "
                     "number above 0, got 0"):
    snt.scenarios.REINFORCE(100, baseline_coef=0)
  reinforce = snt.scenarios.REINFORCE(100, num_envs=4, rollout_length=5,
                                      progress=False)
  with pytest.raises(TypeError, match="REINFORCE: baseline must be a module"):
    reinforce(snt.Linear(2), "baseline", keras.optimizers.SGD(0.1),
              rl_toys.Guess(4))
  with pytest.raises(ValueError, match=r"REINFORCE: the baseline must output "
                     r"\[batch\] or \[batch, 1\] values, got \[batch, 3\]"):
    reinforce(snt.Linear(2), snt.Linear(3), keras.optimizers.SGD(0.1),
              rl_toys.Guess(4))
