"""Populations of Supervised (and of a user's scenario): each member is the
solo run with its seed, trained in one compiled call."""

import json
import os
import signal
import textwrap

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
import tests
from tests import fork_server
from tests.scenarios import test_scenario_table

STEPS = 30
TOLERANCE = 1e-5  # Member i against the solo run with seed i (float32).


def _data(rows=256):
  rng = np.random.default_rng(0)
  x = rng.normal(size=(rows, 5)).astype(np.float32)
  y = (x[:, 0] + x[:, 1] > 0).astype(np.int64)
  return x, y


def _loss(logits, labels):
  return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)


def _train(population=None, seed=0, steps=STEPS, learning_rate=0.01,
           save_dir=None, eval_data=None, **settings):
  scenario = snt.scenarios.Supervised(
      num_steps=steps, batch_size=16, log_every=10, progress=False,
      tensorboard=False, seed=seed, population=population,
      save_dir=save_dir, eval_every=steps if eval_data else None,
      **settings)
  model = snt.nets.MLP([8, 2], name="mlp")
  history = scenario(model, snt.optimizers.Adam(learning_rate), _loss,
                     _data(), eval_data=eval_data)
  return scenario, model, history


def _close(a, b):
  return max(float(np.max(np.abs(x.numpy() - y.numpy())))
             for x, y in zip(a.variables, b.variables))


def test_each_member_is_the_solo_run_of_its_seed():
  population, model, history = _train(population=[3, 5, 4])
  members = [population.member(i) for i in range(3)]
  for member, seed in zip(members, [3, 5, 4]):
    _, solo, solo_history = _train(seed=seed)
    assert _close(member, solo) < TOLERANCE
  assert _close(members[0], members[1]) > 1e-3  # Seeds differ.
  # The history: means for the hooks, every member's values beside them.
  losses = history.member_train["loss"]
  assert len(losses) == len(history.train["loss"]) and len(losses[0]) == 3
  np.testing.assert_allclose(history.train["loss"][-1], np.mean(losses[-1]),
                             rtol=1e-5)
  assert history.train["loss"][-1] < history.train["loss"][0]  # It learns.


def test_the_model_passed_stays_unbuilt_and_members_are_real_modules():
  population, model, _ = _train(population=2)
  with pytest.raises(ValueError, match="does not currently contain"):
    model.variables  # pylint: disable=pointless-statement
  member = population.member(1)
  assert all(isinstance(v, tf.Variable) and not hasattr(v, "tensor_value")
             for v in member.variables)
  assert member(tf.zeros([1, 5])).shape == [1, 2]
  with pytest.raises(IndexError, match="member 2 of 2"):
    population.member(2)


def _penalised_run(**settings):
  """A run whose loss closes over the model it passes (a weight penalty)."""
  model = snt.nets.MLP([8, 2], name="mlp")

  def penalised(logits, labels):
    penalty = tf.add_n([tf.nn.l2_loss(w) for w in model.trainable_variables])
    return _loss(logits, labels) + 0.05 * penalty

  scenario = snt.scenarios.Supervised(
      num_steps=STEPS, batch_size=16, log_every=10, progress=False,
      tensorboard=False, clip_norm=1.0, **settings)
  scenario(model, snt.optimizers.Adam(0.01), penalised, _data())
  return scenario, model


def test_a_loss_closing_over_the_model_reads_each_members_weights():
  population, model = _penalised_run(population=[3, 5])
  _, solo = _penalised_run(seed=5)
  assert _close(population.member(1), solo) < TOLERANCE
  with pytest.raises(ValueError, match="does not currently contain"):
    model.variables  # pylint: disable=pointless-statement  # As it was.


class _Clipped(snt.Module):
  """A model with a Python `if` on a tensor (a `tf.cond` whose gradient
  reads the branch's intermediates); `checked`: the branch asserts too (a
  stateful op: a stateful `If`)."""

  def __init__(self, checked):
    super().__init__(name="clipped")
    self.mlp = snt.nets.MLP([8, 2], name="mlp")
    self.checked = checked

  def __call__(self, x):
    outputs = self.mlp(x)
    if tf.reduce_max(tf.abs(outputs)) > 4.0:  # From about step 10 on.
      if self.checked:
        tf.debugging.Assert(tf.reduce_all(tf.math.is_finite(outputs)),
                            ["non-finite outputs"])
      outputs = tf.tanh(outputs)
    return outputs


