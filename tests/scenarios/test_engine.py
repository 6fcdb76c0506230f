"""The engine: compiled calls, K steps per call, tracing, hooks, subclasses."""

import re

import keras
import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.scenarios import engine
from tests import optimizer_common


def _data(n=64):
  rng = np.random.default_rng(1)
  x = rng.normal(size=(n, 3)).astype(np.float32)
  return x, (x[:, 0] > 0).astype(np.int32)


def _loss(logits, labels):
  return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)


def _model():
  tf.random.set_seed(0)
  model = snt.Linear(2, name="model")
  model(tf.zeros([1, 3]))
  return model


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(num_steps=0), ValueError, "num_steps must be a positive int,"),
    (dict(num_steps=2.5), ValueError, "num_steps must be a positive int"),
    (dict(steps_per_call=0), ValueError, "steps_per_call must be a positive"),
    (dict(eval_every=-1), ValueError, "eval_every must be a positive int or"),
    (dict(save_every=5), ValueError, "save_every needs a save_dir"),
    (dict(on_nonfinite="ignore"), ValueError,
     r"on_nonfinite must be one of \['raise', 'skip'\], got 'ignore'"),
    (dict(nonfinite_check="never"), ValueError,
     r"nonfinite_check must be one of \['auto', 'step', 'call'\], got "),
    (dict(nonfinite_check="call", on_nonfinite="skip"), ValueError,
     "nonfinite_check='call' undoes a whole compiled call and cannot drop"),
    (dict(nonfinite_check="call", precision="mixed_float16"), ValueError,
     "nonfinite_check='call' cannot be used with precision='mixed_float16'"),
    (dict(clip_norm=0.0), ValueError, "clip_norm must be positive"),
    (dict(strategy="gpu"), TypeError, "strategy must be a tf.distribute"),
    (dict(hooks=[print]), TypeError, "hooks must be Hook instances"),
])
def test_constructor_errors(kwargs, error, match):
  kwargs = dict(dict(num_steps=10), **kwargs)
  with pytest.raises(error, match="Scenario: " + match):
    engine.Scenario(**kwargs)


def test_one_trace_per_run_whatever_the_boundaries():
  x, y = _data()
  train = snt.scenarios.Supervised(num_steps=23, batch_size=8,
                                   steps_per_call=5, eval_every=7,
                                   log_every=3, progress=False)
  history = train(_model(), keras.optimizers.SGD(0.1), _loss, (x, y),
                  eval_data=(x, y))
  assert train.train_function.experimental_get_tracing_count() == 1
  assert train.step == 23
  assert history.eval["step"] == [7, 14, 21, 23]
  # Calls were cut at every log boundary, never longer than 5 steps.
  assert history.train["step"] == [3, 6, 9, 12, 15, 18, 21, 23]


class _CountingSupervised(snt.scenarios.Supervised):
  traced = 0

  def train_step(self, data):
    self.traced += 1  # Python: runs once per trace.
    return super().train_step(data)


@pytest.mark.parametrize("optimizer", ["snt", "keras"])
def test_the_step_is_traced_once_whatever_the_optimizer(optimizer):
  # A Sonnet optimizer creates its slots at its first apply: made in build,
  # not in the step, which tf.function would otherwise trace a second time.
  x, y = _data()
  train = _CountingSupervised(num_steps=4, batch_size=8, progress=False)
  optimizer = (snt.optimizers.Adam(0.01) if optimizer == "snt"
               else keras.optimizers.Adam(0.01))
  train(_model(), optimizer, _loss, (x, y))
  assert train.traced == 1 and train.step == 4


@pytest.mark.parametrize("optimizer_fn", [lambda: keras.optimizers.SGD(0.1),
                                          lambda: keras.optimizers.Adam(0.01)])
