"""PPO's `clip_ratio_schedule`: the clip ratio annealed over the run
(Stable-Baselines3's `clip_range="lin_0.2"`), read from the step counter
inside the compiled step."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.scenarios.rl import schedules
from tests import rl_toys


class CountingGuess(rl_toys.Guess):
  """Guess that counts Python calls of `step` (traced once = one call)."""

  def __init__(self, *args, **kwargs):
    super().__init__(*args, **kwargs)
    self.python_steps = 0

  def step(self, action):
    self.python_steps += 1
    return super().step(action)


def _ppo(num_env_steps=800, **settings):
  """10 rollouts of 8 x 10 steps, 2 epochs of 2 minibatches each."""
  tf.random.set_seed(0)
  settings = dict(dict(num_env_steps=num_env_steps, num_envs=8,
                       rollout_length=10, num_epochs=2, num_minibatches=2,
                       progress=False, seed=1), **settings)
  return snt.scenarios.PPO(**settings)


def _train(ppo, env=None):
  """Trains zero-initialised networks with Adam 0.05; returns the history
  and the weights."""
  zeros = snt.initializers.Zeros()
  actor = snt.Linear(2, w_init=zeros, name="actor")
  critic = snt.Linear(1, w_init=zeros, name="critic")
  history = ppo(actor, critic, keras.optimizers.Adam(0.05),
                env or rl_toys.Guess(8))
  return history, [v.numpy() for v in actor.variables + critic.variables]


def test_linear_schedule_falls_rollout_by_rollout_under_xla_without_retracing():
  # 10 rollouts, 2 per compiled call: rollout t (0-based) clips at
  # 0.2 * (1 - t / 10); the logs are those of rollouts 1, 3, 5, 7, 9.
  env = CountingGuess(8)
  ppo = _ppo(clip_ratio_schedule="linear", jit_compile=True,
             steps_per_call=2, log_every=2, num_epochs=1, num_minibatches=1)
  history, _ = _train(ppo, env)
  assert ppo.step == 10
  np.testing.assert_allclose(history.train["clip_ratio"],
                             [0.18, 0.14, 0.10, 0.06, 0.02], rtol=1e-5)
  # Traced once for the 5 calls: a retrace per call would run the
  # environment's Python `step` at least 5 times.
  assert env.python_steps < 5


def test_a_constant_factor_of_one_is_bitwise_no_schedule():
  # 0.09: float32 arithmetic would give 1 - 0.09 one ulp off the float32
  # of Python's 0.91; the bounds must round as from Python.
  history, plain = _train(_ppo(clip_ratio=0.09, log_every=1))
  _, scheduled = _train(_ppo(
      clip_ratio=0.09, clip_ratio_schedule=schedules.ConstantSchedule(1.0)))
  assert max(history.train["clip_fraction"]) > 0  # The clip mattered.
  assert "clip_ratio" not in history.train
  for a, b in zip(plain, scheduled):
    np.testing.assert_array_equal(a, b)


def test_the_schedule_decides_the_clip_ratio():
  # Fails if the schedule is ignored: 0.2 halved trains as 0.1 does (to
  # the bit: 0.2 * 0.5 == 0.1 in float64), not as 0.2 does.
  halved_history, halved = _train(_ppo(
      clip_ratio=0.2, clip_ratio_schedule=schedules.ConstantSchedule(0.5),
      log_every=1))
  _, at_01 = _train(_ppo(clip_ratio=0.1))
  _, at_02 = _train(_ppo(clip_ratio=0.2))
  for a, b in zip(halved, at_01):
    np.testing.assert_array_equal(a, b)
  assert any(not np.array_equal(a, b) for a, b in zip(halved, at_02))
  assert set(halved_history.train["clip_ratio"]) == {np.float32(0.1)}


def test_a_resumed_run_continues_the_schedule_bitwise(tmp_path):
  # The factor comes from the checkpointed step: half a run, then the
  # rest, ends with the weights of the whole run.
  schedule = schedules.LinearSchedule(1.0, 0.0, steps=10)

  def run(save_dir, num_env_steps):
    ppo = _ppo(num_env_steps, clip_ratio_schedule=schedule,
               save_dir=str(save_dir), save_every=5)
    return _train(ppo)

  _, whole = run(tmp_path / "whole", 800)
  run(tmp_path / "parts", 400)
  _, resumed = run(tmp_path / "parts", 800)
  for a, b in zip(whole, resumed):
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("value", ["cosine", 0.5, "lin_0.2"])
def test_a_bad_schedule_is_refused_naming_ppo(value):
  with pytest.raises(ValueError, match=(
      r"PPO: clip_ratio_schedule must be None, \"linear\" or a "
      r"schedules.Schedule of the step \(rollouts done\) giving a factor "
      r"of clip_ratio, got ")):
    snt.scenarios.PPO(100, clip_ratio_schedule=value)
