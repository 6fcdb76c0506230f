"""Tests for the DQN scenario on tiny in-graph environments."""


import keras
import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from sonnet_like import envs
from sonnet_like.scenarios.rl import schedules
from tests import rl_toys


def _scenario(num_env_steps=1_200, **kwargs):
  settings = dict(num_envs=4, learning_starts=100, batch_size=32,
                  target_update_every=20, steps_per_call=50,
                  epsilon=(1.0, 0.05, 0.3), eval_episodes=8, progress=False)
  settings.update(kwargs)
  return snt.scenarios.DQN(num_env_steps, **settings)


def _q_network():
  return snt.nets.MLP([16, 2], name="q")


def test_learns_the_guessing_game():
  dqn = _scenario(eval_every=150)
  random_return = 2.5  # Length 5, right half of the time.
  history = dqn(_q_network(), keras.optimizers.Adam(0.01),
                rl_toys.Guess(num_envs=4, seed=1),
                eval_env=rl_toys.Guess(num_envs=4, seed=2))
  assert dqn.step == 300
  assert history.eval["return"][-1] >= 4.5 > random_return + 1.5
  train = history.train
  assert train["env_steps"][-1] == 1_200
  assert train["episode_length"][-1] == 5
  # Epsilon follows its schedule: 1 -> 0.05 over the first 30% of 300 steps.
  assert train["epsilon"][-1] == pytest.approx(0.05)
  assert train["episode_return"][-1] > random_return
  assert np.isfinite(train["loss"][-1]) and train["loss"][-1] > 0


def test_runs_under_xla():
  dqn = _scenario(num_env_steps=4 * 40, learning_starts=32, steps_per_call=20,
                  jit_compile=True)
  history = dqn(_q_network(), keras.optimizers.Adam(0.01), rl_toys.Guess())
  assert dqn.step == 40 and history.train["env_steps"][-1] == 160
  assert np.isfinite(history.train["loss"][-1])
  assert history.train["loss"][-1] > 0


class _Watch(snt.scenarios.Hook):
  """Records the online and target weights after every call."""

  def __init__(self):
    self.seen = {}

  def step_end(self, scenario, step, logs):
    self.seen[step] = (
        [v.numpy() for v in scenario.q_network.trainable_variables],
        [v.numpy() for v in scenario.target_network.trainable_variables])


@pytest.mark.parametrize("tau", [1.0, 0.5])
def test_target_syncs_exactly_at_the_configured_steps(tau):
  watch = _Watch()
  dqn = _scenario(num_env_steps=40, learning_starts=0, target_update_every=3,
                  steps_per_call=1, tau=tau, hooks=[watch])
  q_network = _q_network()
  dqn(q_network, keras.optimizers.SGD(0.1), rl_toys.Guess(num_envs=4))
  assert sorted(watch.seen) == list(range(1, 11))
  for step in range(1, 11):
    online, target = watch.seen[step]
    before = watch.seen[step - 1][1] if step > 1 else None
    if step % 3 == 0:
      for o, t, b in zip(online, target, before):
        expected = o if tau == 1.0 else tau * o + (1 - tau) * b
        np.testing.assert_allclose(t, expected, rtol=1e-6, atol=1e-7)
    elif step > 1:
      for o, t, b in zip(online, target, before):
        np.testing.assert_array_equal(t, b)   # Unchanged between syncs.
      assert any(not np.array_equal(o, t) for o, t in zip(online, target))
  # The target is a separate copy, and it was updated from the online one.
  assert dqn.target_network is not q_network
  targets = dqn.target_network.trainable_variables
  assert all(a is not b
             for a, b in zip(q_network.trainable_variables, targets))


def test_a_given_target_network_is_used_and_starts_as_the_online_one():
  target = snt.nets.MLP([16, 2], name="target")
  watch = _Watch()
  dqn = _scenario(num_env_steps=8, learning_starts=0, target_update_every=5,
                  steps_per_call=1, hooks=[watch])
  q_network = _q_network()
  dqn(q_network, keras.optimizers.SGD(0.1), rl_toys.Guess(num_envs=4),
      target_network=target)
  assert dqn.target_network is target
  online, target_values = watch.seen[1]
  assert any(not np.array_equal(o, t) for o, t in zip(online, target_values))
  # No sync yet after 1 step: the target holds the initial online weights.
  before = [v.numpy() for v in target.trainable_variables]
  for a, b in zip(before, target_values):
    np.testing.assert_array_equal(a, b)


