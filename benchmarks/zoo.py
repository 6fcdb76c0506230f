"""The RL Zoo table: our recipes against rl-baselines3-zoo's published returns.

For each row (algorithm and classic-control task) this trains our recipe
(`snt.scenarios.<ALGO>.recipe(task)`) at its step budget, once per seed, on
gymnasium's environment and on the in-graph one (`--modes`), and reports
the greedy mean return of each trained policy over as many gymnasium
episodes as the zoo evaluated its agent on (`eval_episodes`: the episodes
of its 150k evaluation steps, 300-2275 a row; each seed's episodes from
their own starts, `eval_seed`; mean and worst over seeds) and the training
wall time (tracing included, evaluation excluded), beside the return
rl-baselines3-zoo publishes for Stable-Baselines3 at the zoo's budget
(`benchmark.md` of the zoo; one run each there). With `--sb3`,
Stable-Baselines3 (an optional benchmark dependency, `pip install
stable-baselines3`) trains with the zoo's hyperparameters
(`hyperparams/<algo>.yml`) in the same run and is evaluated by the same
loop (`snt.envs`'s gymnasium wrapper, our `EpisodeRunner`).

    python benchmarks/zoo.py                        # every row, 3 seeds
    python benchmarks/zoo.py --rows dqn-CartPole-v1,sac-Pendulum-v1 \
        --seeds 1 --modes in_graph --sb3
    python benchmarks/zoo.py --rows ppo-MountainCarContinuous-v0 \
        --modes none --sb3                          # SB3 alone
    python benchmarks/zoo.py --rows dqn-CartPole-v1 --seeds 1 --steps 500
    python benchmarks/zoo.py --rows ppo-CartPole-v1 --population 10 \
        --modes in_graph --sb3                      # 10 seeds, one program

`--steps` overrides every budget (smoke runs), `--eval_episodes` every
evaluation, `--set NAME=VALUE` changes a setting of our recipes (tuning);
`--save_dir DIR` keeps each trained run of ours in its own folder there
and restores a finished one instead of training it again (so a changed
evaluation needs no new training; its recorded training time is
reported); `--out FILE` appends one JSON line per run, and `--table FILE`
prints the markdown table of such a file (so a table can be assembled
from several invocations). Rows without a recipe of ours are skipped with
a note.

`--population N` trains each row's N seeds (`--seed_list`, or 0..N-1) as
one population (`recipe.scenario(population=seeds)`): one process, every
member's step in one compiled call, on the in-graph environment (the
default with `--population`) or with `--modes gym` on gymnasium's, each
member stepping its own copy (so MuJoCo and Atari rows have populations
too). Its wall time is the whole population's (tracing included). Member i is the run of seed i (equal to
the solo run within float rounding, which grows over a whole budget), and
its greedy policy is evaluated as a solo run of that seed is (same
episodes, same starts), so the figures compare with solo runs'. The row
gives the members' mean, interquartile mean with its 95% bootstrap
interval (`snt.scenarios.summarize`) and worst return; `--sb3` trains
Stable-Baselines3 on the first `--sb3_seeds` seeds (3), with its mean
wall time per seed.

MuJoCo (`sac-`, `td3-`, `ppo-HalfCheetah-v5`, `-Hopper-v5`,
`-Walker2d-v5`; `pip install sonnet_like[mujoco]`) and Atari
(`ppo-`, `dqn-BreakoutNoFrameskip-v4`, `-PongNoFrameskip-v4`;
`sonnet_like[atari]`) rows step gymnasium only (`--modes gym`; in_graph
is skipped with a note). Atari trains on
`snt.envs.atari(task, training=True)` (SB3 on its `AtariWrapper` with 4
stacked frames, as the zoo) and both are evaluated on
`snt.envs.atari(task)`: whole games, unclipped scores.

    python benchmarks/zoo.py --rows sac-HalfCheetah-v5 --steps 30000 \
        --modes gym --sb3 --eval_episodes 20

Run it on an otherwise idle machine: wall times on a shared one only
compare within one invocation.
"""

import argparse
import ast
import dataclasses
import functools
import importlib
import json
import os
import statistics
import sys
import time
from typing import Any

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # pylint: disable=g-import-not-at-top
import tensorflow as tf  # pylint: disable=g-import-not-at-top

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import sonnet_like as snt  # pylint: disable=g-import-not-at-top
from sonnet_like.scenarios.rl.parts import episodes  # pylint: disable=g-import-not-at-top

