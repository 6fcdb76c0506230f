"""The GAN scenario: learning, the critic cycle, EMA, sampling, errors,
evaluators, the NaN guard and MirroredStrategy."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.scenarios.gan import evaluation as gan_eval
from tests.scenarios import test_distribute_scenario

_MODES = np.array([[-1.0, 0.0], [1.0, 0.0]], np.float32)
_STD = 0.1


def _two_modes(n=2_000, seed=0):
  rng = np.random.default_rng(seed)
  which = rng.integers(2, size=n)
  return (_MODES[which] + rng.normal(0, _STD, size=(n, 2))).astype(np.float32)


def _nets(seed=0, hidden=32):
  tf.random.set_seed(seed)
  return (snt.nets.MLP([hidden, hidden, 2], name="generator"),
          snt.nets.MLP([hidden, hidden, 1], name="discriminator"))


def _adams(lr=1e-3):
  return (keras.optimizers.Adam(lr, beta_1=0.5),
          keras.optimizers.Adam(lr, beta_1=0.5))


def _flat(variables):
  return [v.numpy().copy() for v in variables]


def test_learns_both_modes_of_a_two_mode_mixture():
  generator, discriminator = _nets()
  gan = snt.scenarios.GAN(num_steps=1_500, batch_size=64, latent_size=4,
                          steps_per_call=100, loss="non_saturating",
                          gradient_penalty=0.1, penalty="r1",
                          generator_ema=0.99, eval_every=1_500,
                          progress=False)
  history = gan(generator, discriminator, *_adams(), _two_modes(),
                evaluators=[gan_eval.ModeCoverage(_MODES, _STD)])
  assert history.eval["step"] == [1_500]
  assert history.eval["modes"] == [2.0]
  assert history.eval["high_quality"][-1] > 50.0
  samples = gan.sample(1_000)
  # Both halves are populated, near the right places.
  assert 0.25 < (samples[:, 0] > 0).mean() < 0.75
  assert abs(np.abs(samples[:, 0]).mean() - 1.0) < 0.3
  assert set(history.train) >= {"step", "d_loss", "g_loss", "penalty"}


@pytest.mark.parametrize("n_critic", [3])
def test_each_step_is_n_critic_discriminator_updates_and_one_generator_update(
    n_critic):
  generator, discriminator = _nets()
  g_opt, d_opt = _adams()
  gan = snt.scenarios.GAN(num_steps=4, n_critic=n_critic, batch_size=8,
                          latent_size=2, steps_per_call=2, progress=False)
  gan(generator, discriminator, g_opt, d_opt, _two_modes(64))
  assert int(g_opt.iterations) == 4
  assert int(d_opt.iterations) == 4 * n_critic
  assert gan.step == 4


@pytest.mark.parametrize("loss,penalty", [
    ("minimax", None), ("non_saturating", "r1"), ("wasserstein", "wgan_gp"),
    ("hinge", "r1"), ("least_squares", None), ("hinge", "wgan_gp")])
def test_every_loss_and_penalty_trains_finitely(loss, penalty):
  generator, discriminator = _nets(hidden=8)
  generator(tf.zeros([1, 2]))
  gan = snt.scenarios.GAN(num_steps=3, batch_size=8, latent_size=2, loss=loss,
                          n_critic=2, gradient_penalty=1.0 if penalty else 0,
                          penalty=penalty or "wgan_gp", progress=False,
                          log_every=1)
  before = _flat(generator.trainable_variables)
  history = gan(generator, discriminator, *_adams(), _two_modes(64))
  assert all(np.isfinite(history.train["d_loss"]))
  assert ("penalty" in history.train) == (penalty is not None)
  changed = [not np.array_equal(a, b) for a, b in
             zip(before, _flat(generator.trainable_variables))]
  assert all(changed)


def test_steps_per_call_does_not_change_the_result():
  results = []
  for k in (1, 3):
    generator, discriminator = _nets()
    gan = snt.scenarios.GAN(num_steps=6, n_critic=2, batch_size=16,
                            latent_size=3, loss="wasserstein",
                            gradient_penalty=10.0, generator_ema=0.9,
                            steps_per_call=k, progress=False)
    gan(generator, discriminator, *_adams(), _two_modes(128))
    results.append(_flat(generator.trainable_variables +
                         discriminator.trainable_variables) +
                   [v.numpy() for v in gan._ema.averages])  # pylint: disable=protected-access
  for a, b in zip(*results):
    np.testing.assert_array_equal(a, b)


class _Record(snt.scenarios.Hook):

  def __init__(self, generator):
    self.generator, self.weights = generator, []

  def begin(self, scenario):
    self.weights.append(_flat(self.generator.trainable_variables))

  def step_end(self, scenario, step, logs):
    self.weights.append(_flat(self.generator.trainable_variables))


def test_ema_follows_its_formula_and_sampling_uses_it():
  generator, discriminator = _nets()
  record = _Record(generator)
  gan = snt.scenarios.GAN(num_steps=3, batch_size=16, latent_size=3,
                          generator_ema=0.5, progress=False, hooks=[record])
  gan(generator, discriminator, *_adams(1e-2), _two_modes(128))
  w0, w1, w2, w3 = record.weights
  for i, average in enumerate(gan._ema.averages):  # pylint: disable=protected-access
    expected = 0.5 * (0.5 * (0.5 * w0[i] + 0.5 * w1[i]) + 0.5 * w2[i]) + (
        0.5 * w3[i])
    np.testing.assert_allclose(average.numpy(), expected, rtol=1e-6)
  codes = tf.random.Generator.from_seed(7).normal([5, 3])
  with gan.ema_weights():
    expected = generator(codes).numpy()
  np.testing.assert_array_equal(gan.sample(5, seed=7), expected)
  assert not np.allclose(gan.sample(5, seed=7), generator(codes).numpy())
  # The generator's own weights are back after sampling.
  for a, b in zip(w3, _flat(generator.trainable_variables)):
    np.testing.assert_array_equal(a, b)


def test_without_ema_sampling_uses_the_generator():
  generator, discriminator = _nets()
  gan = snt.scenarios.GAN(num_steps=2, batch_size=16, latent_size=3,
                          progress=False)
  gan(generator, discriminator, *_adams(), _two_modes(64))
  codes = tf.random.Generator.from_seed(3).normal([4, 3])
  np.testing.assert_array_equal(gan.sample(4, seed=3),
                                generator(codes).numpy())
  assert "generator_ema" not in gan.trackables()


def test_custom_sampler_and_dataset_input():
  calls = []

  def sampler(rng, batch_size):
    calls.append(batch_size)
    return rng.uniform([batch_size, 5], -1.0, 1.0)

  generator, discriminator = _nets()
  data = tf.data.Dataset.from_tensor_slices(_two_modes(96)).batch(
      32, drop_remainder=True)
  gan = snt.scenarios.GAN(num_steps=3, sampler=sampler, progress=False)
  gan(generator, discriminator, *_adams(), data)
  assert gan.step == 3
  assert 32 in calls  # Drawn for the dataset's batches.
  assert 5 in {v.shape[0] for v in generator.trainable_variables
               if v.shape.rank == 2}  # Built for the sampler's codes.
  assert gan.sample(7).shape == (7, 2)


def test_evaluators_do_not_change_training():
  results = []
  for evaluators in ([], [gan_eval.ModeCoverage(_MODES, _STD, 100)]):
    generator, discriminator = _nets()
    gan = snt.scenarios.GAN(num_steps=6, batch_size=16, latent_size=3,
                            loss="wasserstein", gradient_penalty=1.0,
                            generator_ema=0.9, eval_every=2, progress=False)
    history = gan(generator, discriminator, *_adams(), _two_modes(128),
                  evaluators=evaluators)
    results.append(_flat(generator.trainable_variables))
  assert history.eval["step"] == [2, 4, 6]
  for a, b in zip(*results):
    np.testing.assert_array_equal(a, b)


def test_nonfinite_data_stops_with_the_engine_error():
  data = _two_modes(64)
  data[:] = np.nan
  generator, discriminator = _nets()
  gan = snt.scenarios.GAN(num_steps=3, batch_size=16, latent_size=3,
                          n_critic=2, progress=False)
  with pytest.raises(snt.scenarios.NonFiniteError, match="GAN: non-finite"):
    gan(generator, discriminator, *_adams(), data)
  assert gan.step == 0


@pytest.mark.parametrize("kwargs,message", [
    (dict(loss="wgan"),
     r"GAN: loss must be one of \[.*\] or a .*, got 'wgan'"),
    (dict(n_critic=0), "GAN: n_critic must be a positive int, got 0"),
    (dict(generator_ema=1.0), r"GAN: generator_ema must be a float in \[0, "
     r"1\) or None, got 1.0"),
    (dict(generator_ema=-0.1), "GAN: generator_ema must be"),
    (dict(gradient_penalty=-1.0), "GAN: gradient_penalty must be a "
     "non-negative float, got -1.0"),
    (dict(penalty="l2"), r"GAN: penalty must be one of \['wgan_gp', 'r1'\]"),
    (dict(latent_size=0), "GAN: latent_size must be a positive int"),
    (dict(sampler=3), "GAN: sampler must be callable"),
])
def test_constructor_errors_name_gan(kwargs, message):
  with pytest.raises((ValueError, TypeError), match=message):
    snt.scenarios.GAN(num_steps=1, **kwargs)


def test_wrong_data_is_refused_before_training():
  generator, discriminator = _nets()
  gan = snt.scenarios.GAN(num_steps=1, batch_size=8, progress=False)
  with pytest.raises(TypeError, match="GAN: data must be batches of real "
                     "examples, one tensor each"):
    gan(generator, discriminator, *_adams(), (_two_modes(32), np.zeros(32)))
  assert gan.step == 0


def test_discriminator_output_and_generator_shape_errors():
  tf.random.set_seed(0)
  gan = snt.scenarios.GAN(num_steps=1, batch_size=8, progress=False)
  with pytest.raises(ValueError, match=r"GAN: the discriminator must return "
                     r"one score per example, shaped \[batch\] or \[batch, 1\]"
                     r", got shape \[2, 3\]"):
    gan(snt.nets.MLP([4, 2], name="generator"),
        snt.nets.MLP([4, 3], name="discriminator"), *_adams(), _two_modes(32))
  with pytest.raises(ValueError, match=r"GAN: the generator's samples have "
                     r"shape \[3\] per example but the real data has \[2\]"):
    gan(snt.nets.MLP([4, 3], name="generator"),
        snt.nets.MLP([4, 1], name="discriminator"), *_adams(), _two_modes(32))
  optimizer = keras.optimizers.Adam()
  with pytest.raises(ValueError, match="GAN: g_optimizer and d_optimizer "
                     "must be two optimizer objects"):
    gan(*_nets(), optimizer, optimizer, _two_modes(32))
  with pytest.raises(TypeError, match="GAN: d_optimizer must have"):
    gan(*_nets(), keras.optimizers.Adam(), "adam", _two_modes(32))


def _mirrored_run(strategy, optimizer_fn, k, steps=4, n_critic=2):
  strategy = strategy or tf.distribute.get_strategy()
  with strategy.scope():
    generator, discriminator = _nets(hidden=8)
    g_opt, d_opt = optimizer_fn(), optimizer_fn()
  gan = snt.scenarios.GAN(
      num_steps=steps, n_critic=n_critic, batch_size=16, latent_size=3,
      loss="wasserstein", gradient_penalty=10.0, generator_ema=0.9,
      steps_per_call=k, shuffle=False, progress=False, log_every=1,
      strategy=strategy if strategy is not tf.distribute.get_strategy()
      else None)
  history = gan(generator, discriminator, g_opt, d_opt, _two_modes(128))
  variables = (list(generator.trainable_variables) +
               list(discriminator.trainable_variables) +
               list(gan._ema.averages))  # pylint: disable=protected-access
  values = [np.concatenate([np.ravel(x) for x in
                            strategy.experimental_local_results(v)])
            for v in variables]
  return values, history


@pytest.mark.parametrize("optimizer_fn,k", [
    (lambda: keras.optimizers.Adam(0.01), 2),
    (lambda: snt.optimizers.Adam(0.01), 1),
], ids=["keras_adam_k2", "snt_adam_k1"])
def test_mirrored_matches_one_device(optimizer_fn, k):
  strategy = test_distribute_scenario._mirrored()  # pylint: disable=protected-access
  single, single_history = _mirrored_run(None, optimizer_fn, k)
  mirrored, mirrored_history = _mirrored_run(strategy, optimizer_fn, k)
  for one, both in zip(single, mirrored):
    half = len(both) // 2
    np.testing.assert_array_equal(both[:half], both[half:])
    np.testing.assert_allclose(both[:half], one, rtol=1e-5, atol=1e-6)
  for key in ("d_loss", "g_loss", "penalty"):
    np.testing.assert_allclose(mirrored_history.train[key],
                               single_history.train[key], rtol=1e-4,
                               atol=1e-5)


def test_logs_checkpoints_tensorboard_and_progress_bar(tmp_path, capsys):
  generator, discriminator = _nets(hidden=8)
  gan = snt.scenarios.GAN(num_steps=4, batch_size=16, latent_size=3,
                          generator_ema=0.9, log_every=2, eval_every=4,
                          save_every=2, save_dir=str(tmp_path),
                          progress=True)
  gan(generator, discriminator, *_adams(), _two_modes(64),
      evaluators=[gan_eval.ModeCoverage(_MODES, _STD, 100)])
  tags = set()
  for kind in ("train", "eval"):
    for path in (tmp_path / "logs" / kind).iterdir():
      for event in tf.compat.v1.train.summary_iterator(str(path)):
        tags.update(v.tag for v in event.summary.value)
  assert tags >= {"d_loss", "g_loss", "modes", "high_quality"}
  assert tf.train.get_checkpoint_state(str(tmp_path)).model_checkpoint_path \
      .endswith("ckpt-4")
  reader = tf.train.load_checkpoint(str(tmp_path / "ckpt-4"))
  names = reader.get_variable_to_shape_map()
  assert any(n.startswith("generator_ema/averages/") for n in names)
  assert any(n.startswith("d_optimizer/") for n in names)
  assert "4/4" in capsys.readouterr().err