def test_steps_per_call_does_not_change_the_result(optimizer_fn):
  x, y = _data()
  weights = []
  for k in (1, 4, 32):
    model = _model()
    snt.scenarios.Supervised(num_steps=13, batch_size=8, steps_per_call=k,
                             progress=False)(model, optimizer_fn(), _loss,
                                             (x, y))
    weights.append(model.w.numpy())
  np.testing.assert_array_equal(weights[0], weights[1])
  np.testing.assert_array_equal(weights[0], weights[2])


def test_jit_compile_matches():
  x, y = _data()
  weights = []
  for jit in (False, True):
    model = _model()
    snt.scenarios.Supervised(num_steps=6, batch_size=8, steps_per_call=3,
                             jit_compile=jit, progress=False)(
                                 model, keras.optimizers.Adam(0.01), _loss,
                                 (x, y))
    weights.append(model.w.numpy())
  np.testing.assert_allclose(weights[0], weights[1], rtol=1e-5, atol=1e-6)


class _Recorder(snt.scenarios.Hook):

  def __init__(self, stop_at=None):
    self.events, self.stop_at = [], stop_at

  def begin(self, scenario):
    self.events.append(("begin", scenario.step))

  def step_end(self, scenario, step, logs):
    self.events.append(("step", step, sorted(logs)))
    if self.stop_at and step >= self.stop_at:
      scenario.request_stop("enough")

  def eval_end(self, scenario, step, metrics):
    self.events.append(("eval", step))

  def end(self, scenario):
    self.events.append(("end", scenario.step))


def test_hook_order_and_request_stop():
  x, y = _data()
  hook = _Recorder(stop_at=6)
  train = snt.scenarios.Supervised(num_steps=10, batch_size=8, eval_every=4,
                                   steps_per_call=2, hooks=[hook],
                                   progress=False)
  history = train(_model(), keras.optimizers.SGD(0.1), _loss, (x, y),
                  eval_data=(x, y))
  logs = ["accuracy", "learning_rate", "loss", "steps_per_second"]
  assert hook.events == [
      ("begin", 0), ("step", 2, logs), ("eval", 4), ("step", 4, logs),
      ("step", 6, logs), ("end", 6)]
  assert history.stop_reason == "enough"


class TwoPlayer(engine.Scenario):
  """A GAN-shaped scenario: no dataset, two models, two optimizers,
  `n_critic` critic updates per generator update inside one step, and an
  EMA of the generator weights in the checkpoint."""

  def __call__(self, n_critic=3):
    self.n_critic = n_critic
    self.gen = snt.Linear(1, name="gen")
    self.critic = snt.Linear(1, name="critic")
    self.gen_opt = keras.optimizers.SGD(0.05)
    self.critic_opt = keras.optimizers.SGD(0.05)
    return self.run()

  def models(self):
    return {"gen": self.gen, "critic": self.critic}

  def build(self):
    self.gen(tf.zeros([1, 2]))
    self.critic(tf.zeros([1, 1]))
    self.ema = tf.Variable(self.gen.w, name="ema", trainable=False)
    self.critic_updates = tf.Variable(0, name="critic_updates")

  def trackables(self):
    return dict(self.models(), gen_opt=self.gen_opt,
                critic_opt=self.critic_opt, ema=self.ema,
                critic_updates=self.critic_updates)

  def train_step(self):
    real = 2.0 + self.rng.normal([8, 1])
    for _ in tf.range(self.n_critic):
      noise = self.rng.normal([8, 2])
      with tf.GradientTape() as tape:
        critic_loss = (tf.reduce_mean(self.critic(self.gen(noise))) -
                       tf.reduce_mean(self.critic(real)))
      grads = tape.gradient(critic_loss, self.critic.trainable_variables)
      self.apply_update(self.critic_opt, grads,
                        self.critic.trainable_variables, loss=critic_loss)
      self.critic_updates.assign_add(1)
    with tf.GradientTape() as tape:
      gen_loss = -tf.reduce_mean(self.critic(self.gen(self.rng.normal([8, 2]))))
    grads = tape.gradient(gen_loss, self.gen.trainable_variables)
    self.apply_update(self.gen_opt, grads, self.gen.trainable_variables,
                      loss=gen_loss)
    self.ema.assign(0.9 * self.ema + 0.1 * self.gen.w)
    return {"gen_loss": gen_loss, "critic_loss": critic_loss}