EVAL_SEED = 1000
EVAL_STRIDE = 10_000  # More starts than any row's evaluation plays.


def eval_seed(seed: int) -> int:
  """The first evaluation seed of training seed `seed`: its gymnasium
  episode i starts from seed `eval_seed(seed) + i`, so different training
  seeds are evaluated from different starts (seed 0 from 1000 on, seed 1
  from 11000 on, ...)."""
  return EVAL_SEED + EVAL_STRIDE * seed


@dataclasses.dataclass(frozen=True)
class ZooRow:
  """One row of rl-baselines3-zoo's benchmark and its hyperparameters.

  Attributes:
    algo: "dqn", "ppo", "sac" or "td3".
    task: The gymnasium id.
    zoo_return: The zoo's published mean return (benchmark.md).
    budget: The zoo's `n_timesteps` for it.
    eval_episodes: How many episodes the zoo's return averages (its
      `eval_episodes`: those that ended in 150k deterministic steps).
    sb3: Stable-Baselines3 constructor arguments from the zoo's
      hyperparams/<algo>.yml (n_envs, net_arch and the noise settings are
      turned into SB3 objects by `sb3_model`).
  """
  algo: str
  task: str
  zoo_return: float
  budget: int
  eval_episodes: int
  sb3: dict[str, Any]

  @property
  def name(self) -> str:
    return f"{self.algo}-{self.task}"


# Published figures and hyperparameters of rl-baselines3-zoo (benchmark.md
# and hyperparams/*.yml, read 2026-11; data, not code).
ZOO_ROWS = [
    ZooRow("dqn", "CartPole-v1", 500.0, 50_000, 300, dict(
        learning_rate=2.3e-3, batch_size=64, buffer_size=100_000,
        learning_starts=1000, gamma=0.99, target_update_interval=10,
        train_freq=256, gradient_steps=128, exploration_fraction=0.16,
        exploration_final_eps=0.04, net_arch=[256, 256])),
    ZooRow("dqn", "Acrobot-v1", -76.639, 100_000, 1932, dict(
        learning_rate=6.3e-4, batch_size=128, buffer_size=50_000,
        learning_starts=0, gamma=0.99, target_update_interval=250,
        train_freq=4, gradient_steps=-1, exploration_fraction=0.12,
        exploration_final_eps=0.1, net_arch=[256, 256])),
    ZooRow("dqn", "MountainCar-v0", -100.849, 120_000, 1487, dict(
        learning_rate=4e-3, batch_size=128, buffer_size=10_000,
        learning_starts=1000, gamma=0.98, target_update_interval=600,
        train_freq=16, gradient_steps=8, exploration_fraction=0.2,
        exploration_final_eps=0.07, net_arch=[256, 256])),
    ZooRow("ppo", "CartPole-v1", 500.0, 100_000, 300, dict(
        n_envs=8, n_steps=32, batch_size=256, gae_lambda=0.8, gamma=0.98,
        n_epochs=20, ent_coef=0.0, learning_rate="lin_0.001",
        clip_range="lin_0.2")),
    ZooRow("ppo", "Acrobot-v1", -73.506, 1_000_000, 2013, dict(
        normalize=True, n_envs=16, n_steps=256, gae_lambda=0.94, gamma=0.99,
        n_epochs=4, ent_coef=0.0)),
    ZooRow("ppo", "MountainCar-v0", -110.423, 1_000_000, 1358, dict(
        normalize=True, n_envs=16, n_steps=16, gae_lambda=0.98, gamma=0.99,
        n_epochs=4, ent_coef=0.0)),
    ZooRow("ppo", "MountainCarContinuous-v0", 88.343, 20_000, 633, dict(
        normalize=True, n_envs=1, batch_size=256, n_steps=8, gamma=0.9999,
        learning_rate=7.77e-5, ent_coef=0.00429, clip_range=0.1, n_epochs=10,
        gae_lambda=0.9, max_grad_norm=5, vf_coef=0.19, use_sde=True,
        log_std_init=-3.29, ortho_init=False)),
    ZooRow("ppo", "Pendulum-v1", -172.225, 100_000, 750, dict(
        n_envs=4, n_steps=1024, gae_lambda=0.95, gamma=0.9, n_epochs=10,
        ent_coef=0.0, learning_rate=1e-3, clip_range=0.2, use_sde=True,
        sde_sample_freq=4)),
    ZooRow("sac", "Pendulum-v1", -156.995, 20_000, 750, dict(
        learning_rate=1e-3)),
    ZooRow("sac", "MountainCarContinuous-v0", 94.679, 50_000, 1443, dict(
        learning_rate=3e-4, buffer_size=50_000, batch_size=512, ent_coef=0.1,
        train_freq=32, gradient_steps=32, gamma=0.9999, tau=0.01,
        learning_starts=0, use_sde=True, log_std_init=-3.67,
        net_arch=[64, 64])),
    ZooRow("td3", "Pendulum-v1", -151.855, 20_000, 750, dict(
        gamma=0.98, buffer_size=200_000, learning_starts=10_000,
        noise_type="normal", noise_std=0.1, gradient_steps=1, train_freq=1,
        learning_rate=1e-3, net_arch=[400, 300])),
    ZooRow("td3", "MountainCarContinuous-v0", 93.483, 300_000, 2275, dict(
        noise_type="ornstein-uhlenbeck", noise_std=0.5, gradient_steps=1,
        train_freq=1, learning_rate=1e-3, batch_size=256,
        net_arch=[400, 300])),
]

