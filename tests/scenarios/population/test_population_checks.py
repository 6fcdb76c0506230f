"""A population's settings sweep or are refused by name, and its arguments
and metrics are checked in one sentence each."""

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.scenarios import best


@pytest.mark.parametrize("make, message", [
    (lambda: snt.scenarios.Population.grid(seeds=3),
     r"^Population.grid: seeds must be a list of ints, one per member, got "
     r"3; for seeds 0 to 2 write range\(3\)\.$"),
    (lambda: snt.scenarios.Population(2),
     r"^Population: seeds must be a list of ints, .* got 2; for seeds 0 to 1 "
     r"write range\(2\)\.$"),
    (lambda: snt.scenarios.Population([0, 1], learning_rate=0.1),
     r"^Population: setting 'learning_rate' must be a list of values \(one "
     r"per member\), got 0.1; write \[0.1\] for one value\.$"),
    (lambda: snt.scenarios.Population.grid([0, 1], gamma="high"),
     r"^Population.grid: setting 'gamma' must be a list of values"),
    (lambda: snt.scenarios.Population([0, 1, 0]),
     r"^Population: members 0 and 2 are the same run \(seed 0\)"),
    (lambda: snt.scenarios.Population([0, 0], learning_rate=[0.1, 0.1]),
     r"^Population: members 0 and 1 are the same run \(seed 0, "
     r"learning_rate=0.1\)"),
    (lambda: snt.scenarios.Population.grid([1, 1], learning_rate=[0.1]),
     r"members 0 and 1 are the same run"),
])
def test_population_arguments_are_checked_in_one_sentence(make, message):
  with pytest.raises(ValueError, match=message):
    make()


def test_the_same_seed_with_different_settings_is_a_population():
  grid = snt.scenarios.Population([0, 0], learning_rate=[0.1, 0.01])
  assert grid.size == 2


@pytest.mark.parametrize("metric, mode", [
    ("accuracy", "max"), ("eval/top1_acc", "max"), ("return", "max"),
    ("episode_reward", "max"), ("score", "max"), ("high_quality", "max"),
    ("loss", "min"), ("val_loss", "min"), ("error", "min"), ("mse", "min"),
    ("length", None), ("return_std", None), ("steps", None),
    ("loss_accuracy", None)])
def test_a_metrics_direction_comes_from_its_name_or_is_asked_for(metric,
                                                                 mode):
  assert best.default_mode(metric) == mode
  if mode is None:
    with pytest.raises(ValueError, match=(
        rf"^PPO: best={metric!r} does not say whether higher or lower is "
        r"better; pass mode='max' or 'min'\.")):
      best.Best("PPO", "best", metric)
  assert best.Best("PPO", "best", metric, mode="min").mode == "min"


def _regression(n=64):
  rng = np.random.default_rng(0)
  x = rng.normal(size=(n, 3)).astype(np.float32)
  return x, x.sum(axis=1, keepdims=True)


def _train(**settings):
  scenario = snt.scenarios.Supervised(num_steps=4, batch_size=16,
                                      progress=False, tensorboard=False,
                                      **settings)
  scenario(snt.nets.MLP([4, 1], name="mlp"), snt.optimizers.SGD(0.01),
           lambda y, t: tf.reduce_mean((y - t) ** 2), _regression(),
           eval_data=_regression(16))
  return scenario


def test_a_setting_the_step_never_reads_is_refused_by_name():
  # The batch size decides the data pipeline, built before the step: every
  # member would silently train at the scenario's own.
  with pytest.raises(ValueError, match=(
      r"^Supervised: the population sweeps \['batch_size'\], but "
      r"Supervised's step never reads \['batch_size'\] \(a setting used "
      r"outside the step, by the data, the environments or build\(\)")):
    _train(population=snt.scenarios.Population([0, 0, 0],
                                               batch_size=[16, 32, 64]))