class _NanGuess(rl_toys.Guess):
  """Pays NaN: the first update's loss is NaN."""

  def step(self, action):
    timestep = super().step(action)
    return timestep._replace(reward=timestep.reward * np.nan)


def test_nonfinite_update_raises_or_is_skipped():
  dqn = _scenario(num_env_steps=200, learning_starts=40, steps_per_call=5)
  q_network = _q_network()
  with pytest.raises(snt.scenarios.NonFiniteError, match="DQN: non-finite "
                     "loss or gradient at step 9") as caught:
    dqn(q_network, keras.optimizers.SGD(0.1), _NanGuess(num_envs=4))
  assert caught.value.step == 9 and dqn.step == 9
  assert all(np.all(np.isfinite(v.numpy()))
             for v in q_network.trainable_variables)

  skipping = _scenario(num_env_steps=200, learning_starts=40,
                       steps_per_call=5, on_nonfinite="skip")
  q_network = _q_network()
  skipping(q_network, keras.optimizers.SGD(0.1), _NanGuess(num_envs=4))
  assert skipping.step == 50 and skipping.skipped_steps == 41
  assert all(np.all(np.isfinite(v.numpy()))
             for v in q_network.trainable_variables)


def test_rounds_of_several_gradient_steps_are_counted_and_guarded():
  # A round of gradient_steps > 1 runs in a tf.range loop.
  optimizer = keras.optimizers.Adam(1e-3)
  dqn = _scenario(num_env_steps=200, learning_starts=40, steps_per_call=5,
                  train_every=4, gradient_steps=3)
  dqn(_q_network(), optimizer, snt.envs.Guess(num_envs=4, seed=0))
  rounds = len(range(12, 51, 4))  # Steps 10..50 learn; multiples of 4.
  assert int(optimizer.iterations) == 3 * rounds
  skipping = _scenario(num_env_steps=200, learning_starts=40,
                       steps_per_call=5, train_every=4, gradient_steps=3,
                       on_nonfinite="skip")
  q_network = _q_network()
  skipping(q_network, keras.optimizers.SGD(0.1), _NanGuess(num_envs=4))
  assert skipping.skipped_steps == rounds
  assert all(np.all(np.isfinite(v.numpy()))
             for v in q_network.trainable_variables)


def test_compiled_once_across_calls_and_epsilon_from_a_schedule():
  schedule = schedules.ExponentialSchedule(1.0, 0.0, rate=0.5, steps=10)
  dqn = _scenario(num_env_steps=4 * 40, steps_per_call=7, log_every=5,
                  learning_starts=8, eval_every=10, eval_episodes=4,
                  epsilon=schedule)
  history = dqn(_q_network(), keras.optimizers.Adam(0.01),
                rl_toys.Guess(num_envs=4),
                eval_env=rl_toys.Guess(num_envs=4, seed=5))
  assert dqn.train_function.experimental_get_tracing_count() == 1
  assert len(history.eval["return"]) == 4
  # Logged after step 40 (0-based 39): the schedule's value at step 39.
  assert history.train["epsilon"][-1] == pytest.approx(float(schedule(39)))


class _Box(rl_toys.Guess):

  def __init__(self):
    super().__init__()
    self.action_space = envs.Box(np.zeros(1), np.ones(1))


class _Wide(rl_toys.Guess):

  def __init__(self):
    super().__init__()
    self.observation_spec = tf.TensorSpec([3], tf.float32)