# MuJoCo and Atari (issue 60). The zoo trained and published the MuJoCo
# rows on the v3 ids (its hyperparams/*.yml now name v4); we train the v5
# ids gymnasium 1.x makes (same bodies and rewards; v5 fixed some
# observation and contact details), so the published returns are a
# reference, not a row of the same task. Atari: the zoo's
# `BreakoutNoFrameskip-v4`/`PongNoFrameskip-v4` with SB3's AtariWrapper
# and 4 stacked frames; ours with `snt.envs.atari` (training=True), both
# evaluated on `snt.envs.atari(task)` (whole games, unclipped scores).
_SAC_MUJOCO = dict(learning_starts=10_000)
_TD3_MUJOCO = dict(learning_starts=10_000, noise_type="normal",
                   noise_std=0.1, train_freq=1, gradient_steps=1,
                   learning_rate=1e-3, batch_size=256, net_arch=[400, 300])
_PPO_MUJOCO_POLICY = dict(log_std_init=-2, ortho_init=False,
                          activation_fn="relu",
                          net_arch=dict(pi=[256, 256], vf=[256, 256]))
_PPO_ATARI = dict(n_envs=8, n_steps=128, n_epochs=4, batch_size=256,
                  learning_rate="lin_2.5e-4", clip_range="lin_0.1",
                  vf_coef=0.5, ent_coef=0.01)
_DQN_ATARI = dict(buffer_size=10_000, learning_rate=1e-4, batch_size=32,
                  learning_starts=100_000, target_update_interval=1000,
                  train_freq=4, gradient_steps=1, exploration_fraction=0.1,
                  exploration_final_eps=0.01)