def test_best_without_a_mode_refuses_a_metric_of_no_direction():
  population = _train(population=[0, 1], eval_every=4)
  assert population.best("loss", mode="max") is population.member(
      int(np.argmax(population.history.member_eval["loss"][-1])))
  population.history.member_eval["spread"] = [[1.0, 2.0]]
  with pytest.raises(ValueError, match=r"best='spread' does not say"):
    population.best("spread")


def test_as_member_answers_with_the_members_settings_too():
  sweep = _train(population=snt.scenarios.Population(
      [0, 0], learning_rate=[0.1, 0.01]), eval_every=4)
  for i, rate in enumerate([0.1, 0.01]):
    with sweep.as_member(i):
      assert sweep.optimizer.learning_rate == rate
      assert sweep.seed == 0
  with pytest.raises(ValueError, match=r"scenario.optimizer has no single"):
    sweep.optimizer.learning_rate  # pylint: disable=pointless-statement


def _gym_run(algorithm, **settings):
  recipe = getattr(snt.scenarios, algorithm).recipe("CartPole-v1")
  extra = dict(learning_starts=64) if algorithm == "DQN" else {}
  scenario = recipe.scenario(num_env_steps=256, progress=False,
                             eval_every=None, **extra, **settings)
  networks = (recipe.networks() if algorithm == "PPO"
              else (recipe.q_network(),))
  scenario(*networks, recipe.optimizer(), env="CartPole-v1")
  return scenario


def _weights(models):
  return [v.numpy() for model in models.values()
          for v in model.trainable_variables]


@pytest.mark.parametrize("algorithm", ["PPO", "DQN"])
def test_members_on_gymnasium_environments_are_their_solo_runs(
    algorithm, monkeypatch):
  # Each member steps its own copy of the gymnasium environment, reset with
  # its seed (before, all stepped one: PPO's members were off by ~0.1).
  pytest.importorskip("gymnasium")
  # One copy a member and no more: the templates' environment is only
  # traced, and a copy of it (with workers, its processes) would sit idle.
  copied = []
  deepcopy = snt.envs.GymEnvironment.__deepcopy__

  def counted(env, memo):
    copied.append(env)
    return deepcopy(env, memo)

  monkeypatch.setattr(snt.envs.GymEnvironment, "__deepcopy__", counted)
  population = _gym_run(algorithm, population=[0, 1])
  assert len(copied) == 2
  for i in (0, 1):
    member = population.member(i)
    member = member if isinstance(member, dict) else {"model": member}
    solo = _gym_run(algorithm, seed=i)
    for got, want in zip(_weights(member), _weights(solo.models())):
      # The members' vectorised arithmetic rounds apart from a solo run's.
      np.testing.assert_allclose(got, want, rtol=0, atol=1e-5)


def test_a_gymnasium_environment_outside_the_state_is_refused():
  # A step that plays an environment no member owns a copy of (it is not in
  # trackables()) would make every member play the same one.
  gymnasium = pytest.importorskip("gymnasium")
  del gymnasium

  class Untracked(snt.scenarios.Scenario):
    def __call__(self, model, optimizer):
      self.model, self.optimizer = model, optimizer
      self.gym = snt.envs.make("CartPole-v1", num_envs=2)
      return self.run()

    def models(self):
      return {"model": self.model}

    def trackables(self):
      return dict(self.models(), optimizer=self.optimizer)

    def build(self):
      self.model(tf.zeros([2, 4]))
      self.build_optimizer(self.optimizer, self.model.trainable_variables)

    def train_step(self):
      observation = self.gym.observation()
      with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(self.model(observation)))
      self.apply_update(self.optimizer,
                        tape.gradient(loss, self.model.trainable_variables),
                        self.model.trainable_variables, loss=loss)
      return {"loss": loss}

  scenario = Untracked(num_steps=2, progress=False, population=[0, 1])
  with pytest.raises(ValueError, match=(
      r"^Untracked: population= trains its members in one compiled call, "
      r"but the step steps a gymnasium environment in Python .* not one of "
      r"the members' own \(not in trackables\(\)\)")):
    scenario(snt.Linear(1), snt.optimizers.SGD(0.1))
  assert scenario.step == 0  # Refused at the first trace, before a step.