@pytest.mark.parametrize("checked", [False, True])
def test_a_model_with_a_tensor_if_trains_as_the_solo_run(checked):
  def run(**settings):
    scenario = snt.scenarios.Supervised(
        num_steps=STEPS, batch_size=16, log_every=10, progress=False,
        tensorboard=False, **settings)
    model = _Clipped(checked)
    scenario(model, snt.optimizers.Adam(0.05), _loss, _data())
    return scenario, model

  population, _ = run(population=[3, 5])
  for index, seed in enumerate([3, 5]):
    _, solo = run(seed=seed)
    assert _close(population.member(index), solo) < TOLERANCE


def test_a_learning_rate_sweep_gives_each_member_its_rate():
  grid = snt.scenarios.Population.grid(seeds=[0, 1],
                                       learning_rate=[0.1, 0.001])
  population, _, history = _train(population=grid)
  _, solo, _ = _train(seed=1, learning_rate=0.001)
  assert _close(population.member(3), solo) < TOLERANCE
  summary = population.summary("loss")
  assert list(summary) == ["learning_rate=0.1", "learning_rate=0.001"]
  assert summary["learning_rate=0.1"].count == 2
  assert history.member_train["learning_rate"][-1] == pytest.approx(
      [0.1, 0.1, 0.001, 0.001])


def test_a_swept_rate_follows_the_learning_rate_schedule():
  # Each member's swept rate is the schedule's base: member i is the solo
  # run of its seed and rate under the same warmup and cosine decay.
  schedule = snt.scenarios.schedules.warmup_cosine(5, STEPS)
  grid = snt.scenarios.Population.grid(seeds=[0, 1],
                                       learning_rate=[0.05, 0.002])
  population, _, history = _train(population=grid,
                                  learning_rate_schedule=schedule)
  for member, rate in [(1, 0.05), (2, 0.002)]:
    _, solo, solo_history = _train(seed=member % 2, learning_rate=rate,
                                   learning_rate_schedule=schedule)
    assert _close(population.member(member), solo) < TOLERANCE
    np.testing.assert_allclose(
        [rates[member] for rates in history.member_train["learning_rate"]],
        solo_history.train["learning_rate"], rtol=1e-6)
  logged = history.member_train["learning_rate"]
  assert logged[-1][0] == pytest.approx(logged[-1][2] * 25, rel=1e-5)
  assert logged[0][0] != pytest.approx(logged[-1][0])  # It was scheduled.


def test_a_member_that_diverges_stops_and_the_others_go_on():
  population = snt.scenarios.Population([0, 1, 2],
                                        learning_rate=[0.01, 1e38, 0.01])
  scenario, _, history = _train(population=population)
  assert scenario.members.alive.numpy().tolist() == [True, False, True]
  _, solo, _ = _train(seed=2)
  assert _close(scenario.member(2), solo) < TOLERANCE
  assert np.isfinite(history.train["loss"]).all()  # Means of the living.
  weights = scenario.member(1).variables
  assert all(np.isfinite(v.numpy()).all() for v in weights)  # Last good.


def test_the_step_writes_back_without_a_switch_per_member_value():
  # The values the members carry are written back every step; giving a
  # failed member its old ones is a branch called only when taken
  # (`step._restore_failed`), not a tf.cond TensorFlow inlines behind a
  # switch for each of its inputs (the old and the new values).
  scenario, _, _ = _train(population=3, steps=2)
  graph = scenario.train_function.get_concrete_function(
      tf.TensorSpec([], tf.int32)).graph.as_graph_def()
  nodes = list(graph.node) + [node for function in graph.library.function
                              for node in function.node_def]
  wide = [node for node in nodes if node.op in ("If", "StatelessIf") and
          len(node.input) >= len(scenario.members.stacked)]
  inlined = "_lower_using_switch_merge"
  assert wide and all(inlined in node.attr and not node.attr[inlined].b
                      for node in wide)


