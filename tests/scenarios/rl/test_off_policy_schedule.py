"""learning_rate_schedule="linear" for every off-policy scenario (DQN's own
test is in test_dqn.py): every optimizer's rate falls over the run's
scenario steps, which only the environment's num_envs fixes."""

import keras
import pytest
import tensorflow as tf

import sonnet_like as snt


def _networks():
  return (snt.nets.MLP([8, 2], name="actor"),
          snt.nets.MLP([8, 1], name="critic"))


@pytest.mark.parametrize("scenario_type", [snt.scenarios.SAC,
                                           snt.scenarios.TD3])
def test_linear_rates_fall_to_the_last_steps_share(scenario_type):
  # num_envs=None: 120 transitions of 3 environments are 40 steps; the last
  # update (step 39, 0-based) runs at rate * (1 - 39 / 40).
  tf.random.set_seed(0)
  scenario = scenario_type(num_env_steps=120, num_envs=None,
                           learning_starts=9, batch_size=8, eval_every=None,
                           progress=False, learning_rate_schedule="linear")
  optimizer = keras.optimizers.Adam(0.04)
  actor, critic = _networks()
  extra = {}
  if scenario_type is snt.scenarios.TD3:  # One output a dimension, its own
    actor = snt.nets.MLP([8, 1], name="actor")  # optimizer for the actor.
    extra["actor_optimizer"] = keras.optimizers.Adam(0.02)
  history = scenario(actor, critic, optimizer, snt.envs.Pendulum(3, seed=0),
                     **extra)
  assert scenario.step == 40
  assert float(optimizer.learning_rate) == pytest.approx(0.04 / 40)
  if extra:
    assert float(extra["actor_optimizer"].learning_rate) == pytest.approx(
        0.02 / 40)
  logged = {name: rates[-1] for name, rates in history.train.items()
            if name.startswith("learning_rate")}
  if extra:  # Two optimizers: a rate each, by the learner's name.
    assert logged == pytest.approx({"learning_rate_optimizer": 0.04 / 40,
                                    "learning_rate_actor_optimizer":
                                        0.02 / 40})
  else:
    assert logged == pytest.approx({"learning_rate": 0.04 / 40})


@pytest.mark.parametrize("scenario_type", [snt.scenarios.SAC,
                                           snt.scenarios.TD3])
def test_an_unknown_schedule_is_refused_naming_the_scenario(scenario_type):
  name = scenario_type.__name__
  with pytest.raises(ValueError, match=f"{name}: learning_rate_schedule must "
                     "be None, \"linear\" or a schedules.Schedule .* got "
                     "'cosine'"):
    scenario_type(num_env_steps=100, learning_rate_schedule="cosine")