ZOO_ROWS += [
    ZooRow("sac", "HalfCheetah-v5", 9535.451, 1_000_000, 150, _SAC_MUJOCO),
    ZooRow("sac", "Hopper-v5", 2325.547, 1_000_000, 236, _SAC_MUJOCO),
    ZooRow("sac", "Walker2d-v5", 3863.203, 1_000_000, 150, _SAC_MUJOCO),
    ZooRow("td3", "HalfCheetah-v5", 9655.666, 1_000_000, 150, _TD3_MUJOCO),
    ZooRow("td3", "Hopper-v5", 3606.390, 1_000_000, 150, _TD3_MUJOCO),
    ZooRow("td3", "Walker2d-v5", 4717.823, 1_000_000, 150, _TD3_MUJOCO),
    ZooRow("ppo", "HalfCheetah-v5", 5819.099, 1_000_000, 150, dict(
        normalize=True, n_envs=1, batch_size=64, n_steps=512, gamma=0.98,
        learning_rate=2.0633e-05, ent_coef=0.000401762, clip_range=0.1,
        n_epochs=20, gae_lambda=0.92, max_grad_norm=0.8, vf_coef=0.58096,
        **_PPO_MUJOCO_POLICY)),
    ZooRow("ppo", "Hopper-v5", 2410.435, 1_000_000, 150, dict(
        normalize=True, n_envs=1, batch_size=32, n_steps=512, gamma=0.999,
        learning_rate=9.80828e-05, ent_coef=0.00229519, clip_range=0.2,
        n_epochs=5, gae_lambda=0.99, max_grad_norm=0.7, vf_coef=0.835671,
        **_PPO_MUJOCO_POLICY)),
    ZooRow("ppo", "Walker2d-v5", 3478.798, 1_000_000, 171, dict(
        normalize=True, n_envs=1, batch_size=32, n_steps=512, gamma=0.99,
        learning_rate=5.05041e-05, ent_coef=0.000585045, clip_range=0.1,
        n_epochs=20, gae_lambda=0.95, max_grad_norm=1, vf_coef=0.871923)),
    ZooRow("ppo", "BreakoutNoFrameskip-v4", 398.033, 10_000_000, 60,
           _PPO_ATARI),
    ZooRow("ppo", "PongNoFrameskip-v4", 20.989, 10_000_000, 90, _PPO_ATARI),
    ZooRow("dqn", "BreakoutNoFrameskip-v4", 358.327, 10_000_000, 55,
           _DQN_ATARI),
    ZooRow("dqn", "PongNoFrameskip-v4", 20.602, 10_000_000, 88, _DQN_ATARI),
]
BY_NAME = {row.name: row for row in ZOO_ROWS}


def is_atari(task: str) -> bool:
  """An Atari game (ale-py's ids)."""
  return task.endswith("NoFrameskip-v4") or task.startswith("ALE/")


def has_in_graph(task: str) -> bool:
  """Whether `task` has an in-graph version (`snt.envs.make(...,
  in_graph=True)`); MuJoCo and Atari step in Python only."""
  make_module = importlib.import_module("sonnet_like.envs.make")
  return task in make_module.IN_GRAPH_ENVIRONMENTS


def env_of(task: str, training: bool = False) -> Any:
  """What `snt.envs.make` takes for `task`: its id, or for an Atari game a
  factory of `snt.envs.atari(task, training=training)` (training: lost
  lives end episodes, rewards clipped; evaluation: whole games, scores)."""
  if is_atari(task):
    return functools.partial(snt.envs.atari, task, training=training)
  return task


# ---- Ours. ----

def _greedy(scenario: Any):
  """The trained policy's greedy actions for a batch of observations."""
  if isinstance(scenario, snt.scenarios.DQN):
    return scenario.greedy
  return scenario.act


def evaluate(act, task: str, seed: int, num_episodes: int) -> np.ndarray:
  """Returns of `num_episodes` gymnasium episodes of `act` (our loop), one
  on each of as many environments, from the starts of `eval_seed(seed)`."""
  env = snt.envs.make(env_of(task), num_envs=num_episodes,
                      seed=eval_seed(seed))
  played = episodes.EpisodeRunner(env, act, num_episodes)(
      seed=eval_seed(seed))
  return played["return"]


def with_changes(recipe: snt.scenarios.Recipe,
                 changes: dict[str, Any]) -> snt.scenarios.Recipe:
  """`recipe` with `changes` (its fields, e.g. learning_rate or hidden, or
  scenario settings)."""
  fields = {f.name for f in dataclasses.fields(recipe)}
  settings = dict(recipe.settings)
  settings.update({k: v for k, v in changes.items() if k not in fields})
  return dataclasses.replace(
      recipe, settings=settings,
      **{k: v for k, v in changes.items() if k in fields})


def run_folder(save_dir: str, row: ZooRow, mode: str, seed: int,
               steps: int | None, changes: dict[str, Any]) -> str:
  """The folder of one run of ours under `save_dir`: named by everything
  that changes its training."""
  name = f"{row.name}-{mode}-seed{seed}"
  if steps is not None:
    name += f"-steps{steps}"
  for key, value in sorted(changes.items()):
    name += f"-{key}={value}".replace(" ", "").replace("/", "_")
  return os.path.join(save_dir, name)