def test_evaluation_best_and_summary():
  x, y = _data(128)
  scenario, _, history = _train(population=4, eval_data=(x, y))
  accuracies = history.member_eval["accuracy"][-1]
  assert len(accuracies) == 4
  assert history.eval["accuracy"][-1] == pytest.approx(np.mean(accuracies))
  best = scenario.best("accuracy")
  assert best is scenario.member(int(np.argmax(accuracies)))
  summary = scenario.summary("accuracy")
  assert summary.count == 4 and summary.mean == pytest.approx(
      np.mean(accuracies))
  with pytest.raises(ValueError, match="no 'recall'"):
    scenario.summary("recall")


@pytest.mark.parametrize("settings", [{}, dict(accumulate_steps=3)],
                         ids=["plain", "accumulated"])
def test_resume_continues_the_population_bitwise(tmp_path, settings):
  # With accumulate_steps=3 the save at step 10 holds a window's first
  # micro-batch in every member's gradient sums.
  whole, _, _ = _train(population=3, steps=20, **settings)
  folder = str(tmp_path / "run")
  _train(population=3, steps=10, save_dir=folder, **settings)
  resumed, _, history = _train(population=3, steps=20, save_dir=folder,
                               **settings)
  assert len(whole.members.stacked) == len(resumed.members.stacked)
  for a, b in zip(whole.members.stacked, resumed.members.stacked):
    np.testing.assert_array_equal(a.numpy(), b.numpy())
  with open(os.path.join(folder, "history.json")) as f:
    saved = json.load(f)
  assert saved["member_train"]["step"] == [10, 20]
  assert len(history.member_train["loss"]) == 2


class _Scaled(snt.scenarios.Scenario):
  """Regression whose loss is scaled by `scale`, updated every `every`
  steps, `repeats` forward passes a step: settings a sweep may change."""

  scale, every, repeats = 1.0, 1, 1

  def __call__(self, model, optimizer, data):
    self.model, self.optimizer = model, optimizer
    self.feed(data, batch_size=8)
    return self.run()

  def models(self):
    return {"model": self.model}

  def trackables(self):
    return {"model": self.model, "optimizer": self.optimizer}

  def build(self):
    self.model(self.example_batch())
    self.build_optimizer(self.optimizer, self.model.variables)

  def train_step(self, x):
    with tf.GradientTape() as tape:
      loss = 0.0
      for _ in range(self.repeats):
        loss += self.scale * tf.reduce_mean((self.model(x) - x) ** 2)
    due = tf.cast(tf.equal(self.traced_step.step % self.every, 0),
                  tf.float32)  # A mask, not a tensor `if` (see the guide).
    grads = [g * due for g in tape.gradient(loss, self.model.variables)]
    self.optimizer.apply(grads, self.model.variables)
    return {"loss": loss}


def _scaled(**settings):
  scenario = _Scaled(num_steps=9, progress=False, tensorboard=False,
                     **settings)
  scenario(snt.Linear(5, name="denoiser"), snt.optimizers.SGD(0.1),
           _data()[0])
  return scenario


def test_a_users_own_scenario_needs_no_extra_code():
  # Its step calls optimizer.apply itself; clipping still applies.
  population = _scaled(population=[7, 8], clip_norm=0.5)
  solo = _scaled(seed=8, clip_norm=0.5)
  assert _close(population.member(1), solo.model) < TOLERANCE


class _Noisy(_Scaled):
  """Draws from the scenario's stream every step; NaN loss at `nan_at`."""

  nan_at = -1

  def train_step(self, x):
    noise = self.rng.uniform([])
    with tf.GradientTape() as tape:
      error = tf.reduce_mean((self.model(x) - x) ** 2) + 0.0 * noise
      loss = tf.where(tf.equal(self.traced_step.step, self.nan_at),
                      float("nan"), error)
    grads = tape.gradient(loss, self.model.variables)
    self.apply_update(self.optimizer, grads, self.model.variables, loss=loss)
    return {"loss": loss, "noise": noise}


@pytest.mark.parametrize("nan_at, settings", [
    (2, {}), (5, dict(accumulate_steps=3))], ids=["plain", "accumulated"])
