"""The scenarios' precision setting and dynamic loss scaling (issue 16).

Resume after SIGKILL and mirrored-equals-one-device under mixed_float16 are
the "Supervised+mixed_float16" row of tests/scenario_table.py.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.scenarios.updates import loss_scale as loss_scale_lib

Precision = snt.scenarios.Precision


def _data(n=128):
  rng = np.random.default_rng(0)
  x = rng.normal(size=(n, 6)).astype(np.float32)
  return x, (x[:, 0] - x[:, 1] > 0).astype(np.int32)


def _loss(logits, labels):
  return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)


def _train(precision, num_steps=60, model=None, optimizer=None, **loop):
  tf.random.set_seed(0)
  model = model or snt.nets.MLP([16, 2], name="mlp")
  train = snt.scenarios.Supervised(num_steps=num_steps, batch_size=32,
                                   progress=False, precision=precision,
                                   **loop)
  data = _data()
  history = train(model, optimizer or keras.optimizers.Adam(0.02), _loss,
                  data, eval_data=data)
  return train, history, model


class Recording(snt.Module):
  """An MLP that records the dtype its hidden layer computes in."""

  def __init__(self):
    super().__init__(name="recording")
    self.hidden, self.out = snt.Linear(16), snt.Linear(2)
    self.dtypes = []

  def __call__(self, x):
    h = self.hidden(x)
    self.dtypes.append(h.dtype)
    return self.out(tf.nn.relu(h))


def test_dynamic_loss_scale_grows_halves_and_floors_at_one():
  scale = loss_scale_lib.DynamicLossScale(4.0, growth_interval=2)
  yes, no = tf.constant(True), tf.constant(False)
  seen = []
  for grads_finite, loss_finite in [(yes, yes), (yes, yes), (no, yes),
                                    (no, yes), (no, yes), (no, yes),
                                    (no, no), (yes, yes)]:
    scale.update(grads_finite, loss_finite)
    seen.append(float(scale.scale.numpy()))
  # Two finite in a row double; an overflow halves (not below 1); a
  # non-finite loss is the NaN guard's business and changes nothing.
  assert seen == [4.0, 8.0, 4.0, 2.0, 1.0, 1.0, 1.0, 1.0]
  assert int(scale.overflows.numpy()) == 4
  assert int(scale.good_updates.numpy()) == 1


@pytest.mark.parametrize("policy,dtype", [("mixed_float16", tf.float16),
                                          ("mixed_bfloat16", tf.bfloat16),
                                          ("float32", tf.float32)])
def test_models_compute_in_the_precision_with_float32_variables(policy,
                                                                dtype):
  model = Recording()
  train, history, _ = _train(policy, num_steps=40, model=model)
  assert dtype in model.dtypes  # The traced step (evaluation: float32).
  assert set(model.dtypes) <= {dtype, tf.float32}
  assert all(v.dtype == tf.float32 for v in model.variables)
  assert history.eval["accuracy"][-1] > 0.9
  assert (train.loss_scale is not None) == (policy == "mixed_float16")
  assert ("loss_scale" in history.train) == (policy == "mixed_float16")


def test_forced_overflow_recovers_and_trains():
  huge = Precision("mixed_float16", initial_scale=2.0**60, growth_interval=10)
  train, history, _ = _train(huge, num_steps=80, on_nonfinite="raise")
  # Overflowed updates are skipped and counted, not a NonFiniteError.
  assert train.overflowed_updates >= 30  # 2**60 -> ~2**15 or below.
  assert train.loss_scale < 2.0**40 and train.skipped_steps == 0
  assert history.eval["accuracy"][-1] > 0.9


def test_overflow_handling_is_the_same_with_clip_norm_and_k_steps():
  huge = Precision("mixed_float16", initial_scale=2.0**30, growth_interval=3)
  runs = [_train(huge, num_steps=24, clip_norm=1.0, steps_per_call=k,
                 optimizer=keras.optimizers.SGD(0.5)) for k in (1, 4)]
  (one, _, a), (four, _, b) = runs
  assert one.overflowed_updates == four.overflowed_updates > 0
  assert one.loss_scale == four.loss_scale
  for x, y in zip(a.variables, b.variables):
    np.testing.assert_array_equal(x.numpy(), y.numpy())


@pytest.mark.parametrize("policy", ["float32", "mixed_float16",
                                    "mixed_bfloat16"])
def test_jit_compile_with_each_precision(policy):
  plain = _train(policy, num_steps=20)[2]
  compiled = _train(policy, num_steps=20, jit_compile=True)[2]
  for x, y in zip(plain.variables, compiled.variables):
    np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=0.05, atol=0.02)


def test_a_nan_in_the_data_is_still_a_nonfinite_error():
  x, y = _data()
  x[5] = np.nan
  train = snt.scenarios.Supervised(num_steps=10, batch_size=32,
                                   progress=False, precision="mixed_float16")
  with pytest.raises(snt.scenarios.NonFiniteError, match="^Supervised: "):
    train(snt.nets.MLP([4, 2]), keras.optimizers.SGD(0.1), _loss, (x, y))
  assert train.overflowed_updates == 0


def test_keras_loss_scale_optimizer_is_refused():
  lso = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(0.1))
  with pytest.raises(TypeError, match=r"^Supervised: optimizer is a Keras "
                     r"LossScaleOptimizer.*inner_optimizer.*mixed_float16"):
    _train("float32", num_steps=2, optimizer=lso)
  gan = snt.scenarios.GAN(num_steps=2, batch_size=8, latent_size=2,
                          progress=False)
  with pytest.raises(TypeError, match="^GAN: .*LossScaleOptimizer"):
    gan(snt.nets.MLP([4, 2]), snt.nets.MLP([4, 1]),
        keras.optimizers.LossScaleOptimizer(keras.optimizers.Adam()),
        keras.optimizers.Adam(), _data()[0][:, :2])


def test_gradients_not_from_self_gradients_are_an_error_under_float16():
  class Unscaled(snt.scenarios.Supervised):
    def train_step(self, data):
      x, y = data
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean(_loss(self.forward(self.model, x), y))
      grads = tape.gradient(loss, self.model.trainable_variables)
      self.apply_update(self.optimizer, grads,
                        self.model.trainable_variables, loss=loss)
      return {"loss": loss}

  train = Unscaled(num_steps=2, batch_size=32, progress=False,
                   precision="mixed_float16")
  with pytest.raises(ValueError, match=r"Unscaled: under precision='mixed_float16'.*self\.gradients\("):
    train(snt.nets.MLP([4, 2]), keras.optimizers.SGD(0.1), _loss, _data())


def test_a_model_left_in_float32_is_named_in_a_warning():
  keras.utils.set_random_seed(0)  # Keras draws the Dense's initial kernel.
  keras_model = keras.Sequential([keras.Input([6]), keras.layers.Dense(2)],
                                 name="keras_head")
  with pytest.warns(UserWarning, match=r"^Supervised: precision="
                    r"'mixed_bfloat16', but .*'keras_head' computes in "
                    "float32: it is a Keras"):
    _, history, _ = _train("mixed_bfloat16", num_steps=60, model=keras_model)
  assert history.eval["accuracy"][-1] > 0.8  # Trains, in float32.

  class RawVariables(tf.Module):
    def __init__(self):
      super().__init__(name="raw")
      self.w = tf.Variable(tf.random.normal([6, 2], seed=1))

    def __call__(self, x):
      return x @ self.w

  with pytest.warns(UserWarning, match=r"RawVariables 'raw' computes in "
                    "float32: its variables are not read through snt.Module"):
    _train("mixed_float16", num_steps=5, model=RawVariables())


def test_a_float32_model_in_an_snt_module_is_named_too():
  class Promoting(snt.Module):  # bfloat16 x float32 matmul: float32 (TF).
    def __init__(self):
      super().__init__(name="promoting")
      self.raw = tf.Module()
      self.raw.w = tf.Variable(tf.random.normal([6, 2], seed=1))

    def __call__(self, x):
      return tf.matmul(x, self.raw.w)

  with pytest.warns(UserWarning, match=r"Promoting 'promoting' computes in "
                    r"float32: its matrix products .*\['float32'\]"):
    _train("mixed_bfloat16", num_steps=5, model=Promoting())


def test_precision_setting_errors():
  with pytest.raises(ValueError, match=r"^Supervised: precision must be one "
                     r"of \['float32', 'mixed_float16', 'mixed_bfloat16'\]"):
    snt.scenarios.Supervised(num_steps=1, precision="float16")
  with pytest.raises(ValueError, match="^Precision: initial_scale must be"):
    Precision("mixed_float16", initial_scale=0.5)
  with pytest.raises(ValueError, match="^Precision: growth_interval must"):
    Precision("mixed_float16", growth_interval=0)


def test_gan_learns_both_modes_under_mixed_bfloat16():
  # test_gan's learning test, with both players in bfloat16.
  from tests.scenarios.gan import test_scenario as test_gan  # pylint: disable=g-import-not-at-top
  generator, discriminator = test_gan._nets()  # pylint: disable=protected-access
  gan = snt.scenarios.GAN(num_steps=1_500, batch_size=64, latent_size=4,
                          steps_per_call=100, loss="non_saturating",
                          gradient_penalty=0.1, penalty="r1",
                          generator_ema=0.99, eval_every=1_500,
                          progress=False, precision="mixed_bfloat16")
  history = gan(generator, discriminator, *test_gan._adams(),  # pylint: disable=protected-access
                test_gan._two_modes(),  # pylint: disable=protected-access
                evaluators=[snt.scenarios.gan_eval.ModeCoverage(
                    test_gan._MODES, test_gan._STD)])  # pylint: disable=protected-access
  assert history.eval["modes"] == [2.0]
  assert history.eval["high_quality"][-1] > 50.0


def test_gan_both_players_skip_overflows_under_mixed_float16():
  from tests.scenarios.gan import test_scenario as test_gan  # pylint: disable=g-import-not-at-top
  generator, discriminator = test_gan._nets(hidden=8)  # pylint: disable=protected-access
  g_opt, d_opt = test_gan._adams()  # pylint: disable=protected-access
  gan = snt.scenarios.GAN(
      num_steps=30, n_critic=2, batch_size=16, latent_size=2, progress=False,
      precision=Precision("mixed_float16", initial_scale=2.0**50))
  history = gan(generator, discriminator, g_opt, d_opt,
                test_gan._two_modes(64))  # pylint: disable=protected-access
  # Three updates a step share the scale: it falls within the first steps,
  # and each player's overflowed updates are skipped (not applied).
  assert gan.overflowed_updates >= 20
  assert int(g_opt.iterations) + int(d_opt.iterations) == (
      3 * 30 - gan.overflowed_updates)
  assert np.all(np.isfinite(history.train["g_loss"]))


def test_ppo_learns_guess_under_mixed_bfloat16():
  from tests import rl_toys  # pylint: disable=g-import-not-at-top
  env, eval_env = rl_toys.Guess(8), rl_toys.Guess(16, seed=1)
  ppo = snt.scenarios.PPO(num_env_steps=4_000, num_envs=8, rollout_length=25,
                          num_epochs=2, num_minibatches=2, eval_every=4,
                          eval_episodes=32, steps_per_call=3, log_every=2,
                          progress=False, jit_compile=True,
                          precision="mixed_bfloat16")
  history = ppo(snt.Linear(2, name="actor"), snt.Linear(1, name="critic"),
                keras.optimizers.Adam(0.05), env, eval_env=eval_env)
  assert history.eval["return"][-1] >= 4.5  # test_ppo's threshold.