def test_gan_shaped_scenario_runs_and_resumes_exactly(tmp_path):
  tf.random.set_seed(0)
  whole = TwoPlayer(num_steps=12, steps_per_call=4, progress=False,
                    clip_norm=1.0)
  history = whole()
  assert whole.critic_updates.numpy() == 36
  # Each optimizer's rate is logged under its trackables() name.
  assert set(history.train) == {"step", "gen_loss", "critic_loss",
                                "learning_rate_gen_opt",
                                "learning_rate_critic_opt",
                                "steps_per_second"}

  tf.random.set_seed(0)
  first = TwoPlayer(num_steps=8, steps_per_call=4, save_dir=str(tmp_path),
                    progress=False, clip_norm=1.0)
  first()
  tf.random.set_seed(5)  # Different initial weights: all must be restored.
  second = TwoPlayer(num_steps=12, steps_per_call=4, save_dir=str(tmp_path),
                     progress=False, clip_norm=1.0)
  second()
  for a, b in [(whole.gen.w, second.gen.w), (whole.critic.w, second.critic.w),
               (whole.ema, second.ema)]:
    np.testing.assert_array_equal(a.numpy(), b.numpy())
  assert second.critic_updates.numpy() == 36
  reader = tf.train.load_checkpoint(tf.train.latest_checkpoint(str(tmp_path)))
  names = set(reader.get_variable_to_shape_map())
  assert any(n.startswith("rng/") for n in names)
  assert any(n.startswith("ema/") for n in names)


def test_overridden_step_with_two_outputs():

  class TwoHeads(snt.Module):

    def __init__(self):
      super().__init__(name="two_heads")
      self.a, self.b = snt.Linear(2, name="a"), snt.Linear(1, name="b")

    def __call__(self, x):
      return self.a(x), self.b(x)

  class MultiTask(snt.scenarios.Supervised):

    def train_step(self, data):
      inputs, targets = data
      with tf.GradientTape() as tape:
        logits, value = self.model(inputs)
        loss = (tf.reduce_mean(_loss(logits, targets)) +
                tf.reduce_mean(tf.square(value[:, 0] - inputs[:, 1])))
      variables = self.model.trainable_variables
      self.apply_update(self.optimizer, tape.gradient(loss, variables),
                        variables, loss=loss)
      return {"loss": loss}

  x, y = _data()
  x[8:16] = np.nan
  train = MultiTask(num_steps=4, batch_size=8, shuffle=False,
                    steps_per_call=4, progress=False)
  with pytest.raises(snt.scenarios.NonFiniteError, match="at step 1"):
    train(TwoHeads(), keras.optimizers.SGD(0.1), _loss, (x, y))


def test_train_step_must_be_implemented():
  with pytest.raises(NotImplementedError, match="must implement train_step"):
    engine.Scenario(num_steps=1, progress=False).run()


def test_reserved_trackable_names(tmp_path):

  class Clash(engine.Scenario):

    def trackables(self):
      return {"step": tf.Variable(1)}

  with pytest.raises(ValueError, match=r"must not use the names \['step'\]"):
    Clash(num_steps=1, save_dir=str(tmp_path), progress=False).run()


@pytest.mark.parametrize("settings, per_call", [
    (dict(steps_per_call=1), False),
    (dict(steps_per_call=7), False),
    (dict(steps_per_call=8), True),
    (dict(steps_per_call=8, on_nonfinite="skip"), False),
    (dict(steps_per_call=8, precision="mixed_float16"), False),
    (dict(steps_per_call=8, precision="mixed_bfloat16"), True),
    (dict(steps_per_call=1, nonfinite_check="call"), True),
    (dict(steps_per_call=32, nonfinite_check="step"), False),
])
def test_auto_checks_per_call_from_eight_updates_per_call(settings, per_call):
  assert engine.Scenario(num_steps=8, **settings).checks_per_call == per_call