def test_a_skipped_member_step_drops_only_its_update(nan_at, settings):
  # As in a solo run: the stream moves on, so the member stays its seed's
  # solo run after the skipped step (before, its whole step was undone).
  # Accumulated, step 5 ends a window: its micro-batch adds nothing and the
  # window's update is still made.
  def run(**more):
    scenario = _Noisy(num_steps=6, log_every=1, progress=False,
                      tensorboard=False, on_nonfinite="skip", **settings,
                      **more)
    history = scenario(snt.Linear(5, name="denoiser"),
                       snt.optimizers.Adam(0.01), _data()[0])
    return scenario, history

  population, history = run(population=snt.scenarios.Population(
      [0, 0], nan_at=[-1, nan_at]))
  _Noisy.nan_at = nan_at
  try:
    solo, solo_history = run(seed=0)
  finally:
    _Noisy.nan_at = -1
  assert [n[1] for n in history.member_train["noise"]] == (
      solo_history.train["noise"])
  assert _close(population.member(1), solo.model) < TOLERANCE
  assert _close(population.member(0), solo.model) > 1e-4  # Not skipped.


def test_what_a_population_does_not_do_yet_is_refused_by_name():
  with pytest.raises(ValueError, match="population= does not work with "
                     "nonfinite_check=\"call\""):
    snt.scenarios.Supervised(num_steps=1, population=2,
                             nonfinite_check="call")


def test_bad_populations_and_prebuilt_models_are_refused():
  with pytest.raises(ValueError, match="at least 1 member"):
    snt.scenarios.Supervised(num_steps=1, population=0)
  with pytest.raises(TypeError, match="member count, a list of seeds"):
    snt.scenarios.Supervised(num_steps=1, population="four")
  with pytest.raises(ValueError, match="2 values for 3 members"):
    snt.scenarios.Population([0, 1, 2], learning_rate=[0.1, 0.2])
  scenario = snt.scenarios.Supervised(num_steps=1, population=2,
                                      progress=False, tensorboard=False)
  model = snt.nets.MLP([2])
  model(tf.zeros([1, 5]))
  with pytest.raises(ValueError, match="'model' .*already has variables"):
    scenario(model, snt.optimizers.SGD(0.1), _loss, _data())
  import keras  # pylint: disable=g-import-not-at-top
  with pytest.raises(ValueError, match="Keras optimizer"):
    scenario(snt.nets.MLP([2]), keras.optimizers.SGD(0.1), _loss, _data())
  with pytest.raises(ValueError, match="sweeps 'warmup'"):
    snt.scenarios.Supervised(
        num_steps=1, progress=False, tensorboard=False,
        population=snt.scenarios.Population([0], warmup=[1]))(
            snt.nets.MLP([2]), snt.optimizers.SGD(0.1), _loss, _data())


@pytest.mark.parametrize("settings", [
    dict(jit_compile=True), dict(steps_per_call=7), dict(on_nonfinite="skip"),
    dict(accumulate_steps=3, ema=0.9, clip_norm=0.5, steps_per_call=4)])
def test_members_match_solo_runs_under_other_loop_settings(settings):
  population, _, _ = _train(population=[1, 2], **settings)
  solo_run, solo, _ = _train(seed=2, **settings)
  assert _close(population.member(1), solo) < TOLERANCE
  if "ema" in settings:  # The averages of the accumulated updates too.
    with population.ema_weights(), solo_run.ema_weights():
      assert _close(population.member(1), solo) < TOLERANCE


def test_the_whole_population_exports_as_one_saved_model(tmp_path):
  population, _, _ = _train(population=3)
  path = population.export_population(str(tmp_path / "all"))
  served = tf.saved_model.load(path).signatures["serving_default"]
  x = _data(4)[0]
  outputs = served(inputs=tf.constant(x))["outputs"]
  assert outputs.shape == [3, 4, 2]
  for i in range(3):
    np.testing.assert_allclose(outputs[i], population.member(i)(x),
                               rtol=1e-5, atol=1e-6)


