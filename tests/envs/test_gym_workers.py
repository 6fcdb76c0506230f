"""`GymEnvironment` stepped by worker processes (`workers=`, `InWorkers`).

The workers must play the episodes of in-process stepping (observations,
rewards, ends, last observations, bitwise, on fixed seeds and actions), stop
with `close()`, with garbage collection and when one of them fails, be
copied as the in-process environment is, and refuse what they cannot make
with an error that names the caller, what it expected and what it got.
"""

import copy
import functools
import gc
import multiprocessing
import importlib.util
import os
import re
import signal

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.envs import gym_workers

gym = pytest.importorskip("gymnasium")
needs_atari = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("ale_py", "cv2")),
    reason="ale-py and OpenCV are not installed: pip install "
    "sonnet_like[atari]")

BREAKOUT = functools.partial(snt.envs.atari, "BreakoutNoFrameskip-v4",
                             training=True)


def _play(env, actions, reseed_at=None):
  """Every output of `env.step` (traced) for `actions`, and the resets."""
  step = tf.function(env.step)
  out = [env.reset(seed=3).numpy()]
  for t, action in enumerate(actions):
    if t == reseed_at:
      out.append(env.reset(seed=40).numpy())
    out.extend(x.numpy() for x in step(tf.constant(action)))
  return out


def _assert_same_play(ours, theirs):
  assert len(ours) == len(theirs)
  for t, (got, want) in enumerate(zip(ours, theirs)):
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want, err_msg=f"output {t}")


@needs_atari
def test_atari_in_workers_plays_the_in_process_episodes():
  actions = np.random.default_rng(0).integers(0, 4, (200, 4))
  here = snt.envs.make(BREAKOUT, num_envs=4, seed=3)
  workers = snt.envs.make(BREAKOUT, num_envs=4, seed=3, workers=2)
  assert repr(workers) == ("GymEnvironment('BreakoutNoFrameskip-v4', "
                           "num_envs=4, workers=2)")
  assert workers.observation_spec == tf.TensorSpec([84, 84, 4], tf.uint8)
  assert workers.action_space == here.action_space == snt.envs.Discrete(4)
  expected = _play(here, actions, reseed_at=150)
  got = _play(workers, actions, reseed_at=150)
  _assert_same_play(got, expected)
  assert got[-5].shape == (4, 84, 84, 4) and got[-5].dtype == np.uint8
  terminated = np.stack(expected[3::5][:150])   # Lost lives end episodes.
  assert terminated.sum() >= 8 and np.stack(expected[2::5][:150]).sum() > 0
  workers.close()


@pytest.mark.parametrize("num_envs, workers, counts", [
    (5, 2, [3, 2]), (3, 3, [1, 1, 1]), (2, 4, [1, 1])])
def test_uneven_shares_and_more_workers_than_environments(num_envs, workers,
                                                          counts):
  actions = np.random.default_rng(1).integers(0, 2, (120, num_envs))
  env = snt.envs.make("CartPole-v1", num_envs=num_envs, seed=3,
                      workers=workers)
  # pylint: disable-next=protected-access
  assert [len(share) for share in env._batch.shares] == counts
  expected = _play(snt.envs.make("CartPole-v1", num_envs=num_envs, seed=3),
                   actions, reseed_at=60)
  _assert_same_play(_play(env, actions, reseed_at=60), expected)
  assert np.stack(expected[3::5]).sum() >= 3   # Episodes ended.
  env.close()


def test_in_workers_is_what_make_is_given_where_it_is_called_for_you():
  marked = snt.envs.InWorkers("CartPole-v1", workers=2)
  env = snt.envs.make(marked, num_envs=4, seed=1)
  assert env.workers == 2 and env.num_envs == 4
  np.testing.assert_array_equal(
      env.observation(),
      snt.envs.make("CartPole-v1", num_envs=4, seed=1).observation())
  assert isinstance(marked(), gym.Env)   # Also a factory, here.
  env.close()
  with pytest.raises(ValueError, match=r"^make: workers=3 was asked for, "
                     r"but the given InWorkers\(env='CartPole-v1', "
                     r"workers=2\) has workers=2\.$"):
    snt.envs.make(marked, num_envs=4, workers=3)


