"""What AutoGraph rewrites when a scenario traces its step.

The user's code is rewritten, so Python control flow on tensors works in a
model or a loss. The library's leaves (argument and shape checks, the
NaN/Inf guard, replay buffers, returns) are not: they branch only on Python
values and call no user code (`core/autograph.as_written`); rewriting
them in every new process cost a third of the time to a run's first step
(`benchmarks/bench_startup.py`).
"""

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.autograph.impl import api  # pylint: disable=g-direct-tensorflow-import

import sonnet_like as snt
from tests import scenario_table
from tests.scenarios import test_distribute_scenario

# Leaves the steps below reach, as "module.qualname".
_LEAVES = {
    "sonnet_like.core.checks.check_built_dtype",
    "sonnet_like.core.checks.check_rank",
    "sonnet_like.core.checks.check_dim",
    "sonnet_like.core.arguments.check_positive_int",
    "sonnet_like.optimizers.base._check_update",
    "sonnet_like.scenarios.compiled.step.FiniteRecorder.finish",
    "sonnet_like.scenarios.updates.updater.Updater._record",
    "sonnet_like.scenarios.updates.updater.UnusedVariables.check",
    "sonnet_like.scenarios.updates.updater.all_finite",
    "sonnet_like.scenarios.rl.parts.replay.ReplayBuffer.add",
    "sonnet_like.scenarios.rl.parts.replay.ReplayBuffer.sample",
    "sonnet_like.scenarios.rl.q_learning.td_targets",
    "sonnet_like.scenarios.rl.parts.returns.gae",
    "sonnet_like.scenarios.rl.parts.episodes.EpisodeStats.update",
}


@pytest.fixture
def rewritten(monkeypatch):
  """The names of the functions AutoGraph rewrites from now on (each call
  of a rewritten function is seen, whether or not AutoGraph's cache holds
  it already)."""
  names = set()
  convert = api._convert_actual  # pylint: disable=protected-access

  def recording(entity, program_ctx):
    names.add(f"{getattr(entity, '__module__', '?')}."
              f"{getattr(entity, '__qualname__', entity)}")
    return convert(entity, program_ctx)

  monkeypatch.setattr(api, "_convert_actual", recording)
  return names


class ClippedModel(snt.Module):
  """A model whose call branches on a tensor's value."""

  def __init__(self):
    super().__init__()
    self.mlp = snt.nets.MLP([8, 2])

  def __call__(self, x):
    outputs = self.mlp(x)
    if tf.reduce_max(tf.abs(outputs)) > 1e3:
      outputs = tf.clip_by_value(outputs, -1e3, 1e3)
    return outputs


def _loss(logits, labels):
  losses = tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)
  if tf.reduce_mean(losses) > 1e6:  # A tensor's value, in Python.
    losses = tf.zeros_like(losses)
  return losses


def test_user_code_is_rewritten_and_library_leaves_are_not(rewritten):
  rng = np.random.default_rng(0)
  x = rng.normal(size=(64, 5)).astype(np.float32)
  y = (x[:, 0] > 0).astype(np.int32)
  train = snt.scenarios.Supervised(num_steps=40, batch_size=16, log_every=10,
                                   progress=False, catch_signals=False)
  losses = train(ClippedModel(), snt.optimizers.Adam(0.05), _loss,
                 (x, y)).train["loss"]
  assert losses[-1] < losses[0]  # It learns through the converted code.
  assert {f"{__name__}._loss", f"{__name__}.ClippedModel.__call__"} <= rewritten
  for row in ("DQN", "PPO"):
    scenario_table.train(scenario_table.BY_NAME[row], steps_per_call=2)
  assert "sonnet_like.envs.guess.Guess.step" in rewritten  # Seen.
  assert not _LEAVES & rewritten


class ClippingSGD(tf.Module):
  """A Sonnet-style optimizer whose update branches on a tensor's value."""

  def __init__(self, learning_rate):
    super().__init__()
    self.learning_rate = learning_rate

  def apply(self, updates, parameters):
    for update, parameter in zip(updates, parameters):
      if tf.reduce_max(tf.abs(update)) > 1e3:  # A tensor's value, in Python.
        update = tf.zeros_like(update)
      parameter.assign_sub(self.learning_rate * update)


def _agreement(outputs, targets):
  hits = tf.cast(tf.equal(tf.argmax(outputs, -1, output_type=tf.int32),
                          targets), tf.float32)
  if tf.reduce_sum(hits) < 0:  # Never true; a tensor's value, in Python.
    hits = -hits
  return hits