def train_ours(row: ZooRow, mode: str, seed: int, steps: int | None,
               steps_per_call: int, changes: dict[str, Any] | None = None,
               save_dir: str | None = None) -> tuple[float, Any]:
  """Trains our recipe for `row` (with `changes`); (wall seconds, the
  scenario). With `save_dir` the run is kept in its `run_folder`, and a
  finished one there is restored instead (the seconds then are those of
  the call that finished its training, from `zoo.json` there)."""
  changes = changes or {}
  folder = save_dir and run_folder(save_dir, row, mode, seed, steps, changes)
  tf.random.set_seed(seed)
  return _trained(row, changes, dict(seed=seed), folder, steps,
                  steps_per_call, seed, mode == "in_graph")


def _trained(row: ZooRow, changes: dict[str, Any], who: dict[str, Any],
             folder: str | None, steps: int | None, steps_per_call: int,
             env_seed: int, in_graph: bool) -> tuple[float, Any]:
  """Trains our recipe for `row` (with `changes`) as `who` (`seed=` or
  `population=`) on `row`'s environment, kept in `folder` if given;
  (wall seconds, the scenario). `zoo.json` in the folder keeps the
  seconds of the call that finished the training (a restored run reports
  those)."""
  scenario_type = getattr(snt.scenarios, row.algo.upper())
  recipe = with_changes(scenario_type.recipe(row.task), changes)
  overrides = dict(who, progress=False, eval_every=None)
  record = None
  if folder:
    overrides.update(save_dir=folder, tensorboard=False)
    record = os.path.join(folder, "zoo.json")
  if steps is not None:
    overrides["num_env_steps"] = steps
  if row.algo != "ppo":
    overrides["steps_per_call"] = steps_per_call
  start = time.perf_counter()
  scenario = recipe.scenario(**overrides)
  # The recipe's training environment: PPO's Atari games in workers.
  env = snt.envs.make(recipe.env(training=True),
                      num_envs=recipe.settings.get("num_envs", 1),
                      seed=env_seed, in_graph=in_graph)
  if row.algo == "dqn":
    scenario(recipe.q_network(), recipe.optimizer(), env)
  else:
    actor, critic = recipe.networks()
    scenario(actor, critic, recipe.optimizer(), env)
  seconds = time.perf_counter() - start
  if record and os.path.exists(record):  # Restored: its training's time.
    with open(record, encoding="utf-8") as f:
      seconds = json.load(f)["seconds"]
  elif record:
    with open(record, "w", encoding="utf-8") as f:
      json.dump(dict(seconds=seconds), f)
  return seconds, scenario


def population_folder(save_dir: str, row: ZooRow, mode: str, seeds: list[int],
                      steps: int | None, changes: dict[str, Any]) -> str:
  """The folder of one population of ours under `save_dir`."""
  folder = run_folder(save_dir, row, mode, 0, steps, changes)
  return folder.replace("-seed0", "-population" + "_".join(map(str, seeds)),
                        1)


def train_population(row: ZooRow, mode: str, seeds: list[int],
                     steps: int | None, steps_per_call: int,
                     changes: dict[str, Any] | None = None,
                     save_dir: str | None = None) -> tuple[float, Any]:
  """Trains our recipe for `row` once per seed of `seeds`, as one
  population on the in-graph environment or (`mode` "gym") on gymnasium's,
  each member stepping its own copy; (wall seconds, the scenario).
  `save_dir` as in `train_ours` (the checkpoint holds every member)."""
  changes = changes or {}
  folder = save_dir and population_folder(save_dir, row, mode, seeds, steps,
                                          changes)
  # No global seed: each member's build runs under its own seed (and a
  # solo run's `tf.random.set_seed(seed)` is what its `seed=` sets too).
  return _trained(row, changes, dict(population=list(seeds)), folder, steps,
                  steps_per_call, seeds[0], mode == "in_graph")


def evaluate_members(scenario: Any, task: str, num_episodes: int
                     ) -> list[float]:
  """Each member's greedy mean return, evaluated as `evaluate` evaluates
  the solo run of its seed: inside `scenario.as_member(i)` the scenario
  plays member i's networks (its normaliser and environment too)."""
  returns = []
  for i, seed in enumerate(scenario.population.seeds):
    with scenario.as_member(i):
      returns.append(float(np.mean(
          evaluate(_greedy(scenario), task, seed, num_episodes))))
  return returns


# ---- Stable-Baselines3. ----

def _schedule(value: Any) -> Any:
  """The zoo's "lin_<x>": a rate falling linearly from x to 0."""
  if isinstance(value, str) and value.startswith("lin_"):
    start = float(value[4:])
    return lambda progress_remaining: progress_remaining * start
  return value


