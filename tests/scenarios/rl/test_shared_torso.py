"""A torso the actor and the critic share runs once per on-policy update,
with the arithmetic of running it twice (`rl/parts/shared_torso.py`)."""

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.scenarios.rl.parts import shared_torso
from tests import rl_toys


class CountingTorso(snt.Module):
  """A Linear + ReLU that counts its Python calls (one per trace)."""

  def __init__(self):
    super().__init__(name="torso")
    self.linear = snt.Linear(8, name="linear")
    self.calls = 0

  def __call__(self, x):
    self.calls += 1
    return tf.nn.relu(self.linear(x))


def _networks():
  torso = CountingTorso()
  actor = snt.Sequential([torso, snt.Linear(2, name="actor_head")],
                         name="actor")
  critic = snt.Sequential([torso, snt.Linear(1, name="critic_head")],
                          name="critic")
  return torso, actor, critic


def test_split_finds_the_shared_front_only():
  torso, actor, critic = _networks()
  front, actor_head, critic_head = shared_torso.split(actor, critic)
  assert front == [torso]
  assert [m.name for m in actor_head] == ["actor_head"]
  assert [m.name for m in critic_head] == ["critic_head"]
  other = snt.Sequential([CountingTorso(), snt.Linear(1)])
  assert shared_torso.split(actor, other) is None
  assert shared_torso.split(snt.Linear(2), critic) is None

  class Reversed(snt.Sequential):  # Its own order: not a front.
    def __call__(self, x):
      return self._layers[1](self._layers[0](x))
  assert shared_torso.split(Reversed(actor._layers), critic) is None


def _train(scenario_type, split, monkeypatch, **settings):
  """Trains shared-torso networks from a fixed start; the torso's calls,
  its weights at the start, and every weight at the end."""
  monkeypatch.setattr(shared_torso, "split", split)
  torso, actor, critic = _networks()
  tf.random.set_seed(0)
  actor(tf.zeros([1, 1]))
  critic(tf.zeros([1, 1]))
  torso.calls = 0
  scenario = scenario_type(num_env_steps=160, num_envs=4, rollout_length=10,
                           progress=False, seed=3, **settings)
  start = torso.linear.w.numpy()
  scenario(actor, critic, snt.optimizers.Adam(0.01), rl_toys.Guess(4))
  end = [v.numpy() for v in scenario.trainable_variables()]
  return torso.calls, start, end


@pytest.mark.parametrize("scenario_type, settings", [
    (snt.scenarios.PPO, dict(num_epochs=2, num_minibatches=2)),
    (snt.scenarios.REINFORCE, {}),
])
def test_update_runs_the_torso_once_with_the_same_arithmetic(
    scenario_type, settings, monkeypatch):
  shared_calls, start, shared = _train(scenario_type, shared_torso.split,
                                       monkeypatch, **settings)
  twice_calls, _, twice = _train(scenario_type, lambda actor, critic: None,
                                 monkeypatch, **settings)
  # The traced update calls the torso once instead of twice (acting and
  # the rollout's values call one network each, as before).
  assert twice_calls - shared_calls == 1
  assert len(shared) == len(twice) == 6  # torso, heads: w and b each.

  def torso_w(weights):
    return next(w for w in weights if w.shape == start.shape)
  for mine, theirs in zip(shared, twice):
    np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-6)
  # Both trained the torso: it moved from its start.
  assert np.abs(torso_w(shared) - start).max() > 1e-3