@pytest.mark.parametrize("workers", [0, -1, True, 1.5, "2"])
def test_a_bad_workers_count_is_named(workers):
  message = (r"workers must be a positive int \(how many processes step the "
             r"environments\) or None \(step them in this process\), got "
             + re.escape(repr(workers)) + r"\.$")
  with pytest.raises(ValueError, match="^make: " + message):
    snt.envs.make("CartPole-v1", num_envs=2, workers=workers)
  with pytest.raises(ValueError, match="^GymEnvironment: " + message):
    snt.envs.GymEnvironment("CartPole-v1", num_envs=2, workers=workers)
  with pytest.raises(ValueError, match="^InWorkers: " + message):
    snt.envs.InWorkers("CartPole-v1", workers=workers)


def test_what_cannot_be_made_in_workers_is_named():
  made_here = gym.make("CartPole-v1")
  with pytest.raises(TypeError, match=r"^make: workers=2 steps gymnasium "
                     r"Envs in worker processes, each making its own from a "
                     r"gymnasium id or a zero-argument factory of an Env; "
                     r"got TimeLimit: .*, which is an environment made in "
                     r"this process\. Pass its id or a factory"):
    snt.envs.make(made_here, num_envs=2, workers=2)
  vector = gym.make_vec("CartPole-v1", 2, vectorization_mode="sync")
  with pytest.raises(TypeError, match=r"^make: workers=2 .* got "
                     r"SyncVectorEnv: .*, which steps its environments "
                     r"itself\. Pass it without workers\.$"):
    snt.envs.make(vector, workers=2)
  with pytest.raises(TypeError, match=r"^make: workers=1 .* got CartPole: "
                     r".*, which steps its environments itself"):
    snt.envs.make(snt.envs.CartPole(2), workers=1)
  with pytest.raises(TypeError, match=r"^InWorkers: workers=2 .* got int: "
                     r"3, which is neither"):
    snt.envs.InWorkers(3, workers=2)
  with pytest.raises(TypeError, match=r"^GymEnvironment: workers=2 .* got "
                     r"TimeLimit"):
    snt.envs.GymEnvironment(made_here, 2, workers=2)
  with pytest.raises(ValueError, match=r"^make: in_graph=True asks for an "
                     r"environment written in TensorFlow, workers=2 for "
                     r"gymnasium Envs stepped in Python by worker processes"):
    snt.envs.make("CartPole-v1", in_graph=True, workers=2)


def _dead(processes):
  for process in processes:
    process.join(10)
  return [not process.is_alive() for process in processes]


def test_a_factory_that_fails_in_a_worker_is_named_and_stops_them_all():
  before = set(multiprocessing.active_children())
  with pytest.raises(TypeError, match=r"^GymEnvironment: each worker process "
                     r"makes its environments with the factory, which must "
                     r"return a gymnasium Env there, got SyncVectorEnv"):
    snt.envs.make(lambda: gym.make_vec("CartPole-v1", 2,
                                       vectorization_mode="sync"),
                  num_envs=2, workers=2)
  with pytest.raises(ValueError, match=r"^GymEnvironment\(FrozenLake-v1\): "
                     r"the observation space must be a gymnasium Box"):
    snt.envs.make("FrozenLake-v1", num_envs=2, workers=2)
  assert set(multiprocessing.active_children()) <= before

  def broken():
    raise OSError("no such ROM")

  with pytest.raises(RuntimeError, match=r"(?s)^GymEnvironment\(broken\): "
                     r"worker process 0 \(pid \d+, environments 0-1\) failed "
                     r"in start; the workers were stopped .*OSError: no such "
                     r"ROM"):
    snt.envs.make(broken, num_envs=3, workers=2)
  # Every time, the workers were stopped, not left to the garbage collector.
  assert set(multiprocessing.active_children()) <= before


def test_workers_stop_at_close_and_a_closed_environment_says_so():
  env = snt.envs.make("CartPole-v1", num_envs=2, seed=0, workers=2)
  env.step(tf.constant([0, 1]))
  processes = list(env._batch.processes)  # pylint: disable=protected-access
  env.close()
  assert _dead(processes) == [True, True]
  assert [p.exitcode for p in processes] == [0, 0]   # They left when told.
  env.close()   # Again: nothing.
  with pytest.raises(RuntimeError, match=r"^GymEnvironment\(CartPole-v1\): "
                     r"its worker processes were stopped by close\(\); make "
                     r"a new environment to step\.$"):
    env.python_step(np.array([0, 1]))


