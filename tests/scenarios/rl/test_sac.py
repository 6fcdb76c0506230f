"""SAC: learning on the in-graph Pendulum, acting, export, arguments.

Resume, SIGTERM/SIGKILL, the NaN guard and bad data are the SAC row of
tests/scenario_table.py."""

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt


def _train(num_env_steps, seed=0, **settings):
  tf.random.set_seed(seed)
  recipe = snt.scenarios.SAC.recipe("Pendulum-v1")
  settings = dict(dict(num_env_steps=num_env_steps, learning_starts=200,
                       batch_size=64, steps_per_call=100, seed=seed,
                       eval_every=None, progress=False), **settings)
  sac = recipe.scenario(**settings)
  actor, critic = recipe.networks(hidden=(64, 64))
  env = snt.envs.Pendulum(num_envs=4, seed=seed)
  sac(actor, critic, snt.optimizers.Adam(3e-3), env,
      eval_env=snt.envs.Pendulum(num_envs=10, seed=seed + 1))
  return sac


def test_learns_the_continuous_guessing_game():
  # Reward 1 - (action - sign)^2 / 4 per step, 5 steps: a policy ignoring the
  # observed sign makes at most 3.75, uniform random actions about 3.33.
  # (Pendulum, minutes long: examples/pendulum_sac.py and BUILD_NOTES.)
  tf.random.set_seed(0)
  sac = snt.scenarios.SAC(num_env_steps=2_000, num_envs=4, learning_starts=200,
                          batch_size=64, steps_per_call=50, eval_every=250,
                          eval_episodes=20, seed=0, progress=False)
  actor = snt.nets.MLP([32, 32, 2], activation=tf.nn.relu, name="actor")
  critic = snt.nets.MLP([32, 32, 1], activation=tf.nn.relu, name="critic")
  sac(actor, critic, snt.optimizers.Adam(3e-3),
      snt.envs.Guess(num_envs=4, continuous=True, seed=0),
      eval_env=snt.envs.Guess(num_envs=20, continuous=True, seed=1))
  returns = sac.history.eval["return"]
  assert returns[-1] > 4.5, returns
  train = sac.history.train
  assert train["alpha"][-1] < 1.0   # The temperature was learnt down.
  assert np.all(np.isfinite(train["critic_loss"]))


def test_act_and_export_give_the_greedy_action_in_the_bounds(tmp_path):
  sac = _train(300, normalize_observations=True, alpha=0.05,
               export_dir=str(tmp_path / "policy"))
  observations = snt.envs.Pendulum(7, seed=4).reset(seed=4)
  actions = sac.act(observations)
  assert actions.shape == [7, 1] and np.all(np.abs(actions) <= 2.0)
  assert sac.act(observations[0]).shape == [1]
  np.testing.assert_allclose(sac.act(observations[0]), actions[0], rtol=1e-5)
  loaded = tf.saved_model.load(str(tmp_path / "policy"))
  exported = loaded.signatures["serving_default"](observation=observations)
  np.testing.assert_allclose(exported["action"], actions, rtol=1e-5,
                             atol=1e-6)
  assert "sample" not in loaded.signatures
  assert float(sac.normalizer.count) == 300
  sampled = sac.act(observations, greedy=False)
  assert not np.allclose(sampled, actions)
  # A fixed temperature stays fixed and is not trained.
  np.testing.assert_allclose(sac.history.train["alpha"][-1], 0.05, rtol=1e-6)
  assert "log_alpha" not in [v.name for v in sac._trained_variables()]  # pylint: disable=protected-access


