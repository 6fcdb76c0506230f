"""Recipes past classic control (issue 60): MuJoCo (SAC, TD3, PPO) and Atari
(PPO, DQN).

The settings are checked against rl-baselines3-zoo's hyperparams/*.yml
(written out below in the zoo's own names), the networks' shapes on the
tasks' observations, and a few hundred environment steps of one recipe per
algorithm and suite run end to end. Nothing trains to convergence here:
benchmarks/zoo.py measures the returns. The MuJoCo tests skip when mujoco
is not installed (`pip install sonnet_like[mujoco]`), the Atari tests when
ale-py or OpenCV is not (`[atari]`).
"""

import dataclasses
import importlib.util

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt


def _installed(*modules: str) -> bool:
  return all(importlib.util.find_spec(m) is not None for m in modules)


needs_mujoco = pytest.mark.skipif(
    not _installed("mujoco", "gymnasium"),
    reason="MuJoCo recipes need mujoco (pip install sonnet_like[mujoco])")
needs_atari = pytest.mark.skipif(
    not _installed("ale_py", "cv2", "gymnasium"),
    reason="Atari recipes need ale-py and OpenCV (sonnet_like[atari])")

MUJOCO = ("HalfCheetah-v5", "Hopper-v5", "Walker2d-v5")
# Observation and action sizes of the MuJoCo tasks.
MUJOCO_SIZES = {"HalfCheetah-v5": (17, 6), "Hopper-v5": (11, 3),
                "Walker2d-v5": (17, 6)}
ATARI = ("BreakoutNoFrameskip-v4", "PongNoFrameskip-v4")
ATARI_ACTIONS = {"BreakoutNoFrameskip-v4": 4, "PongNoFrameskip-v4": 6}

# rl-baselines3-zoo, hyperparams/ppo.yml (HalfCheetah-v4, Hopper-v4,
# Walker2d-v4; `normalize: true` for each), in the zoo's names.
ZOO_PPO_MUJOCO = {
    "HalfCheetah-v5": dict(
        n_envs=1, n_timesteps=1e6, batch_size=64, n_steps=512, gamma=0.98,
        learning_rate=2.0633e-05, ent_coef=0.000401762, clip_range=0.1,
        n_epochs=20, gae_lambda=0.92, max_grad_norm=0.8, vf_coef=0.58096,
        log_std_init=-2, ortho_init=False, activation_fn="relu",
        net_arch=(256, 256)),
    "Hopper-v5": dict(
        n_envs=1, n_timesteps=1e6, batch_size=32, n_steps=512, gamma=0.999,
        learning_rate=9.80828e-05, ent_coef=0.00229519, clip_range=0.2,
        n_epochs=5, gae_lambda=0.99, max_grad_norm=0.7, vf_coef=0.835671,
        log_std_init=-2, ortho_init=False, activation_fn="relu",
        net_arch=(256, 256)),
    # No policy_kwargs: SB3's defaults (64-64 tanh, orthogonal, std 1).
    "Walker2d-v5": dict(
        n_envs=1, n_timesteps=1e6, batch_size=32, n_steps=512, gamma=0.99,
        learning_rate=5.05041e-05, ent_coef=0.000585045, clip_range=0.1,
        n_epochs=20, gae_lambda=0.95, max_grad_norm=1, vf_coef=0.871923,
        log_std_init=0, ortho_init=True, activation_fn="tanh",
        net_arch=(64, 64)),
}
# hyperparams/sac.yml `mujoco-defaults` (n_timesteps 1e6, learning_starts
# 10000) over SB3's SAC defaults.
ZOO_SAC_MUJOCO = dict(
    n_timesteps=1e6, learning_starts=10_000, learning_rate=3e-4,
    buffer_size=1_000_000, batch_size=256, tau=0.005, gamma=0.99,
    train_freq=1, gradient_steps=1, ent_coef="auto", net_arch=(256, 256))
# hyperparams/td3.yml `mujoco-defaults` over SB3's TD3 defaults.
ZOO_TD3_MUJOCO = dict(
    n_timesteps=1e6, learning_starts=10_000, noise_type="normal",
    noise_std=0.1, train_freq=1, gradient_steps=1, learning_rate=1e-3,
    batch_size=256, net_arch=(400, 300), buffer_size=1_000_000, tau=0.005,
    gamma=0.99, policy_delay=2, target_policy_noise=0.2,
    target_noise_clip=0.5)