def test_workers_stop_when_the_environment_is_garbage_collected():
  env = snt.envs.make("CartPole-v1", num_envs=2, seed=0, workers=2)
  env.step(tf.constant([0, 1]))
  processes = list(env._batch.processes)  # pylint: disable=protected-access
  del env
  gc.collect()
  assert _dead(processes) == [True, True]
  assert [p.exitcode for p in processes] == [0, 0]


def test_a_worker_that_dies_is_named_and_the_others_are_stopped():
  env = snt.envs.make("CartPole-v1", num_envs=4, seed=0, workers=2)
  env.reset(seed=0)
  processes = list(env._batch.processes)  # pylint: disable=protected-access
  os.kill(processes[1].pid, signal.SIGKILL)
  processes[1].join(10)
  with pytest.raises(RuntimeError, match=r"^GymEnvironment\(CartPole-v1\): "
                     rf"worker process 1 \(pid {processes[1].pid}, "
                     r"environments 2-3\) exited \(exit code -9\) while it "
                     r"was asked to step; the workers were stopped"):
    env.python_step(np.zeros([4], np.int64))
  assert _dead(processes) == [True, True]


def test_a_copy_has_workers_of_its_own_and_plays_as_the_original():
  """`copy.deepcopy` (a population's member gets its own environment)."""
  env = snt.envs.make("CartPole-v1", num_envs=3, seed=4, workers=2)
  made = copy.deepcopy(env)
  # pylint: disable-next=protected-access
  mine, theirs = env._batch.processes, made._batch.processes
  assert made.workers == 2 and made.num_envs == 3
  assert not {p.pid for p in mine} & {p.pid for p in theirs}
  np.testing.assert_array_equal(made.reset(seed=5), env.reset(seed=5))
  for action in ([0, 1, 1], [1, 1, 0], [0, 0, 0]):
    for got, want in zip(made.python_step(np.array(action)),
                         env.step(tf.constant(action))):
      np.testing.assert_array_equal(got, want.numpy())
  made.close()
  assert _dead(theirs) == [True, True] and all(p.is_alive() for p in mine)
  env.close()


def test_a_checkpoint_holds_nothing_of_the_workers_environments(tmp_path):
  """As in one process: the state is in Python, not checkpointed; saving
  and restoring work and leave the environments as they are."""
  env = snt.envs.make("CartPole-v1", num_envs=2, seed=0, workers=2)
  here = snt.envs.make("CartPole-v1", num_envs=2, seed=0)
  for made in (env, here):
    made.reset(seed=0)
    made.step(tf.constant([1, 1]))
  path = tf.train.Checkpoint(env=env).save(str(tmp_path / "ckpt"))
  assert tf.train.list_variables(path) == tf.train.list_variables(
      tf.train.Checkpoint(env=here).save(str(tmp_path / "here")))
  other = snt.envs.make("CartPole-v1", num_envs=2, seed=9, workers=2)
  before = other.observation().numpy()
  tf.train.Checkpoint(env=other).restore(path).assert_existing_objects_matched()
  np.testing.assert_array_equal(other.observation(), before)
  for made in (env, other):
    made.close()


@needs_atari
def test_atari_recipes_step_in_workers_on_several_environments():
  ppo = snt.scenarios.PPO.recipe("BreakoutNoFrameskip-v4")
  made = ppo.env()
  cores = len(os.sched_getaffinity(0))
  if cores > 1:
    assert isinstance(made, snt.envs.InWorkers)
    assert made.workers == min(cores, ppo.settings["num_envs"])
    assert made.env.keywords == {"training": True}
  evaluation = ppo.env(training=False)
  assert getattr(evaluation, "env", evaluation).keywords == {
      "training": False}
  dqn = snt.scenarios.DQN.recipe("BreakoutNoFrameskip-v4")
  assert not isinstance(dqn.env(), snt.envs.InWorkers)   # One environment.


def test_shares_are_consecutive_and_as_even_as_can_be():
  assert gym_workers.shares(8, 2) == [range(0, 4), range(4, 8)]
  assert gym_workers.shares(8, 3) == [range(0, 3), range(3, 6), range(6, 8)]
  assert gym_workers.shares(2, 5) == [range(0, 1), range(1, 2)]