def sb3_model(row: ZooRow, seed: int) -> Any:
  """An SB3 model with the zoo's hyperparameters for `row`."""
  # PyTorch imports Triton (GPU kernels) lazily; its extension crashed the
  # process (SIGSEGV) when loaded after TensorFlow (torch 2.14, triton
  # 3.8). On CPU it is never used: make `import triton` fail instead.
  sys.modules.setdefault("triton", None)
  import stable_baselines3 as sb3  # pylint: disable=g-import-not-at-top
  from stable_baselines3.common import env_util  # pylint: disable=g-import-not-at-top
  from stable_baselines3.common import noise  # pylint: disable=g-import-not-at-top
  import torch  # pylint: disable=g-import-not-at-top
  # One intra-op thread for the small MLPs: with TensorFlow's pools in the
  # same process on a 2-core machine, PyTorch's OpenMP threads spin-waited
  # (SB3's DQN on CartPole ran over 15 minutes); they gain nothing from
  # two. The Atari CNN does: 4,096 steps of PPO Breakout took 14.1-15.6 s
  # on one thread, 9.3-10.5 s on two (quiet 2-core machine), so SB3 gets
  # every core there, as ours does.
  torch.set_num_threads(os.cpu_count() if is_atari(row.task) else 1)
  settings = dict(row.sb3)
  n_envs = settings.pop("n_envs", 1)
  policy_kwargs = {}
  if "net_arch" in settings:
    policy_kwargs["net_arch"] = settings.pop("net_arch")
  for name in ("log_std_init", "ortho_init"):
    if name in settings:
      policy_kwargs[name] = settings.pop(name)
  if "activation_fn" in settings:
    policy_kwargs["activation_fn"] = {
        "relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}[
            settings.pop("activation_fn")]
  normalize = settings.pop("normalize", False)
  for name in ("learning_rate", "clip_range"):
    if name in settings:
      settings[name] = _schedule(settings[name])
  policy = "MlpPolicy"
  if is_atari(row.task):  # The zoo's AtariWrapper and frame_stack 4.
    from stable_baselines3.common import vec_env  # pylint: disable=g-import-not-at-top
    import ale_py  # pylint: disable=g-import-not-at-top
    import gymnasium  # pylint: disable=g-import-not-at-top
    gymnasium.register_envs(ale_py)
    env = vec_env.VecFrameStack(
        env_util.make_atari_env(row.task, n_envs=n_envs, seed=seed), 4)
    policy = "CnnPolicy"
  else:
    env = env_util.make_vec_env(row.task, n_envs=n_envs, seed=seed)
  if normalize:  # The zoo's `normalize: true`: observations and rewards.
    from stable_baselines3.common import vec_env  # pylint: disable=g-import-not-at-top
    env = vec_env.VecNormalize(env, gamma=settings.get("gamma", 0.99))
  if "noise_type" in settings:
    kind, std = settings.pop("noise_type"), settings.pop("noise_std")
    size = env.action_space.shape[0]
    make = (noise.NormalActionNoise if kind == "normal"
            else noise.OrnsteinUhlenbeckActionNoise)
    settings["action_noise"] = make(np.zeros(size), std * np.ones(size))
  algo = getattr(sb3, row.algo.upper())
  return algo(policy, env, seed=seed, policy_kwargs=policy_kwargs or None,
              verbose=0, **settings)


def train_sb3(row: ZooRow, seed: int, steps: int | None
              ) -> tuple[float, Any]:
  model_start = time.perf_counter()
  model = sb3_model(row, seed)
  model.learn(total_timesteps=steps or row.budget)
  seconds = time.perf_counter() - model_start
  normalizer = model.get_vec_normalize_env()
  if normalizer is not None:
    normalizer.training = False  # Frozen statistics for evaluation.

  def act(observation):
    space = snt.envs.make(env_of(row.task), num_envs=1).action_space
    dtype = tf.int32 if isinstance(space, snt.envs.Discrete) else tf.float32
    shape = [None] + list(getattr(space, "shape", ()))

    def predict(o):
      if normalizer is not None:
        o = normalizer.normalize_obs(o)
      return model.predict(o, deterministic=True)[0].astype(
          dtype.as_numpy_dtype)
    action = tf.numpy_function(predict, [observation], dtype)
    action.set_shape(shape)
    return action
  return seconds, act


