"""One row per scenario: how to train a tiny instance, for the cross-cutting
tests in test_scenario_table.py (resume, signals, NaN, mirrored, bad data).

A new scenario gets those tests by adding a `Row`: `train(**loop)` builds its
models (seeded) and data, makes the scenario with the loop settings given
(save_dir, hooks, strategy, on_nonfinite, ...) and trains it; `poison=True`
puts a NaN in its data (or rewards) so that some step's update is non-finite;
`bad_data()` calls it with data it must refuse, with an error matching
`bad_data_error`.
"""

import dataclasses
import importlib
import os
import sys
from typing import Any, Callable

import keras
import numpy as np
import tensorflow as tf

import sonnet_like as snt
from sonnet_like import envs

_EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "examples")


def _example(name):
  if _EXAMPLES not in sys.path:
    sys.path.insert(0, _EXAMPLES)
  return importlib.import_module(name)


@dataclasses.dataclass(frozen=True)
class Row:
  name: str
  train: Callable[..., snt.scenarios.Scenario]
  num_steps: int
  bad_data: Callable[[], Any]
  bad_data_error: str
  multi_replica: bool = True  # RL scenarios refuse multi-replica strategies.
  mirrored_atol: float = 1e-5  # Mirrored vs one device (float16: larger).

  @property
  def owner(self) -> str:
    """The scenario's name in messages: a variant "Supervised+mixed_float16"
    is a Supervised."""
    return self.name.partition("+")[0]


def state_arrays(scenario: snt.scenarios.Scenario) -> list[np.ndarray]:
  """Every variable of the scenario's trackables (models, optimizers, env,
  buffers), replica 0's copy, and the state of its random generator."""
  arrays = []
  for _, value in sorted(scenario.trackables().items()):
    variables = getattr(value, "variables", None)
    if variables is None:
      continue
    for variable in (variables() if callable(variables) else variables):
      local = scenario.strategy.experimental_local_results(variable)[0]
      arrays.append(np.asarray(local))
  for _, value in sorted(scenario.traced_step.state().items()):
    # Engine-owned (gradient sums, EMAs): in the checkpoint.
    for variable in value.variables:
      local = scenario.strategy.experimental_local_results(variable)[0]
      arrays.append(np.asarray(local))
  if scenario.loss_scale is not None:  # Engine-owned: in the checkpoint.
    arrays += [np.float32(scenario.loss_scale),
               np.int64(scenario.overflowed_updates)]
  return arrays + [scenario.rng.state.numpy()]


def model_arrays(scenario: snt.scenarios.Scenario) -> list[np.ndarray]:
  return [np.asarray(scenario.strategy.experimental_local_results(v)[0])
          for v in scenario.model_variables()]


def _scope(strategy):
  return (strategy or tf.distribute.get_strategy()).scope()


# ---- Supervised ----

def _classes(n=64, poison=False):
  rng = np.random.default_rng(0)
  x = rng.normal(size=(n, 5)).astype(np.float32)
  y = (x[:, 0] + x[:, 1] > 0).astype(np.int32)
  if poison:
    x[n // 2] = np.nan  # One batch an epoch.
  return x, y


def _loss(logits, labels):
  return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)


def train_supervised(poison=False, strategy=None, **loop):
  with _scope(strategy):
    tf.random.set_seed(0)
    model, optimizer = snt.nets.MLP([8, 2], name="mlp"), keras.optimizers.Adam(
        0.01)
  train = snt.scenarios.Supervised(batch_size=16, strategy=strategy, **loop)
  train(model, optimizer, _loss, _classes(poison=poison))
  return train


# The precision variant: float16 compute with a loss scale so large that the
# first 3 updates overflow (skipped, the scale halves) and that doubles after
# 8 finite updates, so a 12-step run both shrinks and grows it. (Where the
# scale meets the overflow boundary, one device and two replicas, which sum
# float16 gradients over different batches, can decide differently; these
# settings stay clear of it.)
MIXED_FLOAT16 = snt.scenarios.Precision("mixed_float16", initial_scale=2.0**21,
                                        growth_interval=8)


