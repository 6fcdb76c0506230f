"""OnPolicy: environments from gymnasium ids, the evaluation copy, what is
checkpointed, and the shared argument checks."""

import keras
import numpy as np
import pytest

import sonnet_like as snt
from sonnet_like import envs
from sonnet_like.core import arguments
from sonnet_like.scenarios.rl.parts import environments
from tests import rl_toys


def test_a_gymnasium_id_is_made_twice_training_and_evaluation():
  ppo = snt.scenarios.PPO(num_env_steps=64, num_envs=2, rollout_length=32,
                          num_epochs=1, num_minibatches=2, eval_episodes=3,
                          progress=False, seed=4)
  history = ppo(snt.Linear(2, name="actor"), snt.Linear(1, name="critic"),
                keras.optimizers.Adam(1e-3), "CartPole-v1")
  assert ppo.env.num_envs == 2 and not ppo.env.in_graph
  assert ppo.eval_env is not ppo.env and ppo.eval_env.num_envs == 3
  assert history.eval["length"][-1] >= 8  # CartPole lasts >= 8 steps.
  assert history.train["env_steps"][-1] == 64
  # A gymnasium environment keeps its state in Python: it is in the state
  # (a population's member gets its own) but checkpoints no variable.
  assert ppo.trackables()["env"] is ppo.env and not ppo.env.variables


def test_an_in_graph_environment_is_checkpointed_and_reset_with_the_seed():
  env = rl_toys.Guess(4)
  reinforce = snt.scenarios.REINFORCE(num_env_steps=8, num_envs=4,
                                      rollout_length=2, progress=False, seed=9)
  reinforce(snt.Linear(2, name="policy"), snt.Linear(1, name="baseline"),
            keras.optimizers.SGD(0.1), env)
  assert reinforce.trackables()["env"] is env
  assert reinforce.evaluate_now() is None  # No eval_env, no evaluation.
  reference = rl_toys.Guess(4)
  reference.reset(seed=9)
  reference.step(np.zeros(4, np.int32))
  reference.step(np.zeros(4, np.int32))
  np.testing.assert_array_equal(env.observation().numpy(),
                                reference.observation().numpy())
  assert int(env.rng.state[0]) > 0


def test_same_space_compares_box_bounds():
  box = envs.Box(np.zeros(2), np.ones(2))
  assert environments.same_space(box, envs.Box(np.zeros(2), np.ones(2)))
  assert not environments.same_space(box, envs.Box(np.zeros(2), 2 * np.ones(2)))
  assert environments.same_space(envs.Discrete(2), envs.Discrete(2))
  assert not environments.same_space(envs.Discrete(2), box)


def test_number_checks():
  arguments.check_positive_number("PPO", "x", 0.5, upper=1.0)
  arguments.check_non_negative("PPO", "x", 0)
  with pytest.raises(ValueError, match="PPO: x must be a number above 0 and "
                     "at most 1.0, got 2"):
    arguments.check_positive_number("PPO", "x", 2, upper=1.0)
  with pytest.raises(ValueError, match="PPO: x must be a number of at least "
                     "0, got True"):
    arguments.check_non_negative("PPO", "x", True)
  with pytest.raises(ValueError, match="PPO: log_std_init must be a finite "
                     "number, got nan"):
    snt.scenarios.PPO(100, log_std_init=float("nan"))