def test_discrete_actions_and_bad_settings_are_refused():
  with pytest.raises(ValueError, match=r"^SAC: the environment's actions must "
                     r"be a Box \(continuous\), got Discrete\(2\)"):
    snt.scenarios.SAC(10, progress=False)(
        snt.nets.MLP([4, 2]), snt.nets.MLP([4, 1]), snt.optimizers.Adam(),
        snt.envs.CartPole(1), eval_env=snt.envs.CartPole(1))
  with pytest.raises(ValueError, match=r"^SAC: tau must be a number above 0 "
                     r"and at most 1.0, got 2"):
    snt.scenarios.SAC(10, tau=2)
  with pytest.raises(ValueError, match=r"^SAC: alpha must be a number above "
                     r"0, got 'learn'"):
    snt.scenarios.SAC(10, alpha="learn")
  with pytest.raises(ValueError, match="^SAC: no recipe for 'Ant-v4'"):
    snt.scenarios.SAC.recipe("Ant-v4")
  with pytest.raises(TypeError, match="^SAC: actor must be a module"):
    snt.scenarios.SAC(10)(lambda x: x, snt.nets.MLP([4, 1]),
                          snt.optimizers.Adam(), snt.envs.Pendulum(1))


def test_shared_variables_are_refused():
  critic = snt.nets.MLP([8, 1], name="q")
  with pytest.raises(ValueError, match="^SAC: the actor, the critic and the "
                     "twin critic must not share variables"):
    snt.scenarios.SAC(10, progress=False)(
        snt.nets.MLP([8, 2]), critic, snt.optimizers.Adam(),
        snt.envs.Pendulum(1), twin_critic=critic)


def test_trains_under_mixed_float16_with_a_loss_scale():
  tf.random.set_seed(0)
  sac = snt.scenarios.SAC(num_env_steps=400, num_envs=4, learning_starts=100,
                          batch_size=32, steps_per_call=25, eval_every=None,
                          seed=0, progress=False, precision="mixed_float16")
  actor = snt.nets.MLP([16, 2], name="actor")
  critic = snt.nets.MLP([16, 1], name="critic")
  sac(actor, critic, snt.optimizers.Adam(1e-3),
      snt.envs.Guess(num_envs=4, continuous=True, seed=0))
  train = sac.history.train
  assert sac.step == 100 and np.all(np.isfinite(train["critic_loss"]))
  assert train["loss_scale"][-1] > 1.0
  assert all(v.dtype == tf.float32 for v in actor.variables)


# ---- gSDE (sde_sample_freq) ----

def _sde_run(save_dir, num_env_steps):
  # 4 environments; noise drawn every 4 steps, 2 updates every 8 steps,
  # saved every 5. An actor that outputs 0 until its first update: the
  # raw action is then observation * W_i, the observation a sign.
  tf.random.set_seed(0)
  sac = snt.scenarios.SAC(
      num_env_steps, num_envs=4, learning_starts=0, batch_size=16,
      train_every=8, gradient_steps=2, alpha=0.1, sde_sample_freq=4,
      log_std_init=-1.0, save_every=5,
      steps_per_call=5, save_dir=str(save_dir), seed=0, eval_every=None,
      progress=False)
  sac(snt.Linear(1, w_init=tf.zeros_initializer(), name="actor"),
      snt.nets.MLP([8, 1], name="critic"), snt.optimizers.Adam(1e-2),
      snt.envs.Guess(num_envs=4, continuous=True, seed=0),
      eval_env=snt.envs.Guess(num_envs=4, continuous=True, seed=1))
  return sac


def test_sde_holds_the_noise_between_resamples_and_resumes_bitwise(tmp_path):
  whole = _sde_run(tmp_path / "whole", 80)
  assert whole.policy.uses_sde and int(whole.policy.sde_steps) == 20
  # Before the first update |atanh(action)| is env i's |W_i|: held for 4
  # steps, then drawn again.
  actions = whole.buffer.storage.action.numpy()[:32, 0]
  windows = np.abs(np.arctanh(actions)).reshape(2, 4, 4)  # [draw, step, env]
  np.testing.assert_allclose(
      windows, np.broadcast_to(windows[:, :1], windows.shape), rtol=1e-4)
  assert np.all(np.abs(windows[1, 0] - windows[0, 0]) > 1e-3)
  assert not np.allclose(whole.policy.log_std.numpy(), -1.0)  # Trained.
  # Resumed at step 10, inside the window drawn at step 9: the checkpoint
  # holds the matrices and their count.
  _sde_run(tmp_path / "parts", 40)
  resumed = _sde_run(tmp_path / "parts", 80)
  assert resumed.step == whole.step == 20
  state = lambda s: [v.numpy() for _, m in sorted(s.trackables().items())
                     for v in getattr(m, "variables", [])]
  for a, b in zip(state(whole), state(resumed)):
    np.testing.assert_array_equal(a, b)
  sampled = whole.act(np.ones([5, 1], np.float32), greedy=False)
  assert sampled.shape == [5, 1] and np.all(np.abs(sampled) <= 1.0)


