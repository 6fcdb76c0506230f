"""Environments for the RL scenarios: batched, stepped by TensorFlow ops."""

# pylint: disable=g-bad-import-order
from sonnet_like.envs.base import ActionSpace
from sonnet_like.envs.base import Box
from sonnet_like.envs.base import Discrete
from sonnet_like.envs.base import Environment
from sonnet_like.envs.base import TimeStep
# --- envs: cartpole, guess, gymnasium adapter, make ---
from sonnet_like.envs.cartpole import CartPole
from sonnet_like.envs.guess import Guess
from sonnet_like.envs.gym_adapter import GymEnvironment
from sonnet_like.envs.make import make
# --- envs: pendulum ---
from sonnet_like.envs.pendulum import Pendulum
# --- envs: acrobot, mountain car, the in-graph base ---
from sonnet_like.envs.acrobot import Acrobot
from sonnet_like.envs.in_graph import InGraphEnvironment
from sonnet_like.envs.mountain_car import MountainCar
from sonnet_like.envs.mountain_car import MountainCarContinuous
# --- envs: atari ---
from sonnet_like.envs.atari import atari
# --- envs: stepping in worker processes ---
from sonnet_like.envs.make import InWorkers

__all__ = [
    "ActionSpace",
    "Box",
    "Discrete",
    "Environment",
    "TimeStep",
    # --- envs: cartpole, guess, gymnasium adapter, make ---
    "CartPole",
    "Guess",
    "GymEnvironment",
    "make",
    # --- envs: pendulum ---
    "Pendulum",
    # --- envs: acrobot, mountain car, the in-graph base ---
    "Acrobot",
    "InGraphEnvironment",
    "MountainCar",
    "MountainCarContinuous",
    # --- envs: atari ---
    "atari",
    # --- envs: stepping in worker processes ---
    "InWorkers",
]