# hyperparams/ppo.yml and dqn.yml `atari` (AtariWrapper, frame_stack 4,
# CnnPolicy) over SB3's defaults.
ZOO_PPO_ATARI = dict(
    n_envs=8, n_steps=128, n_epochs=4, batch_size=256, n_timesteps=1e7,
    learning_rate="lin_2.5e-4", clip_range="lin_0.1", vf_coef=0.5,
    ent_coef=0.01, gamma=0.99, gae_lambda=0.95, max_grad_norm=0.5)
ZOO_DQN_ATARI = dict(
    n_timesteps=1e7, buffer_size=10_000, learning_rate=1e-4, batch_size=32,
    learning_starts=100_000, target_update_interval=1000, train_freq=4,
    gradient_steps=1, exploration_fraction=0.1, exploration_final_eps=0.01,
    gamma=0.99, max_grad_norm=10)


def _lin(value: str) -> float:
  assert value.startswith("lin_")
  return float(value[4:])


# ---- MuJoCo: the zoo's settings and the networks' shapes. ----

@pytest.mark.parametrize("task", MUJOCO)
def test_ppo_mujoco_recipes_have_the_zoo_settings(task):
  zoo = ZOO_PPO_MUJOCO[task]
  recipe = snt.scenarios.PPO.recipe(task)
  ppo = recipe.scenario(progress=False)
  assert (ppo.num_envs, recipe.num_env_steps) == (zoo["n_envs"],
                                                  zoo["n_timesteps"])
  assert ppo.rollout_length == zoo["n_steps"]
  assert ppo.num_envs * ppo.rollout_length // ppo.num_minibatches == (
      zoo["batch_size"])
  assert (ppo.num_epochs, ppo.gamma, ppo.gae_lambda) == (
      zoo["n_epochs"], zoo["gamma"], zoo["gae_lambda"])
  assert (ppo.clip_ratio, ppo.entropy_coef, ppo.value_coef) == (
      zoo["clip_range"], zoo["ent_coef"], zoo["vf_coef"])
  assert ppo.guard.clip_norm == zoo["max_grad_norm"]
  assert recipe.optimizer().learning_rate == pytest.approx(
      zoo["learning_rate"])
  assert ppo.log_std_init == zoo["log_std_init"]
  assert recipe.orthogonal_init == zoo["ortho_init"]
  # Without SB3's ortho_init, PyTorch's default initialisation.
  assert recipe.pytorch_init == (not zoo["ortho_init"])
  assert (recipe.activation, recipe.hidden) == (zoo["activation_fn"],
                                                zoo["net_arch"])
  # The zoo's `normalize: true` is VecNormalize: observations and rewards.
  assert ppo.normalize_observations and ppo.scale_rewards
  assert ppo.learning_rate_schedule is None
  assert ppo.clip_ratio_schedule is None
  assert recipe.env() == task and not recipe.atari


