"""One row per scenario for the population contract (test_population_table):
how to train a tiny population or solo run of it, which eval metric judges
its members, what its export is fed, and what must refuse after a
population's run. A new scenario gets the contract by adding a `Row`."""

import dataclasses
from typing import Any, Callable

import numpy as np
import tensorflow as tf

import sonnet_like as snt
from sonnet_like import envs

SEEDS = (3, 5)


@dataclasses.dataclass(frozen=True)
class Row:
  name: str
  train: Callable[..., snt.scenarios.Scenario]  # `train(**loop)`.
  num_steps: int
  eval_every: int
  metric: str  # Judges the members (`best`, `keep_best`).
  serving_inputs: dict[str, Any]  # For every signature of the export.
  # The calls that have no single answer after a population's run.
  single_answers: Callable[[snt.scenarios.Scenario], dict[str, Callable]]
  atol: float = 1e-5  # Member i against the solo run, train and eval.
  # Whether the table dry-runs the population: not where another dry run
  # goes through the same machinery (named at the row), to keep the
  # suite's time.
  dry_run: bool = True
  # Whether its export is also loaded where sonnet_like is not (a process
  # of its own, ~4 s: one policy row stands for the others).
  served_without_sonnet_like: bool = False


def _classes(n=64):
  rng = np.random.default_rng(0)
  x = rng.normal(size=(n, 4)).astype(np.float32)
  return x, (x[:, 0] + 0.5 * x[:, 1] > 0).astype(np.int32)


def _loss(logits, labels):
  return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
      labels, logits))


def train_supervised(**loop):
  supervised = snt.scenarios.Supervised(batch_size=16, **loop)
  supervised(snt.nets.MLP([8, 2], name="mlp"), snt.optimizers.Adam(0.01),
             _loss, _classes(), eval_data=_classes(32))
  return supervised


_MODES = np.array([[-1.0, 0.0], [1.0, 0.0]], np.float32)


def train_gan(**loop):
  rng = np.random.default_rng(0)
  data = (_MODES[rng.integers(2, size=128)] +
          rng.normal(0, 0.1, (128, 2))).astype(np.float32)
  gan = snt.scenarios.GAN(batch_size=16, latent_size=2, n_critic=2, **loop)
  gan(snt.nets.MLP([8, 2], name="generator"),
      snt.nets.MLP([8, 1], name="discriminator"),
      snt.optimizers.Adam(0.01, beta1=0.5),
      snt.optimizers.Adam(0.01, beta1=0.5), data,
      evaluators=[snt.scenarios.gan_eval.ModeCoverage(
          _MODES, 0.3, num_samples=200)])
  return gan


def _carts(seed=5):
  return envs.CartPole(4, seed=seed, max_episode_steps=40)


def _pendulums(num_envs):
  # Continuous actions: each member's greedy action (the mean) is its own,
  # so its evaluation tells its actor from another's (a greedy CartPole
  # policy of a few updates plays one action whatever its weights).
  return envs.Pendulum(num_envs, max_episode_steps=5)


def train_reinforce(num_steps, **loop):
  reinforce = snt.scenarios.REINFORCE(num_env_steps=num_steps * 4 * 5,
                                      num_envs=4, rollout_length=5,
                                      eval_episodes=8, **loop)
  reinforce(snt.nets.MLP([8, 1], name="policy"),
            snt.nets.MLP([8, 1], name="baseline"),
            snt.optimizers.Adam(0.01), _pendulums(4), eval_env=_pendulums(4))
  return reinforce


def train_ppo(num_steps, **loop):
  ppo = snt.scenarios.PPO(num_env_steps=num_steps * 4 * 5, num_envs=4,
                          rollout_length=5, num_epochs=2, num_minibatches=2,
                          eval_episodes=8, **loop)
  ppo(snt.nets.MLP([8, 1], name="actor"), snt.nets.MLP([8, 1], name="critic"),
      snt.optimizers.Adam(0.01), _pendulums(4), eval_env=_pendulums(4))
  return ppo


def train_dqn(num_steps, **loop):
  dqn = snt.scenarios.DQN(num_env_steps=num_steps * 4, num_envs=4,
                          buffer_size=64, batch_size=8, learning_starts=8,
                          train_every=2, gradient_steps=2,
                          target_update_every=4, eval_episodes=8, **loop)
  dqn(snt.nets.MLP([8, 2], name="q"), snt.optimizers.Adam(0.01), _carts(),
      eval_env=_carts(11))
  return dqn


def train_sac(num_steps, **loop):
  sac = snt.scenarios.SAC(num_env_steps=num_steps * 2, num_envs=2,
                          buffer_size=32, batch_size=8, learning_starts=6,
                          eval_episodes=2, **loop)
  sac(snt.nets.MLP([8, 2], name="actor"), snt.nets.MLP([8, 1], name="q"),
      snt.optimizers.Adam(0.01), _pendulums(2), eval_env=_pendulums(2))
  return sac