# ---- The loop and the table. ----

def run(args) -> list[dict[str, Any]]:
  results = []
  for name in args.rows:
    row = BY_NAME[name]
    scenario_type = getattr(snt.scenarios, row.algo.upper())
    contenders = []
    try:
      scenario_type.recipe(row.task)
      contenders += list(args.modes)
    except ValueError:
      print(f"{name}: no recipe of ours ({scenario_type.__name__}.recipe); "
            f"skipped", flush=True)
    if "in_graph" in contenders and not has_in_graph(row.task):
      contenders.remove("in_graph")
      print(f"{name}: no in-graph environment (it steps in Python); "
            f"in_graph skipped", flush=True)
    if args.sb3:
      contenders.append("sb3")
    for contender in contenders:
      if args.population and contender != "sb3":
        result = run_population(args, row, contender)
        results.append(result)
        continue
      seeds = args.seeds
      if args.population and contender == "sb3":
        seeds = args.seeds[:args.sb3_seeds]
      for seed in seeds:
        if contender == "sb3":
          seconds, act = train_sb3(row, seed, args.steps)
          steps = args.steps or row.budget
        else:
          seconds, scenario = train_ours(row, contender, seed, args.steps,
                                         args.steps_per_call, args.set,
                                         args.save_dir)
          act, steps = _greedy(scenario), scenario.num_env_steps
        num_episodes = args.eval_episodes or row.eval_episodes
        returns = evaluate(act, row.task, seed, num_episodes)
        result = dict(row=name, contender=contender, seed=seed,
                      changes=args.set if contender != "sb3" else {},
                      env_steps=steps, seconds=round(seconds, 2),
                      mean_return=float(np.mean(returns)),
                      eval_episodes=num_episodes,
                      zoo_return=row.zoo_return, zoo_budget=row.budget)
        print(json.dumps(result), flush=True)
        results.append(result)
        if args.out:
          with open(args.out, "a", encoding="utf-8") as out:
            out.write(json.dumps(result) + "\n")
  return results


def run_population(args, row: ZooRow, mode: str) -> dict[str, Any]:
  """Trains `row`'s seeds as one population on `mode`'s environments,
  evaluates every member; its JSON line (printed, and appended to
  `--out`)."""
  seconds, scenario = train_population(row, mode, args.seeds, args.steps,
                                       args.steps_per_call, args.set,
                                       args.save_dir)
  num_episodes = args.eval_episodes or row.eval_episodes
  returns = evaluate_members(scenario, row.task, num_episodes)
  summary = snt.scenarios.summarize(returns)
  result = dict(row=row.name, contender="population", mode=mode,
                seeds=list(args.seeds), changes=args.set,
                env_steps=scenario.num_env_steps, seconds=round(seconds, 2),
                member_returns=returns, mean_return=summary.mean,
                iqm=summary.iqm, ci=[summary.low, summary.high],
                worst=summary.min, eval_episodes=num_episodes,
                zoo_return=row.zoo_return, zoo_budget=row.budget)
  print(json.dumps(result), flush=True)
  if args.out:
    with open(args.out, "a", encoding="utf-8") as out:
      out.write(json.dumps(result) + "\n")
  return result


def _population_cell(runs: list[dict[str, Any]], row: ZooRow) -> str:
  """Mean, IQM [95% CI], worst over the members; the population's time."""
  cells = []
  for run_ in runs:
    summary = snt.scenarios.summarize(run_["member_returns"])
    steps = run_["env_steps"]
    at = "" if steps == row.budget else f" at {steps:,} steps"
    where = {"gym": "gymnasium", "in_graph": "in-graph"}[
        run_.get("mode", "in_graph")]
    cells.append(
        f"{where}: mean {summary.mean:.1f}, IQM {summary.iqm:.1f} "
        f"[{summary.low:.1f}, {summary.high:.1f}], worst {summary.min:.1f} "
        f"({summary.count} seeds{at}) in {run_['seconds']:.1f} s")
  return "; ".join(cells)


