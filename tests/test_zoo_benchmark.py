"""benchmarks/zoo.py runs a tiny row end to end (the real rows take minutes
each: BUILD_NOTES "Zoo table (issue 28)" has their figures)."""

import importlib.util
import json
import pathlib

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
