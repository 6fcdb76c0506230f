"""One long run of a recipe, with its learning curve beside the zoo's figure.

Trains our recipe for a `zoo.py` row (`snt.scenarios.<ALGO>.recipe(task)`)
on gymnasium's environment for one seed, evaluating the greedy policy in
the run every `--eval_every` environment steps (and at the end) over
`--eval_episodes` episodes of the evaluation environment (Atari: whole
games; seeds as `zoo.py`'s), and prints the curve: environment steps,
mean greedy return, wall seconds since the start. The run is kept in
`--save_dir`, so a killed one resumes there, and the curve is appended to
`--out` as JSON lines.

    python benchmarks/long_run.py --row sac-HalfCheetah-v5 --steps 300000 \
        --eval_every 25000 --out long.jsonl

Returns only, not speed: the run may share the machine.
"""

import argparse
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # pylint: disable=g-import-not-at-top

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo  # pylint: disable=g-import-not-at-top

snt = zoo.snt


class Curve(snt.scenarios.Hook):
  """Records each evaluation's mean return against environment steps."""

  def __init__(self, env_steps_per_step: int):
    self.env_steps_per_step = env_steps_per_step
    self.start = time.perf_counter()
    self.points: list[dict[str, float]] = []

  def eval_end(self, scenario, step, metrics):
    point = dict(env_steps=step * self.env_steps_per_step,
                 greedy_return=float(metrics["return"]),
                 seconds=round(time.perf_counter() - self.start, 1))
    self.points.append(point)
    print(json.dumps(point), flush=True)


def env_steps_per_step(recipe: snt.scenarios.Recipe) -> int:
  """Environment steps in one scenario step: a rollout of all
  environments (PPO), or one step of each (off-policy)."""
  settings = recipe.settings
  num_envs = settings.get("num_envs") or 1
  return settings.get("rollout_length", 1) * num_envs


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--row", required=True, help="e.g. sac-HalfCheetah-v5")
  parser.add_argument("--steps", type=int, required=True,
                      help="environment steps")
  parser.add_argument("--eval_every", type=int, required=True,
                      help="environment steps between evaluations")
  parser.add_argument("--eval_episodes", type=int, default=10)
  parser.add_argument("--seed", type=int, default=0)
  parser.add_argument("--steps_per_call", type=int, default=100)
  parser.add_argument("--save_dir", default=None)
  parser.add_argument("--out", default=None)
  args = parser.parse_args(argv)

  row = next((r for r in zoo.ZOO_ROWS if r.name == args.row), None)
  if row is None:
    parser.error(f"--row: no zoo row {args.row!r}; rows are "
                 f"{', '.join(r.name for r in zoo.ZOO_ROWS)}")
  recipe = getattr(snt.scenarios, row.algo.upper()).recipe(row.task)
  per_step = env_steps_per_step(recipe)
  if args.eval_every % per_step:
    parser.error(f"--eval_every must be a multiple of {per_step} (the "
                 f"environment steps of one {row.algo.upper()} step), got "
                 f"{args.eval_every}")
  curve = Curve(per_step)
  overrides = dict(seed=args.seed, num_env_steps=args.steps, progress=False,
                   eval_every=args.eval_every // per_step,
                   eval_episodes=args.eval_episodes, hooks=[curve],
                   save_dir=args.save_dir or os.path.join(
                       "/tmp/long_run", f"{row.name}-seed{args.seed}"
                       f"-steps{args.steps}"))
  if row.algo != "ppo":
    overrides["steps_per_call"] = args.steps_per_call
  tf.random.set_seed(args.seed)
  scenario = recipe.scenario(**overrides)
  env = snt.envs.make(recipe.env(training=True),
                      num_envs=recipe.settings.get("num_envs") or 1,
                      seed=args.seed)
  eval_env = snt.envs.make(zoo.env_of(row.task),
                           num_envs=args.eval_episodes,
                           seed=zoo.eval_seed(args.seed))
  if row.algo == "dqn":
    scenario(recipe.q_network(), recipe.optimizer(), env, eval_env=eval_env)
  else:
    actor, critic = recipe.networks()
    scenario(actor, critic, recipe.optimizer(), env, eval_env=eval_env)
  if args.out:
    with open(args.out, "a", encoding="utf-8") as f:
      f.write(json.dumps(dict(row=row.name, seed=args.seed, steps=args.steps,
                              zoo_return=row.zoo_return,
                              zoo_budget=row.budget,
                              curve=curve.points)) + "\n")


if __name__ == "__main__":
  main()