def test_errors_name_dqn():
  optimizer = keras.optimizers.SGD(0.1)
  with pytest.raises(ValueError, match="DQN: the environment's actions must "
                     "be Discrete"):
    _scenario()(_q_network(), optimizer, _Box())
  with pytest.raises(ValueError, match=r"DQN: evaluation \(eval_every=10\) "
                     "needs eval_env=.*no environment to evaluate in"):
    _scenario(eval_every=10)(_q_network(), optimizer, rl_toys.Guess())
  with pytest.raises(ValueError, match="DQN: env has 2 environments but "
                     "num_envs=4"):
    _scenario()(_q_network(), optimizer, rl_toys.Guess(num_envs=2))
  with pytest.raises(ValueError, match="DQN: buffer_size must be at least "
                     r"num_envs \(4\), got 3"):
    _scenario(buffer_size=3)(_q_network(), optimizer, rl_toys.Guess())
  with pytest.raises(ValueError, match=r"DQN: q_network must map observations "
                     r"\[batch, 1\] to Q-values \[batch, 2\], got output "
                     r"shape \[3\]"):
    _scenario()(snt.nets.MLP([3], name="q3"), optimizer, rl_toys.Guess())
  with pytest.raises(ValueError, match=r"DQN: eval_env must have the "
                     r"training env.s observations .* got .*shape=\(3,\)"):
    _scenario()(_q_network(), optimizer, rl_toys.Guess(),
                eval_env=_Wide())
  with pytest.raises(ValueError, match="DQN: target_network must have the "
                     "same variables"):
    _scenario()(_q_network(), optimizer, rl_toys.Guess(),
                target_network=snt.nets.MLP([7, 2], name="other"))
  env = rl_toys.Guess()
  with pytest.raises(ValueError, match="DQN: eval_env must not be the "
                     "training environment"):
    _scenario()(_q_network(), optimizer, env, eval_env=env)
  with pytest.raises(TypeError, match="DQN: optimizer must have"):
    _scenario()(_q_network(), "adam", rl_toys.Guess())
  bad = [dict(epsilon=(1.0, 0.1, 2.0)), dict(loss="l1"), dict(tau=0.0),
         dict(gamma=1.5), dict(batch_size=0), dict(learning_starts=-1),
         dict(target_update_every=0)]
  for kwargs in bad:
    with pytest.raises(ValueError, match=f"DQN: {next(iter(kwargs))} must"):
      _scenario(**kwargs)
  strategy = _mirrored_strategy()
  with pytest.raises(ValueError, match="DQN: RL scenarios run under the default "
                     "strategy only, got MirroredStrategy with 2 replicas"):
    _scenario(strategy=strategy)


def _mirrored_strategy():
  from tests import optimizer_common  # pylint: disable=g-import-not-at-top
  return optimizer_common._mirrored_strategy()  # pylint: disable=protected-access


def test_gymnasium_id_gets_its_own_evaluation_copy():
  dqn = _scenario(num_env_steps=2 * 30, num_envs=2, learning_starts=20,
                  steps_per_call=10, eval_every=30, eval_episodes=3)
  history = dqn(snt.nets.MLP([8, 2], name="q"), keras.optimizers.Adam(0.01),
                "CartPole-v1")
  assert isinstance(dqn.env, envs.GymEnvironment) and not dqn.env.in_graph
  assert dqn.eval_env is not dqn.env and dqn.eval_env.num_envs == 3
  assert dqn.step == 30 and history.train["env_steps"][-1] == 60
  assert len(history.eval["return"]) == 1
  assert history.eval["return"][0] >= 8   # CartPole episodes last >= 8 steps.


def test_gymnasium_vector_env_instance_is_used_as_is_and_not_copied():
  import gymnasium as gym  # pylint: disable=g-import-not-at-top
  vector = gym.make_vec("CartPole-v1", num_envs=3)
  with pytest.raises(ValueError, match="needs eval_env=.*Pass eval_env"):
    _scenario(num_env_steps=30, num_envs=None, learning_starts=10,
              eval_every=5)(
        snt.nets.MLP([8, 2], name="q"), keras.optimizers.Adam(0.01), vector)
  dqn = _scenario(num_env_steps=3 * 10, num_envs=None, learning_starts=10,
                  steps_per_call=5)
  dqn(snt.nets.MLP([8, 2], name="q2"), keras.optimizers.Adam(0.01), vector)
  assert dqn.env.num_envs == 3 and dqn.eval_env is None and dqn.step == 10


def test_linear_learning_rate_falls_over_the_steps_the_environment_gives():
  # num_envs=None: 160 transitions of 4 environments are 40 steps, known
  # only once the environment is given; the last update (step 39, 0-based)
  # runs at 0.05 * (1 - 39 / 40).
  optimizer = keras.optimizers.Adam(0.05)
  dqn = _scenario(num_env_steps=160, num_envs=None, learning_starts=8,
                  steps_per_call=1, learning_rate_schedule="linear")
  history = dqn(_q_network(), optimizer, rl_toys.Guess(num_envs=4))
  assert dqn.step == 40
  np.testing.assert_allclose(float(optimizer.learning_rate), 0.05 / 40,
                             rtol=1e-5)
  assert history.train["learning_rate"][-1] == pytest.approx(0.05 / 40)
  with pytest.raises(ValueError, match="DQN: learning_rate_schedule must be "
                     "None, \"linear\" or a schedules.Schedule .* got "
                     "'cosine'"):
    _scenario(learning_rate_schedule="cosine")
