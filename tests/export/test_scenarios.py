"""Scenarios' export_dir: what each exports, and when the engine exports."""

import os
import signal

import keras
import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from tests import export_common
from tests import rl_toys


def _cross_entropy(logits, labels):
  return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)


def _classification(n: int = 64):
  x = export_common.normal((n, 3))
  return x, (x.sum(axis=1) > 0).astype(np.int32)


class _LastWeights(snt.scenarios.Hook):
  """Keeps the model's weights after the last step (before hooks end)."""

  def __init__(self):
    self.values = None

  def step_end(self, scenario, step, logs):
    if step == scenario.num_steps:
      self.values = [v.numpy() for v in scenario.model_variables()]


def test_every_scenario_exports_what_it_trained(tmp_path):
  tf.random.set_seed(0)
  x, y = _classification()
  model = snt.nets.MLP([8, 2], name="classifier")
  last = _LastWeights()
  # The best evaluation by "max loss" is the first: early stopping puts
  # those weights back, and they are what must be exported.
  supervised = snt.scenarios.Supervised(
      num_steps=30, batch_size=16, eval_every=10, progress=False,
      export_dir=tmp_path / "supervised",
      hooks=[snt.scenarios.EarlyStopping("loss", mode="max", patience=5),
             last])
  supervised(model, keras.optimizers.SGD(0.5), _cross_entropy, (x, y),
             eval_data=(x, y))
  assert not np.array_equal(last.values[0], model.variables[0].numpy())

  real = export_common.normal((128, 2)) * 0.5 + 3.0
  generator = snt.nets.MLP([8, 2], name="generator")
  gan = snt.scenarios.GAN(num_steps=20, batch_size=32, latent_size=4,
                          generator_ema=0.9, progress=False,
                          export_dir=tmp_path / "gan")
  gan(generator, snt.nets.MLP([8, 1], name="discriminator"),
      keras.optimizers.Adam(0.01), keras.optimizers.Adam(0.01), real)

  actor = snt.Linear(2, name="actor")
  ppo = snt.scenarios.PPO(num_env_steps=400, num_envs=4, rollout_length=10,
                          num_epochs=1, num_minibatches=1, progress=False,
                          export_dir=tmp_path / "ppo")
  ppo(actor, snt.Linear(1, name="critic"), keras.optimizers.Adam(0.05),
      rl_toys.Guess(4))

  q_network = snt.nets.MLP([8, 2], name="q")
  dqn = snt.scenarios.DQN(num_env_steps=200, num_envs=4, learning_starts=40,
                          batch_size=16, progress=False,
                          export_dir=tmp_path / "dqn")
  dqn(q_network, keras.optimizers.Adam(0.01), rl_toys.Guess(4))

  inputs = export_common.normal((9, 3), 5)
  signs = np.sign(export_common.normal((7, 1), 6)).astype(np.float32)
  got = export_common.load_and_call([
      (str(tmp_path / "supervised"), "serving_default", {"inputs": inputs}),
      (str(tmp_path / "gan"), "sample",
       {"num_samples": np.int32(50), "seed": np.int64(11)}),
      (str(tmp_path / "ppo"), "serving_default", {"observation": signs}),
      (str(tmp_path / "dqn"), "serving_default", {"observation": signs}),
  ])
  logits = model(inputs).numpy()
  export_common.assert_bitwise(got[0], {
      "outputs": logits, "probabilities": tf.nn.softmax(logits).numpy(),
      "classes": np.argmax(logits, -1)})
  export_common.assert_bitwise(got[1], {"samples": gan.sample(50, seed=11)})
  # The EMA weights, not the generator's own.
  own = generator(tf.random.Generator.from_seed(11).normal([50, 4])).numpy()
  assert not np.array_equal(got[1]["samples"], own)
  export_common.assert_bitwise(got[2], {"action": np.argmax(
      actor(signs).numpy(), -1).astype(np.int32)})
  export_common.assert_bitwise(got[3], {"action": np.argmax(
      q_network(signs).numpy(), -1).astype(np.int32)})
  sample = tf.saved_model.load(str(tmp_path / "ppo")).signatures["sample"]
  assert sample(observation=tf.constant(signs),
                seed=tf.constant(1, tf.int64))["action"].shape == [7]


