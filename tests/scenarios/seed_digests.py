"""Trains every scenario tiny with one seed and prints digests of the result.

`python seed_digests.py SEEDS [NAME ...]` prints one JSON object,
{seed: {name: {"weights": digest, "state": digest}}}, for each of the
comma-separated SEEDS in turn and the runs named (all by default): every
row of the scenario table (their own `tf.random.set_seed(0)` is made a
no-op: nothing but `seed=` seeds them), a Supervised MLP with dropout, and
the RL recipes as a new user runs them (`recipe.scenario(seed=...)`,
`recipe.networks()`, a gymnasium id). "weights" digests the models'
variables, "state" everything the checkpoint holds. test_seed.py runs two
of them (the suite's time); run them all by hand, twice with one seed and
once with another, in fresh processes:

    python tests/scenarios/seed_digests.py 3 > a.json   # every run
"""

import hashlib
import json
import os
import sys

import numpy as np
import tensorflow as tf

# pylint: disable=g-import-not-at-top,wrong-import-position
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import keras
import sonnet_like as snt
import scenario_table


def digest(arrays) -> str:
  hashed = hashlib.sha256()
  for array in arrays:
    hashed.update(np.ascontiguousarray(array).tobytes())
  return hashed.hexdigest()[:16]


def supervised_dropout(seed):
  data = scenario_table._classes()  # pylint: disable=protected-access
  train = snt.scenarios.Supervised(4, batch_size=16, seed=seed,
                                   progress=False)
  train(snt.nets.MLP([8, 2], dropout_rate=0.5, name="mlp"),
        keras.optimizers.Adam(0.01),
        scenario_table._loss, data)  # pylint: disable=protected-access
  return train


# Recipes with budgets cut to a few updates: {name: (scenario, task, tiny)}.
RECIPES = {
    "recipe PPO CartPole": (snt.scenarios.PPO, "CartPole-v1",
                            dict(num_env_steps=512, num_epochs=2)),
    "recipe DQN CartPole": (snt.scenarios.DQN, "CartPole-v1",
                            dict(num_env_steps=48, learning_starts=16,
                                 batch_size=16, train_every=8,
                                 gradient_steps=2)),
    "recipe SAC Pendulum": (snt.scenarios.SAC, "Pendulum-v1",
                            dict(num_env_steps=32, learning_starts=16,
                                 batch_size=16, buffer_size=64)),
    "recipe TD3 Pendulum": (snt.scenarios.TD3, "Pendulum-v1",
                            dict(num_env_steps=32, learning_starts=16,
                                 batch_size=16, buffer_size=64)),
}


def train_recipe(scenario_type, task, tiny, seed):
  recipe = scenario_type.recipe(task)
  scenario = recipe.scenario(seed=seed, progress=False, **tiny)
  if scenario_type is snt.scenarios.DQN:
    scenario(recipe.q_network(), recipe.optimizer(), task)
  else:
    scenario(*recipe.networks(), recipe.optimizer(), task)
  return scenario


def runs(seed: int) -> dict:
  """Every run, by name: a function training it with `seed`."""
  named = {row.name: (lambda row=row: scenario_table.train(row, seed=seed))
           for row in scenario_table.ROWS}
  named["Supervised+dropout"] = lambda: supervised_dropout(seed)
  for name, (scenario_type, task, tiny) in RECIPES.items():
    named[name] = (lambda args=(scenario_type, task, tiny):
                   train_recipe(*args, seed))
  return named


def main(seeds: list[int], names: list[str]) -> None:
  digests = {}
  for seed in seeds:
    named = runs(seed)
    trained = {name: named[name]() for name in names or named}
    digests[seed] = {
        name: {"weights": digest(scenario_table.model_arrays(scenario)),
               "state": digest(scenario_table.state_arrays(scenario))}
        for name, scenario in trained.items()}
  print(json.dumps(digests))


if __name__ == "__main__":
  # The rows' own global seeding, undone (here only: pytest imports this
  # file to look for doctests, and the patch would outlive it).
  tf.random.set_seed = lambda seed: None
  main([int(seed) for seed in sys.argv[1].split(",")], sys.argv[2:])