@pytest.mark.parametrize("task", MUJOCO)
def test_sac_and_td3_mujoco_recipes_have_the_zoo_settings(task):
  sac_recipe = snt.scenarios.SAC.recipe(task)
  sac = sac_recipe.scenario(progress=False)
  zoo = ZOO_SAC_MUJOCO
  assert sac_recipe.num_env_steps == zoo["n_timesteps"]
  assert (sac.learning_starts, sac.buffer_size, sac.batch_size) == (
      zoo["learning_starts"], zoo["buffer_size"], zoo["batch_size"])
  assert (sac.tau, sac.gamma, sac.train_every, sac.gradient_steps) == (
      zoo["tau"], zoo["gamma"], zoo["train_freq"], zoo["gradient_steps"])
  assert (sac.alpha, sac.alpha_init, sac.target_entropy) == ("auto", 1.0,
                                                             None)
  assert sac_recipe.learning_rate == zoo["learning_rate"]
  assert sac_recipe.hidden == zoo["net_arch"]
  assert not sac.normalize_observations and sac.sde_sample_freq is None

  td3_recipe = snt.scenarios.TD3.recipe(task)
  td3 = td3_recipe.scenario(progress=False)
  zoo = ZOO_TD3_MUJOCO
  assert td3_recipe.num_env_steps == zoo["n_timesteps"]
  assert (td3.learning_starts, td3.buffer_size, td3.batch_size) == (
      zoo["learning_starts"], zoo["buffer_size"], zoo["batch_size"])
  assert (td3.exploration_noise, td3.noise_std) == ("gaussian",
                                                    zoo["noise_std"])
  assert (td3.tau, td3.gamma, td3.train_every, td3.gradient_steps) == (
      zoo["tau"], zoo["gamma"], zoo["train_freq"], zoo["gradient_steps"])
  assert (td3.policy_delay, td3.target_noise, td3.target_noise_clip) == (
      zoo["policy_delay"], zoo["target_policy_noise"],
      zoo["target_noise_clip"])
  assert td3_recipe.learning_rate == zoo["learning_rate"]
  assert td3_recipe.hidden == zoo["net_arch"]
  for recipe in (sac_recipe, td3_recipe):
    assert recipe.activation == "relu" and not recipe.orthogonal_init
    assert recipe.pytorch_init  # SB3's networks: PyTorch's nn.Linear.


@pytest.mark.parametrize("task", MUJOCO)
def test_mujoco_networks_fit_the_tasks(task):
  observation_size, action_size = MUJOCO_SIZES[task]
  observations = tf.zeros([3, observation_size])
  with_actions = tf.zeros([3, observation_size + action_size])
  # SAC's actor: means and log-stds; TD3's: actions; PPO's: means (the
  # log-std is the scenario's variable).
  for algo, outputs in (("SAC", 2 * action_size), ("TD3", action_size),
                        ("PPO", action_size)):
    actor, critic = getattr(snt.scenarios, algo).recipe(task).networks()
    assert actor(observations).shape == [3, outputs], algo
    critic_input = observations if algo == "PPO" else with_actions
    assert critic(critic_input).shape == [3, 1], algo


def test_pytorch_init_draws_weights_as_nn_linear():
  tf.random.set_seed(0)
  actor, critic = snt.scenarios.SAC.recipe("HalfCheetah-v5").networks()
  actor(tf.zeros([1, 17]))
  critic(tf.zeros([1, 23]))
  for variable in actor.trainable_variables + critic.trainable_variables:
    values = variable.numpy()
    if variable.shape.rank == 1:
      assert not values.any(), variable.name  # Biases start at zero.
      continue
    # Uniform in +-1/sqrt(fan_in): the range is nearly filled.
    bound = 1.0 / np.sqrt(variable.shape[0])
    assert np.abs(values).max() <= bound, variable.name
    assert np.abs(values).max() > 0.95 * bound, variable.name
  recipe = snt.scenarios.PPO.recipe("Walker2d-v5")
  with pytest.raises(ValueError, match=r"^Recipe PPO 'Walker2d-v5': "
                     "orthogonal_init and pytorch_init are exclusive"):
    dataclasses.replace(recipe, pytorch_init=True)


# ---- MuJoCo: a few hundred steps of each algorithm. ----

def _in_bounds(action: tf.Tensor, size: int) -> bool:
  return action.shape == [size] and bool(np.all(np.abs(action) <= 1.0))


@needs_mujoco
@pytest.mark.parametrize("algo,task", [("SAC", "HalfCheetah-v5"),
                                       ("TD3", "Walker2d-v5")])
def test_off_policy_mujoco_recipes_train(algo, task, tmp_path, monkeypatch):
  monkeypatch.chdir(tmp_path)  # MuJoCo writes MUJOCO_LOG.TXT here.
  recipe = getattr(snt.scenarios, algo).recipe(task)
  tf.random.set_seed(0)
  scenario = recipe.scenario(num_env_steps=300, learning_starts=200,
                             buffer_size=1_000, batch_size=32,
                             steps_per_call=50, eval_episodes=1, seed=0,
                             progress=False)
  actor, critic = recipe.networks(hidden=(32, 32))
  history = scenario(actor, critic, recipe.optimizer(), recipe.env())
  assert scenario.step == 300 and history.train["env_steps"][-1] == 300
  assert np.isfinite(history.train["critic_loss"][-1])
  assert np.isfinite(history.eval["return"][-1])  # The final evaluation.
  observation_size, action_size = MUJOCO_SIZES[task]
  action = scenario.act(np.zeros([observation_size], np.float32))
  assert _in_bounds(action, action_size)


