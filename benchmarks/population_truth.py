"""What a population reports against its solo runs: each member's final
in-run evaluation beside the solo run of its seed, on the same evaluation
environment, for an RL recipe (in-graph CartPole).

    python benchmarks/population_truth.py --scenario ppo --seeds 0 1 2 3 \\
        --env_steps 4096
    python benchmarks/population_truth.py --scenario dqn --seeds 0 1 \\
        --env_steps 3000

Prints one line per member: the population's reported return, the solo
run's, and their difference; then `best("return")` against the best solo
seed. Member i must report what the solo run of seed i reports.
"""

import argparse

import numpy as np

import sonnet_like as snt


def train(kind: str, env_steps: int, eval_episodes: int, **settings):
  scenario_type = {"ppo": snt.scenarios.PPO, "dqn": snt.scenarios.DQN}[kind]
  recipe = scenario_type.recipe("CartPole-v1")
  num_envs = recipe.settings["num_envs"] or 1
  scenario = recipe.scenario(num_env_steps=env_steps,
                             eval_every=None, eval_episodes=eval_episodes,
                             progress=False, tensorboard=False, **settings)
  networks = (recipe.q_network(),) if kind == "dqn" else recipe.networks()
  scenario(*networks, recipe.optimizer(),
           snt.envs.CartPole(num_envs=num_envs),
           eval_env=snt.envs.CartPole(eval_episodes, seed=1))
  return scenario


def main() -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--scenario", choices=["ppo", "dqn"], default="ppo")
  parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
  parser.add_argument("--env_steps", type=int, default=4096)
  parser.add_argument("--eval_episodes", type=int, default=16)
  args = parser.parse_args()
  population = train(args.scenario, args.env_steps, args.eval_episodes,
                     population=list(args.seeds))
  reported = population.history.member_eval["return"][-1]
  solos = [train(args.scenario, args.env_steps, args.eval_episodes,
                 seed=seed).history.eval["return"][-1] for seed in args.seeds]
  for i, seed in enumerate(args.seeds):
    print(f"member {i} (seed {seed}): population {reported[i]:7.2f}  "
          f"solo {solos[i]:7.2f}  difference {reported[i] - solos[i]:+.2f}")
  best = population.best("return")
  chosen = next(i for i in range(len(args.seeds))
                if best is population.member(i) or (
                    isinstance(best, dict) and all(
                        best[k] is v
                        for k, v in population.member(i).items())))
  print(f"best('return'): member {chosen}; best solo seed: "
        f"{args.seeds[int(np.argmax(solos))]}")


if __name__ == "__main__":
  main()