class _Signal(snt.scenarios.Hook):
  """Sends this process `signal_number` once `at` steps are done."""

  def __init__(self, signal_number, at):
    self.signal_number, self.at, self.sent = signal_number, at, False

  def step_end(self, scenario, step, logs):
    if step >= self.at and not self.sent:
      self.sent = True
      os.kill(os.getpid(), self.signal_number)


_KILLED = textwrap.dedent("""
    import signal, sys
    sys.path.insert(0, {root!r})
    import conftest  # TensorFlow set up as in the test process.
    from tests.scenarios.population import test_supervised_population as t
    t._train(population=3, steps=12, steps_per_call=2, save_every=4,
             save_dir=sys.argv[1], hooks=[t._Signal(signal.SIGKILL, 10)])
    print("NOT KILLED", flush=True)
""")


def test_sigterm_and_sigkill_resume_the_population_bitwise(tmp_path):
  settings = dict(population=3, steps=12, steps_per_call=2)
  whole, _, _ = _train(**settings)
  settings.update(save_every=4)
  # SIGTERM at step 6 here: it saves at the boundary and exits 143.
  save_dir = str(tmp_path / "run")
  with pytest.raises(SystemExit) as exited:
    _train(save_dir=save_dir, hooks=[_Signal(signal.SIGTERM, 6)],
           **settings)
  assert exited.value.code == 143
  assert tf.train.latest_checkpoint(save_dir).endswith("-6")
  # A process of its own resumes from step 6; SIGKILL at step 10 leaves
  # the checkpoint of step 8.
  script = tmp_path / "killed.py"
  script.write_text(_KILLED.format(root=tests.ROOT))
  killed = fork_server.shared(test_scenario_table.KILLED_PRELOAD).popen(
      [script, save_dir], dict(os.environ))
  _, killed_err = killed.communicate(timeout=300)
  assert killed.returncode == -signal.SIGKILL, killed_err[-3000:]
  assert tf.train.latest_checkpoint(save_dir).endswith("-8")
  resumed, _, _ = _train(save_dir=save_dir, **settings)
  assert resumed.step == 12
  for a, b in zip(whole.members.stacked, resumed.members.stacked):
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_dry_run_and_export_dir_write_the_population(tmp_path):
  x, y = _data(64)
  _, _, history = _train(population=2, dry_run=True, eval_data=(x, y),
                         export_dir=str(tmp_path / "unused"))
  assert history.stop_reason == "dry run"
  assert not (tmp_path / "unused").exists()
  export_dir = str(tmp_path / "export")
  _train(population=2, export_dir=export_dir)
  served = tf.saved_model.load(export_dir).signatures["serving_default"]
  assert served(inputs=tf.constant(x[:3]))["outputs"].shape == [2, 3, 2]


def test_float_and_int_settings_of_a_users_scenario_differ_per_member():
  population = _scaled(population=snt.scenarios.Population(
      [0, 0], scale=[1.0, 0.5], every=[1, 3]))
  _Scaled.scale, _Scaled.every = 0.5, 3
  try:
    solo = _scaled(seed=0)
  finally:
    _Scaled.scale, _Scaled.every = 1.0, 1
  assert _close(population.member(1), solo.model) < TOLERANCE
  assert _close(population.member(0), solo.model) > 1e-3


def test_a_setting_used_as_a_python_number_is_named():
  with pytest.raises(ValueError, match=r"_Scaled: a member's step failed "
                     r"with the population's swept settings "
                     r"\['repeats'\].*cannot differ per member"):
    _scaled(population=snt.scenarios.Population([0, 1], repeats=[1, 2]))


def test_a_users_tensor_if_around_an_update_is_named():

  class Gated(_Scaled):

    def train_step(self, x):
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean((self.model(x) - x) ** 2)
      grads = tape.gradient(loss, self.model.variables)
      if loss > 0.0:  # A tf.cond around the update.
        self.optimizer.apply(grads, self.model.variables)
      return {"loss": loss}

  scenario = Gated(num_steps=2, progress=False, tensorboard=False,
                   population=2)
  with pytest.raises(ValueError, match="Gated: a population could not "
                     "vectorise a member's step: .* 0/1 mask"):
    scenario(snt.Linear(5), snt.optimizers.SGD(0.1), _data()[0])