def table(results: list[dict[str, Any]]) -> str:
  """Markdown: per row, each contender's mean and worst return over seeds
  and mean wall time, beside the zoo's return."""
  contenders = [c for c in ("gym", "in_graph", "population", "sb3")
                if any(r["contender"] == c for r in results)]
  head = ("| row (zoo budget) | zoo return | " +
          " | ".join({"gym": "ours, gymnasium", "in_graph": "ours, in-graph",
                      "population": "ours, one population",
                      "sb3": "SB3 (same run)"}[c] for c in contenders) + " |")
  lines = [head, "|" + "---|" * (2 + len(contenders))]
  for name in dict.fromkeys(r["row"] for r in results):
    row = BY_NAME[name]
    cells = []
    for contender in contenders:
      runs = [r for r in results
              if r["row"] == name and r["contender"] == contender]
      if not runs:
        cells.append("-")
        continue
      if contender == "population":
        cells.append(_population_cell(runs, row))
        continue
      returns = [r["mean_return"] for r in runs]
      seconds = statistics.mean(r["seconds"] for r in runs)
      steps = runs[0]["env_steps"]
      at = "" if steps == row.budget else f" at {steps:,} steps"
      cells.append(f"{statistics.mean(returns):.1f} (worst {min(returns):.1f}"
                   f", {len(runs)} seeds{at}) in {seconds:.1f} s")
    lines.append(f"| {name} ({row.budget // 1000}k) | {row.zoo_return:.1f} | "
                 + " | ".join(cells) + " |")
  return "\n".join(lines)


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  parser.add_argument("--rows", default=",".join(BY_NAME),
                      help="comma-separated, e.g. dqn-CartPole-v1")
  parser.add_argument("--seeds", type=int, default=3,
                      help="seeds 0..N-1 (or --seed_list)")
  parser.add_argument("--seed_list", type=int, nargs="+")
  parser.add_argument("--modes",
                      help="gym and/or in_graph (default: both; in_graph "
                           "with --population); none (with --sb3) trains "
                           "Stable-Baselines3 only")
  parser.add_argument("--population", type=int,
                      help="train N seeds (0..N-1, or --seed_list) as one "
                           "population (in-graph by default; --modes gym: "
                           "on gymnasium environments)")
  parser.add_argument("--sb3_seeds", type=int, default=3,
                      help="with --population: SB3 trains the first N "
                           "seeds")
  parser.add_argument("--steps", type=int, help="override every budget")
  parser.add_argument("--eval_episodes", type=int,
                      help="override every row's evaluation episodes")
  parser.add_argument("--save_dir",
                      help="keep our runs here; restore finished ones")
  parser.add_argument("--steps_per_call", type=int, default=100,
                      help="off-policy scenario steps per compiled call")
  parser.add_argument("--sb3", action="store_true",
                      help="also train Stable-Baselines3 (zoo settings)")
  parser.add_argument("--set", action="append", default=[],
                      metavar="NAME=VALUE",
                      help="change our recipes (a Python literal), e.g. "
                           "--set gamma=0.98 --set hidden='(64, 64)'")
  parser.add_argument("--out", help="append one JSON line per run here")
  parser.add_argument("--table", help="print the table of a --out file")
  args = parser.parse_args(argv)
  if args.table:
    with open(args.table, encoding="utf-8") as f:
      print(table([json.loads(line) for line in f if line.strip()]))
    return
  args.set = {name: ast.literal_eval(value) for name, value in
              (item.split("=", 1) for item in args.set)}
  args.rows = args.rows.split(",")
  unknown = [r for r in args.rows if r not in BY_NAME]
  if unknown:
    parser.error(f"unknown rows {unknown}; rows: {sorted(BY_NAME)}")
  if args.modes is None:
    args.modes = "in_graph" if args.population else "gym,in_graph"
  args.modes = [] if args.modes == "none" else args.modes.split(",")
  if not set(args.modes) <= {"gym", "in_graph"}:
    parser.error(f"--modes takes gym and/or in_graph, got {args.modes}")
  if args.population is not None:
    if args.population < 1:
      parser.error(f"--population takes a positive count, got "
                   f"{args.population}")
    if args.seed_list and len(args.seed_list) != args.population:
      parser.error(f"--population {args.population} with "
                   f"{len(args.seed_list)} seeds in --seed_list")
    args.seeds = args.population
  if not args.modes and not args.sb3:
    parser.error("--modes none trains nothing of ours: add --sb3")
  args.seeds = args.seed_list or list(range(args.seeds))
  print(table(run(args)))


if __name__ == "__main__":
  main()
