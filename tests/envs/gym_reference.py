"""Steps an in-graph environment beside gymnasium's and compares every step.

Each of the `num_envs` environments has its own gymnasium reference (with
gymnasium's `TimeLimit`), put in the same starting state. Both get the same
actions; after every step the observation reached, the reward, and the
termination and truncation flags must be equal, and an environment that
restarted must observe its new state.
"""

from collections.abc import Callable

import numpy as np
import tensorflow as tf


def compare(env, gym_id: str, policy: Callable[[np.ndarray, np.ndarray],
                                               np.ndarray],
            num_steps: int, jit: bool | None, resync: bool = False
            ) -> dict[str, int]:
  """Steps `env` and gymnasium's `gym_id` side by side; asserts equality.

  Args:
    env: An in-graph environment (reset by the caller).
    gym_id: The gymnasium id it follows.
    policy: `(observation, state) -> action`, NumPy arrays with a leading
      `num_envs` axis.
    num_steps: How many steps of all environments.
    jit: None steps eagerly; False in a `tf.function`; True also with XLA.
    resync: Put every reference in the environment's state before each step
      (for a chaotic system, so each step starts from the same state), and
      compare the float64 states reached to within 1e-11 (relative).

  Returns:
    How many episodes "terminated" and how many were "truncated", and with
    `resync`, after how many of the steps that went on the float64 states
    were not bit for bit equal ("float64_differences").
  """
  import gymnasium  # pylint: disable=g-import-not-at-top
  references = [gymnasium.make(gym_id,
                               max_episode_steps=env.max_episode_steps)
                for _ in range(env.num_envs)]

  def restart(i):
    references[i].reset(seed=i)
    references[i].unwrapped.state = env.state.numpy()[i].copy()

  for i in range(env.num_envs):
    restart(i)
  step = env.step if jit is None else tf.function(env.step, jit_compile=jit)
  counts = {"terminated": 0, "truncated": 0, "float64_differences": 0}
  for _ in range(num_steps):
    state = env.state.numpy()
    if resync:
      for i, reference in enumerate(references):
        reference.unwrapped.state = state[i].copy()
    action = policy(env.observation().numpy(), state)
    timestep = step(tf.constant(action))
    final = timestep.final_observation.numpy()
    observation = timestep.observation.numpy()
    reward = timestep.reward.numpy()
    for i, reference in enumerate(references):
      act = action[i] if action.ndim > 1 else int(action[i])
      ref_obs, ref_reward, ref_term, ref_trunc, _ = reference.step(act)
      np.testing.assert_array_equal(final[i], ref_obs)
      assert reward[i] == np.float32(ref_reward), (reward[i], ref_reward)
      assert bool(timestep.terminated.numpy()[i]) == ref_term
      # gymnasium's TimeLimit flags both when the last step also terminates.
      assert bool(timestep.truncated.numpy()[i]) == (ref_trunc and
                                                     not ref_term)
      if ref_term or ref_trunc:
        counts["terminated" if ref_term else "truncated"] += 1
        restart(i)
        np.testing.assert_array_equal(observation[i],
                                      env.observation().numpy()[i])
      else:
        np.testing.assert_array_equal(observation[i], final[i])
        if resync:
          reached = np.asarray(reference.unwrapped.state, np.float64)
          np.testing.assert_allclose(env.state.numpy()[i], reached,
                                     rtol=1e-11, atol=1e-13)
          counts["float64_differences"] += not np.array_equal(
              env.state.numpy()[i], reached)
  return counts