def test_reinforce_and_dict_inputs(tmp_path):
  actor = snt.Linear(2, name="policy")
  reinforce = snt.scenarios.REINFORCE(num_env_steps=200, num_envs=4,
                                      rollout_length=10, progress=False,
                                      export_dir=tmp_path / "reinforce")
  reinforce(actor, snt.Linear(1, name="baseline"),
            keras.optimizers.Adam(0.05), rl_toys.Guess(4))
  act = tf.saved_model.load(str(tmp_path / "reinforce")).signatures[
      "serving_default"]
  signs = tf.constant([[1.0], [-1.0], [1.0]])
  np.testing.assert_array_equal(act(observation=signs)["action"],
                                tf.argmax(actor(signs), -1,
                                          output_type=tf.int32))

  x = export_common.normal((32, 3))
  data = tf.data.Dataset.from_tensor_slices(
      ({"left": x[:, :2], "right": x[:, 2:]}, x.sum(axis=1))).batch(8)
  model = _TwoInputs()
  train = snt.scenarios.Supervised(num_steps=4, progress=False,
                                   export_dir=tmp_path / "regressor")
  train(model, keras.optimizers.SGD(0.1),
        lambda outputs, targets: tf.square(outputs - targets), data)
  served = tf.saved_model.load(str(tmp_path / "regressor")).signatures[
      "serving_default"]
  got = served(left=tf.constant(x[:5, :2]), right=tf.constant(x[:5, 2:]))
  assert list(got) == ["outputs"]  # Not a classifier: no probabilities.
  np.testing.assert_array_equal(
      got["outputs"], model({"left": x[:5, :2], "right": x[:5, 2:]}))


class _TwoInputs(snt.Module):
  """A regressor on {"left": [batch, 2], "right": [batch, 1]}."""

  def __init__(self):
    super().__init__(name="two_inputs")
    self.linear = snt.Linear(1, name="linear")

  def __call__(self, inputs):
    return self.linear(tf.concat([inputs["left"], inputs["right"]], -1))[:, 0]


class _Interrupt(snt.scenarios.Hook):

  def step_end(self, scenario, step, logs):
    if step == 4:
      os.kill(os.getpid(), signal.SIGTERM)


def _supervised(tmp_path, num_steps, hooks=()):
  return snt.scenarios.Supervised(
      num_steps=num_steps, batch_size=16, steps_per_call=2, progress=False,
      save_dir=tmp_path / "run", export_dir=tmp_path / "run" / "export",
      hooks=hooks)


def test_no_export_after_a_signal_and_one_when_resumed_to_the_end(tmp_path):
  x, y = _classification()
  model = snt.Linear(2, name="classifier")
  optimizer = keras.optimizers.SGD(0.5)
  with pytest.raises(SystemExit) as info:
    _supervised(tmp_path, 8, [_Interrupt()])(model, optimizer,
                                              _cross_entropy, (x, y))
  assert info.value.code == 143
  assert not (tmp_path / "run" / "export").exists()
  _supervised(tmp_path, 8)(model, optimizer, _cross_entropy, (x, y))
  served = tf.saved_model.load(str(tmp_path / "run" / "export"))
  np.testing.assert_array_equal(served(x)["outputs"], model(x))


def test_a_done_run_exports_only_if_there_is_no_export(tmp_path, capsys):
  x, y = _classification()
  model = snt.Linear(2, name="classifier")
  optimizer = keras.optimizers.SGD(0.5)
  snt.scenarios.Supervised(num_steps=4, batch_size=16, progress=False,
                           save_dir=tmp_path / "run")(
                               model, optimizer, _cross_entropy, (x, y))
  export = tmp_path / "run" / "export"
  _supervised(tmp_path, 4)(model, optimizer, _cross_entropy, (x, y))
  err = capsys.readouterr().err
  assert "already done" in err and f"exported to {export}" in err
  stamp = os.stat(export / "saved_model.pb").st_mtime_ns
  _supervised(tmp_path, 4)(model, optimizer, _cross_entropy, (x, y))
  assert "exported" not in capsys.readouterr().err
  assert os.stat(export / "saved_model.pb").st_mtime_ns == stamp


def test_export_dir_needs_an_export_method():

  class NoExport(snt.scenarios.Scenario):
    pass

  with pytest.raises(ValueError, match="NoExport: export_dir is set but "
                     r"NoExport defines no export\(directory\)"):
    NoExport(num_steps=1, export_dir="somewhere")