def train_supervised_float16(poison=False, strategy=None, **loop):
  # Plain SGD: under a multi-replica strategy a skipped update is a zero
  # update, which only SGD leaves exactly unchanged (BUILD_NOTES).
  with _scope(strategy):
    tf.random.set_seed(0)
    model, optimizer = snt.nets.MLP([8, 2], name="mlp"), keras.optimizers.SGD(
        0.5)
  train = snt.scenarios.Supervised(batch_size=16, strategy=strategy,
                                   precision=MIXED_FLOAT16, **loop)
  train(model, optimizer, _loss, _classes(poison=poison))
  return train


def train_supervised_updates(poison=False, strategy=None, **loop):
  """Supervised with the update settings: gradients of 3 micro-batches per
  update (saves at 4 and 8 fall between updates), the weights' EMA and a
  warm-up + cosine learning-rate schedule."""
  with _scope(strategy):
    tf.random.set_seed(0)
    model, optimizer = snt.nets.MLP([8, 2], name="mlp"), keras.optimizers.Adam(
        0.01)
  train = snt.scenarios.Supervised(
      batch_size=16, strategy=strategy, accumulate_steps=3, ema=0.9,
      learning_rate_schedule=snt.scenarios.schedules.warmup_cosine(
          warmup_steps=4, decay_steps=8), **loop)
  train(model, optimizer, _loss, _classes(poison=poison))
  return train


def _bad_supervised():
  snt.scenarios.Supervised(4, progress=False)(
      snt.Linear(2), keras.optimizers.SGD(0.1), _loss, _classes()[0])


# ---- GAN ----

def _two_modes(poison=False):
  rng = np.random.default_rng(0)
  modes = np.array([[-1.0, 0.0], [1.0, 0.0]], np.float32)
  data = (modes[rng.integers(2, size=128)] +
          rng.normal(0, 0.1, (128, 2))).astype(np.float32)
  if poison:
    data[64] = np.nan  # One batch an epoch.
  return data


def train_gan(poison=False, strategy=None, **loop):
  with _scope(strategy):
    tf.random.set_seed(0)
    generator = snt.nets.MLP([8, 2], name="generator")
    discriminator = snt.nets.MLP([8, 1], name="discriminator")
    g_opt = keras.optimizers.Adam(0.01, beta_1=0.5)
    d_opt = keras.optimizers.Adam(0.01, beta_1=0.5)
  gan = snt.scenarios.GAN(batch_size=16, latent_size=2, strategy=strategy,
                          **loop)
  gan(generator, discriminator, g_opt, d_opt, _two_modes(poison))
  return gan


def _bad_gan():
  snt.scenarios.GAN(4, latent_size=2, progress=False)(
      snt.Linear(2), snt.Linear(1), keras.optimizers.SGD(0.1),
      keras.optimizers.SGD(0.1), {"x": _two_modes(), "y": _two_modes()})


# ---- REINFORCE, PPO, DQN (rollouts or env steps on the guessing game) ----

class _Poisoned:
  """Before an environment class: its rewards turn NaN after `poison_after`
  calls of `step`, or come shaped `[num_envs, 1]` (a wrong shape) with
  `wide_reward`."""

  def __init__(self, *args, poison_after=None, wide_reward=False, **kwargs):
    super().__init__(*args, **kwargs)
    self.poison_after, self.wide_reward = poison_after, wide_reward
    self.steps = tf.Variable(0, trainable=False)

  def step(self, action):
    timestep = super().step(action)
    if self.wide_reward:
      return timestep._replace(reward=timestep.reward[:, None])
    if self.poison_after is None:
      return timestep
    self.steps.assign_add(1)
    return timestep._replace(reward=tf.where(
        self.steps > self.poison_after, np.nan, timestep.reward))