@needs_mujoco
def test_the_ppo_hopper_recipe_trains_on_normalised_observations(
    tmp_path, monkeypatch):
  monkeypatch.chdir(tmp_path)
  recipe = snt.scenarios.PPO.recipe("Hopper-v5")
  tf.random.set_seed(0)
  ppo = recipe.scenario(num_env_steps=2 * 128, rollout_length=128,
                        num_minibatches=4, num_epochs=2, eval_episodes=1,
                        seed=0, progress=False)
  history = ppo(*recipe.networks(), recipe.optimizer(), recipe.env())
  assert ppo.step == 2 and np.isfinite(history.train["loss"][-1])
  assert history.train["updates"][-1] == 2 * 4
  # The running statistics saw every observation of both rollouts:
  # Hopper's height (observation 0) starts at 1.25 and falls.
  statistics = ppo.normalizer
  assert float(statistics.count.numpy()) >= 256
  assert 0.5 < float(statistics.mean.numpy()[0]) < 1.5
  # log_std_init -2: the policy's spread starts at exp(-2) per action.
  # 2 rollouts x 2 epochs x 4 minibatches at Adam 9.8e-5 move it little.
  np.testing.assert_allclose(ppo.policy.log_std.numpy(), -2.0, atol=0.01)
  action = ppo.act(np.zeros([11], np.float32))
  assert action.shape == [3] and np.all(np.isfinite(action))


# ---- Atari: the zoo's settings, the Nature CNN, a few hundred steps. ----

@pytest.mark.parametrize("game", ATARI)
def test_atari_recipes_have_the_zoo_settings(game):
  zoo = ZOO_PPO_ATARI
  recipe = snt.scenarios.PPO.recipe(game)
  ppo = recipe.scenario(progress=False)
  assert recipe.atari and recipe.actor_outputs == ATARI_ACTIONS[game]
  assert (ppo.num_envs, ppo.rollout_length, ppo.num_epochs) == (
      zoo["n_envs"], zoo["n_steps"], zoo["n_epochs"])
  assert ppo.num_envs * ppo.rollout_length // ppo.num_minibatches == (
      zoo["batch_size"])
  assert recipe.num_env_steps == zoo["n_timesteps"]
  # "lin_2.5e-4" and "lin_0.1": from the value down to 0 over the run.
  assert recipe.learning_rate == _lin(zoo["learning_rate"])
  assert ppo.clip_ratio == _lin(zoo["clip_range"])
  assert recipe.settings["learning_rate_schedule"] == "linear"
  assert recipe.settings["clip_ratio_schedule"] == "linear"
  assert (ppo.value_coef, ppo.entropy_coef, ppo.gamma, ppo.gae_lambda) == (
      zoo["vf_coef"], zoo["ent_coef"], zoo["gamma"], zoo["gae_lambda"])
  assert ppo.guard.clip_norm == zoo["max_grad_norm"]
  assert recipe.orthogonal_init  # SB3's CnnPolicy: ortho_init=True.

  zoo = ZOO_DQN_ATARI
  recipe = snt.scenarios.DQN.recipe(game)
  dqn = recipe.scenario(progress=False)
  assert recipe.num_env_steps == zoo["n_timesteps"]
  assert (dqn.buffer_size, dqn.batch_size, dqn.learning_starts) == (
      zoo["buffer_size"], zoo["batch_size"], zoo["learning_starts"])
  assert (dqn.target_update_every, dqn.train_every, dqn.gradient_steps) == (
      zoo["target_update_interval"], zoo["train_freq"],
      zoo["gradient_steps"])
  assert recipe.settings["epsilon"] == (1.0, zoo["exploration_final_eps"],
                                        zoo["exploration_fraction"])
  assert (recipe.learning_rate, dqn.gamma, dqn.guard.clip_norm) == (
      zoo["learning_rate"], zoo["gamma"], zoo["max_grad_norm"])
  assert dqn.tau == 1.0 and dqn.loss == "huber"