def test_sde_settings_are_checked():
  with pytest.raises(ValueError, match=r"^SAC: the actor must output "
                     r"\[batch, 1\] means for Box\(shape=\(1,\)\), got "
                     r"\[batch, 2\]"):
    snt.scenarios.SAC(8, num_envs=4, sde_sample_freq=4, progress=False)(
        snt.Linear(2), snt.Linear(1), snt.optimizers.Adam(),
        snt.envs.Guess(num_envs=4, continuous=True),
        eval_env=snt.envs.Guess(num_envs=4, continuous=True))
  with pytest.raises(ValueError, match=r"^SAC: sde_sample_freq must be"):
    snt.scenarios.SAC(8, sde_sample_freq=0)
  with pytest.raises(ValueError, match=r"^SAC: log_std_init must be a finite "
                     r"number, got nan"):
    snt.scenarios.SAC(8, log_std_init=float("nan"))


@pytest.mark.parametrize("buffer_size, per_call", [(1_000, True),
                                                   (400_000, False)])
def test_auto_checks_per_step_where_a_call_would_copy_a_larger_buffer(
    buffer_size, per_call):
  # 50 updates a call: "auto" checks per call, unless the call's check
  # would copy more buffer (33 bytes a row) than checking each update reads
  # of the trainable variables (6.2k floats, 25 kB, 50 times: 1.25 MB).
  sac = snt.scenarios.SAC(num_env_steps=120, learning_starts=100,
                          batch_size=32, buffer_size=buffer_size,
                          steps_per_call=50, seed=0, eval_every=None,
                          progress=False)
  assert sac.checks_per_call  # By the settings alone, before the run.
  sac(snt.nets.MLP([32, 32, 2], name="actor"),
      snt.nets.MLP([32, 32, 1], name="critic"), snt.optimizers.Adam(3e-3),
      snt.envs.Pendulum(num_envs=1, seed=0))
  assert sac.checks_per_call == per_call
  assert (sac.traced_step.rollback is not None) == per_call


def test_a_large_buffer_gives_the_same_bits_at_any_steps_per_call():
  # The per-call NaN check keeps the state to undo a failed call. A replay
  # buffer held as a tensor through the call (here 8M rows, 264 MB) put
  # over 205 MB alive in the graph, where Grappler's memory optimizer sums
  # a gradient's AddN in another order: the weights then differed from one
  # step a call by a rounding.
  weights, per_call = [], []
  for steps_per_call in (1, 50):
    tf.random.set_seed(0)
    # "auto" would check this buffer per step ("call" copies it whole).
    sac = snt.scenarios.SAC(num_env_steps=160, learning_starts=100,
                            batch_size=32, buffer_size=8_000_000,
                            steps_per_call=steps_per_call, seed=0,
                            nonfinite_check=("step" if steps_per_call == 1
                                             else "call"),
                            eval_every=None, progress=False)
    actor = snt.nets.MLP([32, 32, 2], name="actor")
    critic = snt.nets.MLP([32, 32, 1], name="critic")
    sac(actor, critic, snt.optimizers.Adam(3e-3),
        snt.envs.Pendulum(num_envs=1, seed=0))
    weights.append([v.numpy() for v in actor.trainable_variables])
    per_call.append(sac.checks_per_call)
    del sac
  assert per_call == [False, True]  # The step check, then the call check.
  for first, second in zip(*weights):
    np.testing.assert_array_equal(first, second)
