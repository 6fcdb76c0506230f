"""SAC's and TD3's warm-up (`TwinCritics.random_or`): uniform actions with
no actor run, and the generator's numbers of drawing both sides."""

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt

NUM_ENVS, WARM_UP, LEARNING, BATCH = 4, 40, 20, 8


class CountingActor(snt.Module):
  """An actor that counts the times its ops run (not traced: run)."""

  def __init__(self, outputs: int, name="actor"):
    super().__init__(name=name)
    self.net = snt.nets.MLP([16, outputs], name="net")
    self.runs = tf.Variable(0, trainable=False, name="runs")

  def __call__(self, x):
    self.runs.assign_add(1)
    return self.net(x)


def _run(algo: str, num_env_steps: int, learning_starts: int = WARM_UP):
  scenario = getattr(snt.scenarios, algo)(
      num_env_steps=num_env_steps, num_envs=NUM_ENVS,
      learning_starts=learning_starts,
      batch_size=BATCH, steps_per_call=5, seed=3, eval_every=None,
      progress=False)
  # SAC's actor gives a mean and a log-std, TD3's the action.
  actor = CountingActor(outputs=2 if algo == "SAC" else 1)
  critic = snt.nets.MLP([16, 1], name="critic")
  scenario(actor, critic, snt.optimizers.Adam(1e-3),
           snt.envs.Pendulum(num_envs=NUM_ENVS, seed=3))
  return scenario, actor


# What each side draws a step after the uniform actions `[envs, 1]`: SAC's
# policy one seed (`make_seeds(1)`), TD3's exploration noise `[envs, 1]`.
POLICY_DRAWS = {"SAC": 1, "TD3": NUM_ENVS}


@pytest.mark.parametrize("algo", ["SAC", "TD3"])
def test_the_warm_up_plays_the_generators_uniforms_and_runs_no_actor(algo):
  # (The step that reaches `learning_starts` learns: one more step later.)
  scenario, actor = _run(algo, WARM_UP, learning_starts=WARM_UP + NUM_ENVS)
  runs_outside_steps = int(actor.runs.numpy())
  stream = tf.random.Generator.from_key_counter(0, [0, 3], "philox")
  uniforms = []
  for _ in range(WARM_UP // NUM_ENVS):
    uniforms.append(stream.uniform([NUM_ENVS, 1], -1.0, 1.0))
    stream.skip(POLICY_DRAWS[algo])  # The policy side's draws, not made.
  played = scenario.buffer.storage.action[:WARM_UP].numpy()
  # Pendulum's box is [-2, 2].
  np.testing.assert_array_equal(played, 2.0 * np.concatenate(uniforms))
  np.testing.assert_array_equal(scenario.rng.state.numpy(),
                                stream.state.numpy())
  # Computed and discarded, the actor would have run in each warm-up step
  # (and it does run once learning starts).
  assert runs_outside_steps < WARM_UP // NUM_ENVS
  _, learning_actor = _run(algo, WARM_UP + LEARNING)
  assert int(learning_actor.runs.numpy()) > (
      runs_outside_steps + LEARNING // NUM_ENVS)


def test_after_the_warm_up_the_uniform_draw_is_skipped_not_lost():
  # A learning step of SAC moves the generator by the uniform actions (not
  # drawn), the policy's seed, then its update's: the batch's indices and
  # two seeds (the next and the new actions).
  warm, _ = _run("SAC", WARM_UP)
  trained, _ = _run("SAC", WARM_UP + LEARNING)
  per_step = NUM_ENVS + 1 + BATCH + 2
  stream = tf.random.Generator.from_state(warm.rng.state, "philox")
  stream.skip(per_step * (LEARNING // NUM_ENVS))
  np.testing.assert_array_equal(trained.rng.state.numpy(),
                                stream.state.numpy())