def test_scenarios_that_update_several_times_a_step_say_so():
  gan = snt.scenarios.GAN(num_steps=8, n_critic=3, steps_per_call=2)
  assert gan.updates_per_step == 4 and gan.checks_per_call
  assert not snt.scenarios.GAN(num_steps=8, steps_per_call=2).checks_per_call
  ppo = snt.scenarios.PPO(num_env_steps=1000, num_epochs=4, num_minibatches=2)
  assert ppo.updates_per_step == 8 and ppo.checks_per_call


class _Sqrt(snt.Module):
  """|w.x| through a sqrt: a zero input gives a NaN gradient under a finite
  loss (the derivative of sqrt at 0 times 0)."""

  def __init__(self):
    super().__init__(name="sqrt_model")
    self.w = tf.Variable([[0.5], [-0.25], [1.0]], name="w")

  def __call__(self, x):
    return tf.sqrt(tf.square(tf.matmul(x, self.w)))


def _sqrt_loss(outputs, targets):
  return tf.square(outputs[:, 0] - targets)


def _sqrt_data(zero_batch):
  x, _ = _data(32)
  x[zero_batch * 4] = 0.0  # Batches of 4, in order.
  return x, np.ones(32, np.float32)


def _train_sqrt(zero_batch, num_steps=8, **settings):
  model = _Sqrt()
  train = snt.scenarios.Supervised(num_steps=num_steps, batch_size=4,
                                   shuffle=False, progress=False, **settings)
  try:
    train(model, keras.optimizers.SGD(0.1), _sqrt_loss, _sqrt_data(zero_batch))
  except snt.scenarios.NonFiniteError as error:
    return train, model, error
  return train, model, None


@pytest.mark.parametrize("zero_batch, step, message", [
    # Step 5's update turns w to NaN under a finite loss; step 6's loss
    # shows it, and the error names both.
    (5, 6, r"at step 6 \(0-based; its loss was not finite, or step 5's "
     "update left a non-finite value under a finite loss\)"),
    # At the last step of a call only the state at its end shows it.
    (7, 4, r"at step 4 to 7 \(0-based; every loss was finite, the state at "
     "the end of the call was not\)"),
])
def test_per_call_check_undoes_the_call_a_finite_loss_hid(zero_batch, step,
                                                         message):
  train, model, error = _train_sqrt(zero_batch, steps_per_call=4,
                                    nonfinite_check="call")
  assert error is not None and error.step == step
  assert re.search("^Supervised: non-finite loss or gradient " + message,
                   str(error))
  assert "as they were after 4 steps" in str(error)
  # Undone to the call's start: the weights of a clean 4-step run.
  _, reference, _ = _train_sqrt(zero_batch, num_steps=4)
  assert train.step == 4
  np.testing.assert_array_equal(model.w.numpy(), reference.w.numpy())
  # The per-step check names the update itself.
  _, _, error = _train_sqrt(zero_batch, steps_per_call=4,
                            nonfinite_check="step")
  assert error.step == zero_batch


def test_per_call_check_undoes_the_call_under_a_mirrored_strategy():
  strategy = optimizer_common._mirrored_strategy()  # pylint: disable=protected-access
  with strategy.scope():  # The model's variable is made in __init__.
    train, model, error = _train_sqrt(5, steps_per_call=4,
                                      nonfinite_check="call",
                                      strategy=strategy)
  assert train.strategy.num_replicas_in_sync == 2
  assert error is not None and error.step == 6
  assert train.step == 4
  # The two replicas' gradients sum in another order: last bits only.
  _, reference, _ = _train_sqrt(5, num_steps=4)
  np.testing.assert_allclose(model.w.numpy(), reference.w.numpy(),
                             rtol=1e-6)
  assert np.isfinite(model.w.numpy()).all()