class _Guess(_Poisoned, envs.Guess):
  """Guess with the poison and wrong-shape options of `_Poisoned`."""


def train_reinforce(poison=False, bad_env=False, num_steps=12, **loop):
  tf.random.set_seed(0)
  reinforce = snt.scenarios.REINFORCE(num_env_steps=num_steps * 4 * 5,
                                      num_envs=4, rollout_length=5, **loop)
  reinforce(snt.nets.MLP([8, 2], name="policy"),
            snt.nets.MLP([8, 1], name="baseline"),
            keras.optimizers.Adam(0.01),
            _Guess(4, seed=5, poison_after=15 if poison else None,
                   wide_reward=bad_env))
  return reinforce


def train_ppo(poison=False, bad_env=False, num_steps=12, **loop):
  tf.random.set_seed(0)
  ppo = snt.scenarios.PPO(num_env_steps=num_steps * 4 * 5, num_envs=4,
                          rollout_length=5, num_epochs=2, num_minibatches=2,
                          **loop)
  ppo(snt.nets.MLP([8, 2], name="actor"), snt.nets.MLP([8, 1], name="critic"),
      keras.optimizers.Adam(0.01),
      _Guess(4, seed=5, poison_after=15 if poison else None,
             wide_reward=bad_env))
  return ppo


def train_ppo_annealed(poison=False, bad_env=False, num_steps=12, **loop):
  """PPO with its stateless options: the learning rate (a variable of the
  Keras optimizer) annealed from the step, and the KL early stop."""
  return train_ppo(poison, bad_env, num_steps,
                   learning_rate_schedule="linear", target_kl=0.0005, **loop)


def train_dqn(poison=False, bad_env=False, num_steps=12, **loop):
  tf.random.set_seed(0)
  dqn = snt.scenarios.DQN(num_env_steps=num_steps * 4, num_envs=4,
                          buffer_size=64, batch_size=8, learning_starts=8,
                          target_update_every=3, epsilon=(1.0, 0.1, 0.5),
                          **{"seed": 3, **loop})
  dqn(snt.nets.MLP([8, 2], name="q"), keras.optimizers.Adam(0.01),
      _Guess(4, seed=1, poison_after=5 if poison else None,
             wide_reward=bad_env))
  return dqn


class _Pendulum(_Poisoned, envs.Pendulum):
  """Pendulum with the poison and wrong-shape options of `_Poisoned`."""


def train_sac(poison=False, bad_env=False, num_steps=12, **loop):
  tf.random.set_seed(0)
  sac = snt.scenarios.SAC(num_env_steps=num_steps * 2, num_envs=2,
                          buffer_size=32, batch_size=8, learning_starts=6,
                          **{"seed": 3, **loop})
  sac(snt.nets.MLP([8, 2], name="actor"), snt.nets.MLP([8, 1], name="q"),
      keras.optimizers.Adam(0.01),
      _Pendulum(2, seed=1, poison_after=5 if poison else None,
                wide_reward=bad_env))
  return sac


def train_td3(poison=False, bad_env=False, num_steps=12, **loop):
  # Ornstein-Uhlenbeck noise: its state per environment is resumed too;
  # policy_delay 2 puts actor updates on every other update.
  tf.random.set_seed(0)
  td3 = snt.scenarios.TD3(num_env_steps=num_steps * 2, num_envs=2,
                          buffer_size=32, batch_size=8, learning_starts=6,
                          exploration_noise="ornstein_uhlenbeck",
                          noise_std=0.5, **{"seed": 3, **loop})
  td3(snt.nets.MLP([8, 1], name="actor"), snt.nets.MLP([8, 1], name="q"),
      keras.optimizers.Adam(0.01),
      _Pendulum(2, seed=1, poison_after=5 if poison else None,
                wide_reward=bad_env, max_episode_steps=5))
  return td3


def _bad_reward(scenario: str, env: str = "guess", num_envs: int = 4) -> str:
  return (rf"^{scenario}: env: \w+ environment '{env}': step\(\) returned "
          rf"reward of shape \[{num_envs}, 1\]; expected \[{num_envs}\]")


