"""benchmarks/zoo.py runs a tiny row end to end (the real rows take minutes
each: BUILD_NOTES "Zoo table (issue 28)" has their figures)."""

import importlib.util
import json
import pathlib

import numpy as np
import pytest
import tensorflow as tf

import sonnet_like as snt
from sonnet_like.scenarios.rl.parts import episodes
from sonnet_like.scenarios.rl import recipes

_ZOO = pathlib.Path(__file__).parent.parent / "benchmarks" / "zoo.py"


def _zoo():
  spec = importlib.util.spec_from_file_location("zoo_benchmark", _ZOO)
  module = importlib.util.module_from_spec(spec)
  spec.loader.exec_module(module)
  return module


def test_a_tiny_row_trains_evaluates_makes_the_table_and_is_restored(
    tmp_path, capsys):
  zoo = _zoo()
  out = tmp_path / "runs.jsonl"
  command = ["--rows", "dqn-CartPole-v1", "--seeds", "1", "--steps", "300",
             "--modes", "in_graph", "--set", "gamma=0.9", "--out", str(out),
             "--save_dir", str(tmp_path / "runs")]
  zoo.main(command)
  printed = capsys.readouterr().out
  (run,) = [json.loads(line) for line in out.read_text().splitlines()]
  assert run["row"] == "dqn-CartPole-v1" and run["contender"] == "in_graph"
  assert run["env_steps"] == 300 and run["changes"] == {"gamma": 0.9}
  assert run["eval_episodes"] == 300  # The zoo's count for the row.
  assert 8 <= run["mean_return"] <= 500 and run["zoo_return"] == 500.0
  assert "| dqn-CartPole-v1 (50k) | 500.0 |" in printed
  assert "at 300 steps" in printed
  zoo.main(["--table", str(out)])
  assert "| dqn-CartPole-v1 (50k) |" in capsys.readouterr().out
  # The kept run is restored, not trained again, and evaluated anew.
  folder = (tmp_path / "runs" /
            "dqn-CartPole-v1-in_graph-seed0-steps300-gamma=0.9")
  assert (folder / "zoo.json").exists()
  zoo.main(command + ["--eval_episodes", "7"])
  printed = capsys.readouterr()
  assert "is already done (300 of 300 steps" in printed.out + printed.err
  trained, restored = [json.loads(line)
                       for line in out.read_text().splitlines()]
  assert restored["seconds"] == trained["seconds"]
  assert restored["eval_episodes"] == 7


def test_a_tiny_population_row_is_the_solo_runs_of_its_seeds(tmp_path,
                                                             capsys):
  # Two seeds trained as one population on gymnasium environments (each
  # member its own copy); each member evaluated as the solo run of its seed
  # is (same episodes and starts). One learning round
  # (256 steps in, 16 updates) so that the members have trained.
  zoo = _zoo()
  out = tmp_path / "population.jsonl"
  changes = ["--set", "learning_starts=100", "--set", "gradient_steps=16"]
  zoo.main(["--rows", "dqn-CartPole-v1", "--population", "2", "--modes",
            "gym", "--steps", "300", "--eval_episodes", "5", "--out",
            str(out)] + changes)
  printed = capsys.readouterr().out
  (run,) = [json.loads(line) for line in out.read_text().splitlines()]
  assert run["contender"] == "population" and run["mode"] == "gym"
  assert run["seeds"] == [0, 1] and run["env_steps"] == 300
  returns = run["member_returns"]
  assert len(returns) == 2 and all(8 <= r <= 500 for r in returns)
  summary = snt.scenarios.summarize(returns)
  assert run["iqm"] == summary.iqm and run["worst"] == min(returns)
  assert run["ci"] == [summary.low, summary.high]
  cell = (f"gymnasium: mean {summary.mean:.1f}, IQM {summary.iqm:.1f} "
          f"[{summary.low:.1f}, {summary.high:.1f}], worst {min(returns):.1f}"
          f" (2 seeds at 300 steps) in ")
  assert "| ours, one population |" in printed and cell in printed
  zoo.main(["--table", str(out)])
  assert cell in capsys.readouterr().out
  # Member 1's return is the solo run's with seed 1, at the same budget
  # (member 0 is checked the same way in the population tests).
  row = zoo.BY_NAME["dqn-CartPole-v1"]
  _, solo = zoo.train_ours(row, "gym", 1, 300, 100,
                           {"learning_starts": 100, "gradient_steps": 16})
  assert int(solo.optimizer.step) == 16  # It learnt.
  solo_return = float(np.mean(
      zoo.evaluate(zoo._greedy(solo), row.task, 1, 5)))  # pylint: disable=protected-access
  assert returns[1] == solo_return


