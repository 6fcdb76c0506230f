"""Settings changed between runs of one save_dir are honoured or refused,
never half-applied (issue 30): the settings travel in every checkpoint and a
resume lists what changed in one line."""

import os
import re

import keras
import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.scenarios import hooks as hooks_lib
from sonnet_like.scenarios.run_folder import run_settings

_RNG = np.random.default_rng(0)
X = _RNG.normal(size=(128, 6)).astype("float32")
Y = (X[:, 0] > 0).astype("int64")
SPARSE = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def _optimizer(kind, rate):
  if kind == "keras":
    return keras.optimizers.Adam(rate)
  return snt.optimizers.Adam(rate)


def _train(save_dir, num_steps, rate=0.01, kind="keras", batch_size=32,
           hooks=()):
  tf.random.set_seed(0)
  model = snt.Linear(2, name="classifier")
  optimizer = _optimizer(kind, rate)
  scenario = snt.scenarios.Supervised(
      num_steps=num_steps, batch_size=batch_size, save_dir=str(save_dir),
      progress=False, log_every=2, hooks=hooks)
  scenario(model, optimizer, SPARSE, (X, Y))
  return model, optimizer


def _rate(optimizer):
  rate = optimizer.learning_rate
  return float(rate.numpy() if hasattr(rate, "numpy") else rate)


def _messages(capsys):
  return [line for line in capsys.readouterr().err.splitlines()
          if "settings changed" in line]


@pytest.mark.parametrize("kind", ["keras", "snt"])
def test_a_new_learning_rate_in_the_code_wins_for_every_optimizer(
    tmp_path, capsys, kind):
  _train(tmp_path, 4, rate=0.01, kind=kind)
  capsys.readouterr()
  _, optimizer = _train(tmp_path, 8, rate=0.005, kind=kind)
  assert _rate(optimizer) == pytest.approx(0.005)
  assert _messages(capsys) == [
      "Supervised: resuming with settings changed since the checkpoint: "
      "num_steps 4 -> 8; the learning rate of 'optimizer' 0.01 -> 0.005 "
      "(the code's value is used)."]


def test_the_new_rate_is_the_one_the_updates_use(tmp_path):
  # Resumed at 0.005 equals a run that used 0.005 from its step 4 on: the
  # Keras optimizer's rate variable is put back after the restore.
  _train(tmp_path / "a", 4, rate=0.01)
  resumed, _ = _train(tmp_path / "a", 8, rate=0.005)

  class SlowDown(hooks_lib.Hook):

    def step_end(self, scenario, step, logs):
      if step == 4:
        scenario.optimizer.learning_rate.assign(0.005)

  straight, _ = _train(tmp_path / "b", 8, rate=0.01, hooks=[SlowDown()])
  for a, b in zip(resumed.variables, straight.variables):
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_a_rate_changed_during_training_resumes_exactly(tmp_path, capsys):
  # The code gives the same rate both times: the checkpoint's value (set by
  # a hook during the first run) is kept, so resuming changes nothing.

  class Halve(hooks_lib.Hook):

    def step_end(self, scenario, step, logs):
      if step == 2:
        scenario.optimizer.learning_rate.assign(0.004)

  _train(tmp_path, 4, rate=0.01, hooks=[Halve()])
  capsys.readouterr()
  _, optimizer = _train(tmp_path, 6, rate=0.01)
  assert _rate(optimizer) == pytest.approx(0.004)
  assert _messages(capsys) == [
      "Supervised: resuming with settings changed since the checkpoint: "
      "num_steps 4 -> 6."]


def test_an_unchanged_resume_says_nothing_about_settings(tmp_path, capsys):
  _train(tmp_path, 2)
  capsys.readouterr()
  scenario_dir = str(tmp_path)
  tf.random.set_seed(0)
  scenario = snt.scenarios.Supervised(num_steps=2, batch_size=32,
                                      save_dir=scenario_dir, progress=False,
                                      log_every=2)
  scenario(snt.Linear(2, name="classifier"), keras.optimizers.Adam(0.01),
           SPARSE, (X, Y))
  assert _messages(capsys) == []


def test_a_new_batch_size_is_refused_before_anything_changes(tmp_path):
  _train(tmp_path, 4, batch_size=32)
  before = {name: (tmp_path / name).read_bytes()
            for name in os.listdir(tmp_path) if name.startswith("ckpt")}
  with pytest.raises(run_settings.ResumeSettingsError, match="^" + re.escape(
      f"Supervised: the checkpoint in {tmp_path} was saved feeding "
      "train_data in batches of (32, 6), (32,) (batch_size=32), but this run "
      "feeds batches of (64, 6), (64,) (batch_size=64); the checkpointed "
      "data position counts the old batches. Resume with batch_size=32, or "
      "pass restart=True (or another save_dir) to train from step 0 with the "
      "new batches.") + "$"):
    _train(tmp_path, 8, batch_size=64)
  after = {name: (tmp_path / name).read_bytes()
           for name in os.listdir(tmp_path) if name.startswith("ckpt")}
  assert after == before
  _train(tmp_path, 6, batch_size=32)  # The way out the sentence gives.


def test_a_restart_takes_the_new_batch_size(tmp_path):
  _train(tmp_path, 2, batch_size=32)
  tf.random.set_seed(0)
  scenario = snt.scenarios.Supervised(num_steps=2, batch_size=64,
                                      save_dir=str(tmp_path), progress=False,
                                      restart=True)
  history = scenario(snt.Linear(2, name="classifier"),
                     keras.optimizers.Adam(0.01), SPARSE, (X, Y))
  assert history.train["step"][-1] == 2


def test_the_record_holds_a_scenarios_own_settings(tmp_path, capsys):
  # PPO's constructor arguments (not the engine's) are compared too.
  def ppo(gamma):
    tf.random.set_seed(0)
    scenario = snt.scenarios.PPO(num_env_steps=64, rollout_length=32,
                                 num_envs=2, num_epochs=1, num_minibatches=1,
                                 gamma=gamma, save_dir=str(tmp_path),
                                 progress=False)
    env = snt.envs.make("CartPole-v1", in_graph=True, num_envs=2)
    scenario(snt.nets.MLP([8, 2]), snt.nets.MLP([8, 1]),
             snt.optimizers.Adam(1e-3), env)
    return scenario

  ppo(0.99)
  capsys.readouterr()
  scenario = ppo(0.9)
  del scenario
  (line,) = _messages(capsys)
  assert "gamma 0.99 -> 0.9" in line and line.startswith("PPO: ")


def test_arguments_of_binds_positional_keyword_and_passed_on_values():

  class Base:

    def __init__(self, num_steps, *, log_every=100):
      pass

  class Mine(Base):

    def __init__(self, width, *, depth=2, **kwargs):
      super().__init__(**kwargs)

  assert run_settings.arguments_of(Mine, (8,), {"num_steps": 3}) == {
      "width": 8, "depth": 2, "num_steps": 3}
  assert run_settings.arguments_of(Mine, (8,), {"nope": 1}) == {
      "width": 8, "depth": 2, "nope": 1}
  assert run_settings.arguments_of(Mine, (), {}) == {}  # width is missing.
  assert run_settings.arguments_of(Mine, (1, 2), {}) == {}