class HalvedLoss(snt.scenarios.Supervised):
  """Overrides compute_loss with Python control flow on a tensor."""

  def compute_loss(self, inputs, targets, outputs, sample_weights=None):
    loss = super().compute_loss(inputs, targets, outputs, sample_weights)
    if loss > 1e6:
      loss = loss / 2.0
    return loss


def test_the_library_path_to_user_code_is_not_rewritten(rewritten):
  """Only what the user gives or overrides is rewritten in a Supervised
  run: the model, the loss, a metric, the optimizer and an overridden
  compute_loss each branch on a tensor in Python and still train; no
  function of sonnet_like.scenarios is rewritten on the way to them."""
  rng = np.random.default_rng(0)
  x = rng.normal(size=(64, 5)).astype(np.float32)
  y = (x[:, 0] > 0).astype(np.int32)
  train = HalvedLoss(num_steps=40, batch_size=16, log_every=10,
                     progress=False, catch_signals=False)
  history = train(ClippedModel(), ClippingSGD(0.5), _loss, (x, y),
                  metrics={"agreement": _agreement})
  losses = history.train["loss"]
  assert losses[-1] < losses[0]
  assert history.train["agreement"][-1] == history.train["accuracy"][-1]
  user = {f"{__name__}.{name}" for name in (
      "_loss", "ClippedModel.__call__", "ClippingSGD.apply", "_agreement",
      "HalvedLoss.compute_loss")}
  assert user <= rewritten
  library = {name for name in rewritten
             if name.startswith("sonnet_like.scenarios.")}
  assert not library, sorted(library)


def test_dqn_rewrites_only_its_round_of_updates(rewritten):
  """DQN's step runs as written but for its round of gradient steps (a
  Python loop over a tf.range); the library's networks, optimizer,
  epsilon schedule and in-graph environments run as written too, and the
  toy environment the table gives (standing for a user's) is rewritten."""
  scenario_table.train(scenario_table.BY_NAME["DQN"], steps_per_call=2)
  assert "sonnet_like.envs.guess.Guess.step" in rewritten
  # The toy environment's code and the generator it draws from, rewritten
  # with it, are not on the library's path.
  toy = ("sonnet_like.envs.guess.", "sonnet_like.core.generator.")
  library = {name for name in rewritten
             if name.startswith("sonnet_like.") and not name.startswith(toy)}
  assert library <= {"sonnet_like.scenarios.rl.dqn.DQN.learn",
                     "sonnet_like.scenarios.rl.off_policy.OffPolicy.repeat"}, (
                         sorted(library))


def _halved_if_large(x):
  if tf.reduce_max(tf.abs(x)) > 1e3:  # A tensor's value, in Python.
    x = x / 2.0
  return tf.nn.relu(x)


class HalvingSGD(snt.optimizers.SGD):
  """A user's rule that branches on a tensor's value."""

  def _apply_one(self, parameter, update):
    if tf.reduce_max(tf.abs(update)) > 1e3:
      update = update / 2.0
    super()._apply_one(parameter, update)


class SquaredCurve(snt.scenarios.schedules.LinearSchedule):

  def curve(self, progress):
    if progress > 0.5:  # A tensor's value, in Python.
      return progress * progress
    return progress


class BouncyCartPole(snt.envs.CartPole):

  def _dynamics(self, state, action):
    reached, reward, terminated = super()._dynamics(state, action)
    if tf.reduce_any(terminated):  # A tensor's value, in Python.
      reward = reward * 2.0
    return reached, reward, terminated


def test_user_code_under_the_library_as_written_is_rewritten(rewritten):
  """An MLP, an snt optimizer, a schedule, an in-graph environment and
  gymnasium's adapter run as written in a `tf.function`, and the user's code they call (an
  activation, an overridden rule, curve or dynamics) is rewritten: its
  Python `if` on a tensor works."""
  mlp = snt.nets.MLP([4, 2], activation=_halved_if_large)
  optimizer = HalvingSGD(0.1)
  schedule = snt.scenarios.schedules.Warmup(2, then=SquaredCurve(1.0, 0.0, 4))
  env = BouncyCartPole(num_envs=2, seed=0)
  env.reset()
  gym_env = snt.envs.make("CartPole-v1", num_envs=2, seed=0, in_graph=False)

  @tf.function
  def step(x):
    with tf.GradientTape() as tape:
      loss = tf.reduce_sum(mlp(x))
    optimizer.apply(tape.gradient(loss, mlp.trainable_variables),
                    mlp.trainable_variables)
    gym_env.step(tf.constant([0, 1]))
    return schedule(tf.constant(5)), env.step(tf.constant([0, 1])).reward

  value, reward = step(tf.ones([3, 2]))
  assert float(value) == pytest.approx(1.0 - 0.75**2)
  assert reward.shape == [2]
  assert {f"{__name__}.{name}" for name in (
      "_halved_if_large", "HalvingSGD._apply_one", "SquaredCurve.curve",
      "BouncyCartPole._dynamics")} <= rewritten
  assert not {name for name in rewritten if name.startswith("sonnet_like.")}