def train_td3(num_steps, **loop):
  td3 = snt.scenarios.TD3(num_env_steps=num_steps * 2, num_envs=2,
                          buffer_size=32, batch_size=8, learning_starts=6,
                          eval_episodes=2, **loop)
  td3(snt.nets.MLP([8, 1], name="actor"), snt.nets.MLP([8, 1], name="q"),
      snt.optimizers.Adam(0.01), _pendulums(2), eval_env=_pendulums(2))
  return td3


class Denoise(snt.scenarios.Scenario):
  """A user's own scenario: `train_step`, `evaluate_now` and `export`."""

  def __call__(self, model, optimizer, images):
    self.model, self.optimizer = model, optimizer
    self.images = images
    self.feed(images, batch_size=16)
    return self.run()

  def models(self):
    return {"model": self.model}

  def trackables(self):
    return {"model": self.model, "optimizer": self.optimizer}

  def build(self):
    self.model(self.example_batch())
    self.build_optimizer(self.optimizer, self.model.variables)

  def train_step(self, images):
    noisy = images + self.rng.normal(tf.shape(images), stddev=0.1)
    with tf.GradientTape() as tape:
      loss = tf.reduce_mean((self.forward(self.model, noisy) - images) ** 2)
    grads = self.gradients(tape, loss, self.model.variables)
    self.apply_update(self.optimizer, grads, self.model.variables,
                      loss=loss)
    return {"loss": loss}

  def evaluate_now(self):
    error = tf.reduce_mean((self.model(self.images[:32]) -
                            self.images[:32]) ** 2)
    return {"error": float(error)}

  def export(self, directory):
    return snt.export.save_module(self.model, directory,
                                  tf.TensorSpec([None, 4]))


def train_denoise(**loop):
  images = np.random.default_rng(0).uniform(size=(64, 4)).astype(np.float32)
  denoise = Denoise(**loop)
  denoise(snt.Linear(4, name="denoiser"), snt.optimizers.Adam(0.05), images)
  return denoise


def _env_steps(train):
  return lambda **loop: train(loop.pop("num_steps"), **loop)


_OBSERVATION = np.random.default_rng(0).uniform(
    -0.2, 0.2, (6, 4)).astype(np.float32)
_ANGLES = np.stack([np.cos(np.linspace(0, 3, 6)), np.sin(np.linspace(0, 3, 6)),
                    np.linspace(-1, 1, 6)], axis=1).astype(np.float32)


def _policy_calls(act, observations, env):
  return lambda scenario: {
      "act": lambda: act(scenario, observations),
      "evaluate_policy": lambda: snt.scenarios.evaluate_policy(
          scenario, env(), episodes=2),
      "export": lambda: scenario.export("unused"),
  }


_PENDULUM_CALLS = _policy_calls(lambda s, x: s.act(x), _ANGLES,
                                lambda: _pendulums(2))


ROWS = [
    Row("Supervised", train_supervised, 12, 4, "accuracy",
        {"inputs": _classes(6)[0]},
        lambda s: {"model": lambda: s.model(_classes(2)[0]),
                   "predict": lambda: s.predict(s.model, _classes(2)[0]),
                   "export": lambda: s.export("unused")},
        dry_run=False),  # test_supervised_population's dry run.
    Row("GAN", train_gan, 8, 4, "high_quality",
        {"latents": np.ones([3, 2], np.float32), "num_samples": 3, "seed": 7},
        lambda s: {"sample": lambda: s.sample(4),
                   "export": lambda: s.export("unused")},
        dry_run=False),  # A data-fed step, as Supervised's.
    Row("REINFORCE", _env_steps(train_reinforce), 6, 3, "return",
        {"observation": _ANGLES, "seed": 7}, _PENDULUM_CALLS,
        dry_run=False),  # Rollouts, as PPO's.
    Row("PPO", _env_steps(train_ppo), 6, 3, "return",
        {"observation": _ANGLES, "seed": 7}, _PENDULUM_CALLS,
        served_without_sonnet_like=True),
    Row("DQN", _env_steps(train_dqn), 12, 6, "return",
        {"observation": _OBSERVATION, "seed": 7},
        _policy_calls(lambda s, x: s.greedy(x), _OBSERVATION, _carts),
        dry_run=False),  # A replay buffer and a target network, as SAC's.
    Row("SAC", _env_steps(train_sac), 12, 6, "return",
        {"observation": _ANGLES, "seed": 7}, _PENDULUM_CALLS),
    Row("TD3", _env_steps(train_td3), 12, 6, "return",
        {"observation": _ANGLES, "seed": 7}, _PENDULUM_CALLS,
        dry_run=False),  # Twin critics and a replay buffer, as SAC's.
    Row("Denoise", train_denoise, 12, 4, "error",
        {"inputs": np.full([3, 4], 0.5, np.float32)},
        lambda s: {"model": lambda: s.model(np.zeros([1, 4], np.float32)),
                   "export": lambda: s.export("unused")}),
]