def test_ppo_with_a_trained_log_std_trains_as_a_population():
  # The zoo's PPO Pendulum and MountainCarContinuous rows: the policy's
  # log_std (gSDE's matrix here) is made by build(), so each member makes
  # its own (it was made before the run, and a population refused it).
  def run(**settings):
    ppo = snt.scenarios.PPO(
        num_env_steps=2 * 2 * 8, num_envs=2, rollout_length=8, num_epochs=1,
        num_minibatches=1, sde_sample_freq=4, log_std_init=-1.0,
        progress=False, tensorboard=False, **settings)
    ppo(snt.nets.MLP([8, 1], name="actor"), snt.nets.MLP([8, 1],
                                                         name="critic"),
        snt.optimizers.Adam(1e-2), snt.envs.Pendulum(num_envs=2))
    return ppo

  population = run(population=[0, 1])
  member = population.member(1)
  solo = run(seed=1)
  np.testing.assert_allclose(member["log_std"].log_std.numpy(),
                             solo.policy.log_std.numpy(), atol=1e-5)
  for a, b in zip(member["actor"].variables, solo.actor.variables):
    np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-5)
  assert not np.array_equal(population.member(0)["log_std"].log_std.numpy(),
                            population.member(1)["log_std"].log_std.numpy())


def test_changes_reach_the_recipe_and_its_settings():
  zoo = _zoo()
  recipe = zoo.with_changes(snt.scenarios.DQN.recipe("CartPole-v1"),
                            {"hidden": (8,), "gamma": 0.5})
  assert recipe.hidden == (8,) and recipe.settings["gamma"] == 0.5
  q_network = recipe.q_network()
  assert q_network(tf.zeros([3, 4])).shape == [3, 2]
  assert [v.shape.as_list() for v in q_network.variables
          if v.shape.rank == 2] == [[4, 8], [8, 2]]


def test_unknown_rows_are_refused_with_the_known_ones(capsys):
  with pytest.raises(SystemExit):
    _zoo().main(["--rows", "dqn-Pong"])
  assert "unknown rows ['dqn-Pong']" in capsys.readouterr().err


def test_no_mode_of_ours_needs_sb3(capsys):
  with pytest.raises(SystemExit):
    _zoo().main(["--rows", "dqn-CartPole-v1", "--modes", "none"])
  assert "--modes none trains nothing of ours: add --sb3" in (
      capsys.readouterr().err)


def test_the_table_has_a_row_for_every_ppo_and_dqn_recipe_at_its_budget():
  zoo = _zoo()
  for algo, table in (("ppo", recipes.PPO_RECIPES),
                      ("dqn", recipes.DQN_RECIPES)):
    rows = {row.task: row for row in zoo.ZOO_ROWS if row.algo == algo}
    assert sorted(rows) == sorted(table), algo
    for task, row in rows.items():
      scenario_type = getattr(snt.scenarios, algo.upper())
      assert scenario_type.recipe(task).num_env_steps == row.budget, row.name


def test_each_seed_is_evaluated_from_its_own_starts():
  zoo = _zoo()
  most = max(row.eval_episodes for row in zoo.ZOO_ROWS)
  starts = [set(range(zoo.eval_seed(seed), zoo.eval_seed(seed) + most))
            for seed in range(3)]
  assert min(starts[0]) == 1000  # Seed 0's first 20, as before.
  assert not (starts[0] & starts[1] or starts[1] & starts[2]
              or starts[0] & starts[2])
  # Evaluating seed 1 plays the episodes that start from its own seeds.
  pump = lambda o: tf.where(o[:, 1] >= 0, 2, 0)  # Push along the velocity.
  env = snt.envs.make("MountainCar-v0", num_envs=30, seed=zoo.eval_seed(1))
  direct = episodes.EpisodeRunner(env, pump, 30)(
      seed=zoo.eval_seed(1))["return"]
  evaluated = zoo.evaluate(pump, "MountainCar-v0", 1, 30)
  assert sorted(evaluated.tolist()) == sorted(direct.tolist())
  assert -200 < min(evaluated) and len(set(evaluated.tolist())) > 3


def test_the_table_has_a_row_for_every_td3_recipe_within_its_budget():
  # The zoo's budget is a maximum: a recipe may stop earlier where its
  # returns hold (MountainCarContinuous-v0: 100k of 300k).
  zoo = _zoo()
  rows = {row.task: row for row in zoo.ZOO_ROWS if row.algo == "td3"}
  assert set(recipes.TD3_RECIPES) == set(rows)
  for task in recipes.TD3_RECIPES:
    assert snt.scenarios.TD3.recipe(task).num_env_steps <= rows[task].budget, (
        task)