class ClippedActor(snt.Module):
  """An actor whose call branches on a tensor's value."""

  def __init__(self, outputs):
    super().__init__()
    self.mlp = snt.nets.MLP([8, outputs])

  def __call__(self, x):
    outputs = self.mlp(x)
    if tf.reduce_max(tf.abs(outputs)) > 1e3:
      outputs = tf.clip_by_value(outputs, -1e3, 1e3)
    return outputs


class GuessEnv(snt.envs.Guess):
  """A user's environment whose step branches on a tensor's value."""

  def step(self, action):
    timestep = super().step(action)
    if tf.reduce_any(timestep.terminated):  # A tensor's value, in Python.
      timestep = timestep._replace(reward=timestep.reward + 0.0)
    return timestep


def test_on_policy_steps_reach_user_code_as_written(rewritten):
  """PPO's step, rollout and updates run as written, in float32 and in
  mixed_float16; the actor, critic and environment a user gives are
  rewritten."""
  for precision in ("float32", "mixed_float16"):
    tf.random.set_seed(0)
    ppo = snt.scenarios.PPO(num_env_steps=40, num_envs=4, rollout_length=5,
                            num_epochs=1, num_minibatches=2, progress=False,
                            catch_signals=False, precision=precision)
    history = ppo(ClippedActor(2), ClippedActor(1),
                  snt.optimizers.Adam(0.01), GuessEnv(4, seed=5))
    assert np.isfinite(history.train["loss"]).all()
  user = {f"{__name__}.{name}" for name in ("ClippedActor.__call__",
                                            "GuessEnv.step")}
  assert user <= rewritten
  library = {name for name in rewritten if name.startswith("sonnet_like.")}
  # Guess.step: the user's environment calls it (rewritten with it).
  toy = ("sonnet_like.envs.guess.", "sonnet_like.core.generator.")
  assert not {name for name in library if not name.startswith(toy)}, (
      sorted(library))


def _bits():
  rng = np.random.default_rng(0)
  x = rng.normal(size=(64, 5)).astype(np.float32)
  return x, (x[:, 0] > 0).astype(np.int32)


def test_a_population_rewrites_user_code_and_not_its_own(rewritten):
  """A population's step (each member's step, vectorised) runs as
  written; the user's model and loss in it are rewritten."""
  train = snt.scenarios.Supervised(num_steps=40, batch_size=16, log_every=10,
                                   progress=False, catch_signals=False,
                                   population=2)
  losses = train(ClippedModel(), snt.optimizers.Adam(0.05), _loss,
                 _bits()).train["loss"]
  assert losses[-1] < losses[0]
  assert {f"{__name__}._loss", f"{__name__}.ClippedModel.__call__"} <= rewritten
  library = {name for name in rewritten
             if name.startswith("sonnet_like.scenarios.")}
  assert not library, sorted(library)


def test_user_code_is_rewritten_in_a_mirrored_strategys_replicas(rewritten):
  """A `MirroredStrategy` runs the step in a thread per replica, which
  starts with no AutoGraph status: the step takes its own along."""
  strategy = test_distribute_scenario._mirrored()  # pylint: disable=W0212
  train = snt.scenarios.Supervised(num_steps=40, batch_size=16, log_every=10,
                                   progress=False, catch_signals=False,
                                   strategy=strategy)
  losses = train(ClippedModel(), snt.optimizers.Adam(0.05), _loss,
                 _bits()).train["loss"]
  assert losses[-1] < losses[0]
  assert {f"{__name__}._loss", f"{__name__}.ClippedModel.__call__"} <= rewritten


def test_an_accumulated_update_is_rewritten_in_a_mirrored_strategy(rewritten):
  """The accumulated update is applied in the replicas' threads too."""
  train = snt.scenarios.Supervised(
      num_steps=8, batch_size=16, log_every=4, progress=False,
      catch_signals=False, accumulate_steps=2,
      strategy=test_distribute_scenario._mirrored())  # pylint: disable=W0212
  losses = train(ClippedModel(), ClippingSGD(0.5), _loss,
                 _bits()).train["loss"]
  assert losses[-1] < losses[0]
  assert f"{__name__}.ClippingSGD.apply" in rewritten
