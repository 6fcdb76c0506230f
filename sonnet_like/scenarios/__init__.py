"""Scenarios: classes that own the training loop.

`Scenario` is the engine (compiled steps, hooks, checkpoints with exact
resume, NaN guard, tf.distribute); `Supervised` trains on (inputs, targets);
`schedules` holds the step schedules (learning-rate warm-up and decays).
"""

from sonnet_like.scenarios.run_folder.checkpointing import Checkpointer
from sonnet_like.scenarios.dry_run import DryRunError
from sonnet_like.scenarios.compiled.guard import NonFiniteError
from sonnet_like.scenarios.engine import Scenario
from sonnet_like.scenarios.gan import evaluation as gan_eval
from sonnet_like.scenarios.gan import losses as gan_losses
from sonnet_like.scenarios.gan.scenario import GAN
from sonnet_like.scenarios.run_folder.history import History
from sonnet_like.scenarios.run_folder.history import plot
from sonnet_like.scenarios.run_folder.load import load_weights
from sonnet_like.scenarios.reporting.csv_logger import CSVLogger
from sonnet_like.scenarios.reporting.logger import Logger
from sonnet_like.scenarios.reporting.mlflow_logger import MLflowLogger
from sonnet_like.scenarios.hooks import EarlyStopping
from sonnet_like.scenarios.hooks import Hook
from sonnet_like.scenarios.compiled.precision import Precision
from sonnet_like.scenarios.reporting.progress import ProgressBar
from sonnet_like.scenarios.rl.ppo import PPO
from sonnet_like.scenarios.rl.recipes import Recipe
from sonnet_like.scenarios.rl.reinforce import REINFORCE
from sonnet_like.scenarios.rl.dqn import DQN
from sonnet_like.scenarios.rl.evaluation import evaluate_policy
from sonnet_like.scenarios.rl.sac import SAC
from sonnet_like.scenarios.rl.td3 import TD3
from sonnet_like.scenarios.run_folder.run_settings import ResumeSettingsError
from sonnet_like.scenarios import schedules
from sonnet_like.scenarios.supervised import Supervised
from sonnet_like.scenarios.reporting.tensorboard import TensorBoard
from sonnet_like.scenarios.reporting.distribution import Distribution
from sonnet_like.scenarios.reporting.distribution import summarize
from sonnet_like.scenarios.reporting.distribution import table as summary_table
from sonnet_like.scenarios.population.settings import Population

__all__ = [
    "CSVLogger",
    "Checkpointer",
    "DQN",
    "Distribution",
    "DryRunError",
    "EarlyStopping",
    "GAN",
    "History",
    "Hook",
    "Logger",
    "MLflowLogger",
    "NonFiniteError",
    "PPO",
    "Population",
    "Precision",
    "SAC",
    "ProgressBar",
    "REINFORCE",
    "Recipe",
    "ResumeSettingsError",
    "Scenario",
    "Supervised",
    "TD3",
    "TensorBoard",
    "evaluate_policy",
    "gan_eval",
    "gan_losses",
    "load_weights",
    "plot",
    "schedules",
    "summarize",
    "summary_table",
]