# ---- The example scenarios (examples/vae.py, examples/contrastive.py) ----

def _images(poison=False, flat=True):
  x = _example("_digits").load(flat=flat)[0][0][:128]
  x = x if flat else x[..., 0]
  if poison:
    x = x.copy()
    x[64] = np.nan  # One batch an epoch.
  return x


def train_vae(poison=False, strategy=None, **loop):
  vae_lib = _example("vae")
  with _scope(strategy):
    tf.random.set_seed(0)
    encoder, decoder = vae_lib.make_models(latent_size=4, hidden=16)
    optimizer = keras.optimizers.Adam(0.003)
  vae = vae_lib.VAE(latent_size=4, batch_size=16, strategy=strategy, **loop)
  vae(encoder, decoder, optimizer, _images(poison))
  return vae


def _bad_vae():
  _example("vae").VAE(4, progress=False)(
      *_example("vae").make_models(), keras.optimizers.SGD(0.1),
      _images(flat=False))


def train_contrastive(poison=False, strategy=None, **loop):
  contrastive = _example("contrastive")
  with _scope(strategy):
    tf.random.set_seed(0)
    encoder, head = contrastive.make_models(features=16, projection=8)
    optimizer = keras.optimizers.Adam(0.003)
  train = contrastive.Contrastive(batch_size=16, strategy=strategy, **loop)
  train(encoder, head, optimizer, _images(poison, flat=False))
  return train


def _bad_contrastive():
  contrastive = _example("contrastive")
  contrastive.Contrastive(4, progress=False)(
      *contrastive.make_models(), keras.optimizers.SGD(0.1), _images())


ROWS = [
    Row("Supervised", train_supervised, 12, _bad_supervised,
        r"^Supervised: train_data must hold \(inputs, targets\)"),
    Row("Supervised+mixed_float16", train_supervised_float16, 12,
        _bad_supervised,
        r"^Supervised: train_data must hold \(inputs, targets\)",
        mirrored_atol=1e-3),
    Row("Supervised+updates", train_supervised_updates, 12, _bad_supervised,
        r"^Supervised: train_data must hold \(inputs, targets\)"),
    Row("GAN", train_gan, 12, _bad_gan, r"^GAN: data "),
    Row("REINFORCE", train_reinforce, 12,
        lambda: train_reinforce(bad_env=True, progress=False),
        _bad_reward("REINFORCE"), multi_replica=False),
    Row("PPO", train_ppo, 12, lambda: train_ppo(bad_env=True, progress=False),
        _bad_reward("PPO"), multi_replica=False),
    Row("PPO+annealed", train_ppo_annealed, 12,
        lambda: train_ppo_annealed(bad_env=True, progress=False),
        _bad_reward("PPO"), multi_replica=False),
    Row("DQN", train_dqn, 12, lambda: train_dqn(bad_env=True, progress=False),
        _bad_reward("DQN"), multi_replica=False),
    Row("SAC", train_sac, 12, lambda: train_sac(bad_env=True, progress=False),
        _bad_reward("SAC", "pendulum", num_envs=2), multi_replica=False),
    Row("TD3", train_td3, 12, lambda: train_td3(bad_env=True, progress=False),
        _bad_reward("TD3", "pendulum", num_envs=2), multi_replica=False),
    Row("VAE", train_vae, 12, _bad_vae, r"^VAE: train_data must hold"),
    Row("Contrastive", train_contrastive, 12, _bad_contrastive,
        r"^Contrastive: train_data must hold"),
]

BY_NAME = {row.name: row for row in ROWS}


def train(row: Row, **loop) -> snt.scenarios.Scenario:
  """Trains `row`'s tiny instance for its `num_steps` with `loop` settings."""
  loop.setdefault("progress", False)
  loop.setdefault("num_steps", row.num_steps)
  return row.train(**loop)