def test_atari_networks_are_nature_cnns_on_uint8_pixels():
  tf.random.set_seed(0)
  recipe = snt.scenarios.PPO.recipe("BreakoutNoFrameskip-v4")
  actor, critic = recipe.networks()
  pixels = tf.fill([2, 84, 84, 4], tf.constant(255, tf.uint8))
  logits, values = actor(pixels), critic(pixels)
  assert logits.shape == [2, 4] and values.shape == [2, 1]
  # One torso under two heads: the Nature CNN's 1,684,128 parameters
  # once, plus 513 * 4 (actor) and 513 (critic).
  variables = {id(v): v for v in actor.variables + critic.variables}
  assert sum(int(tf.size(v)) for v in variables.values()) == (
      1_684_128 + 513 * 4 + 513)
  # The actor's head starts near zero (orthogonal gain 0.01).
  assert float(tf.reduce_max(tf.abs(logits))) < 0.1
  q_network = snt.scenarios.DQN.recipe("PongNoFrameskip-v4").q_network()
  assert isinstance(q_network, snt.nets.NatureCNN)
  assert q_network(pixels).shape == [2, 6]
  with pytest.raises(ValueError, match=r"^Recipe PPO 'BreakoutNoFrameskip"
                     r"-v4': an Atari recipe's networks are Nature CNNs"):
    recipe.networks(hidden=(64, 64))


@needs_atari
def test_atari_recipe_envs_train_and_evaluate_differently():
  recipe = snt.scenarios.DQN.recipe("BreakoutNoFrameskip-v4")
  train_env, eval_env = recipe.env()(), recipe.env(training=False)()
  assert train_env.observation_space.shape == (84, 84, 4)
  assert train_env.observation_space.dtype == np.uint8
  # Training: lost lives end episodes, rewards clipped, FIRE after resets.
  names = set()
  for env in (train_env, eval_env):
    wrapper = env
    while hasattr(wrapper, "env"):
      names.add((env is train_env, type(wrapper).__name__))
      wrapper = wrapper.env
  assert {(True, "EpisodicLife"), (True, "ClipReward"),
          (True, "FireReset")} <= names
  assert not {(False, "EpisodicLife"), (False, "ClipReward"),
              (False, "FireReset")} & names


@needs_atari
@pytest.mark.parametrize("algo", ["PPO", "DQN"])
def test_atari_recipes_train_on_uint8_observations(algo):
  game = {"PPO": "BreakoutNoFrameskip-v4", "DQN": "PongNoFrameskip-v4"}[algo]
  recipe = getattr(snt.scenarios, algo).recipe(game)
  tf.random.set_seed(0)
  # An environment instance and no eval_env: no final evaluation (an
  # untrained greedy Breakout player may never press FIRE).
  env = snt.envs.make(recipe.env(), num_envs=2, seed=0)
  assert env.observation_spec.dtype == tf.uint8
  if algo == "PPO":
    scenario = recipe.scenario(num_env_steps=2 * 2 * 32, num_envs=2,
                               rollout_length=32, num_minibatches=2,
                               num_epochs=1, eval_every=None, seed=0,
                               progress=False)
    history = scenario(*recipe.networks(), recipe.optimizer(), env)
    assert scenario.step == 2 and history.train["updates"][-1] == 2
    # The clip range falls linearly over the run ("lin_0.1").
    assert history.train["clip_ratio"][-1] == pytest.approx(0.05)
  else:
    scenario = recipe.scenario(num_env_steps=200, num_envs=2,
                               buffer_size=200, learning_starts=100,
                               target_update_every=20, steps_per_call=25,
                               eval_every=None, seed=0, progress=False)
    history = scenario(recipe.q_network(), recipe.optimizer(), env)
    assert scenario.step == 100
    # The replay buffer keeps the pixels as they came: uint8.
    assert scenario.buffer.storage.observation.dtype == tf.uint8
  assert np.isfinite(history.train["loss"][-1])
  assert history.train["env_steps"][-1] == {"PPO": 128, "DQN": 200}[algo]
